"""Known differences of RNN, GRU and LSTM: the spec's equations evaluated in a chosen numpy type (_recurrent_in),
and recurrent_rounding_atol, the tolerance test_recurrent_properties.py allows for nxrt's order of summation."""

import numpy as np

from .common import Difference


_RECURRENT_DEFAULT_ACTIVATIONS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}


# Activation name -> (default alpha, default beta), None where the activation takes no such value: the defaults of
# the ONNX operators of the same names, as the spec says.
_ACTIVATION_DEFAULTS = {"relu": (None, None), "tanh": (None, None), "sigmoid": (None, None),
                        "affine": (1.0, 0.0), "leakyrelu": (0.01, None), "thresholdedrelu": (1.0, None),
                        "scaledtanh": (1.0, 1.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, None),
                        "softsign": (None, None), "softplus": (None, None)}


def _activation(name, alpha, beta):
    """The activation `name` (lower case) with its alpha and beta, as numpy math in its argument's type."""
    functions = {
        "relu": lambda x: np.maximum(x, 0.0),
        "tanh": np.tanh,
        "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
        "affine": lambda x: alpha * x + beta,
        "leakyrelu": lambda x: np.where(x >= 0, x, alpha * x),
        "thresholdedrelu": lambda x: np.where(x > alpha, x, 0.0),
        "scaledtanh": lambda x: alpha * np.tanh(beta * x),
        "hardsigmoid": lambda x: np.clip(alpha * x + beta, 0.0, 1.0),
        "elu": lambda x: np.where(x >= 0, x, alpha * (np.exp(x) - 1.0)),
        "softsign": lambda x: x / (1.0 + np.abs(x)),
        "softplus": lambda x: np.logaddexp(x, 0.0),
    }
    return functions[name]


def _recurrent_activations(op, attrs, directions):
    """Per direction, the list of the cell's activation functions: the given names (one list used for both
    directions when only one is given), each taking the next activation_alpha / activation_beta value if it uses
    one, else its operator's default."""
    names = list(attrs.get("activations") or _RECURRENT_DEFAULT_ACTIVATIONS[op] * directions)
    per_direction = len(_RECURRENT_DEFAULT_ACTIVATIONS[op])
    if len(names) == per_direction and directions == 2:
        names = names * 2
    alphas, betas = list(attrs.get("activation_alpha", [])), list(attrs.get("activation_beta", []))
    functions = []
    for name in names:
        key = name.lower()
        alpha, beta = _ACTIVATION_DEFAULTS[key]
        if alpha is not None:  # float attributes: float32 values, defaults too
            alpha = float(np.float32(alphas.pop(0) if alphas else alpha))
        if beta is not None:
            beta = float(np.float32(betas.pop(0) if betas else beta))
        functions.append(_activation(key, alpha, beta))
    return [functions[d * per_direction:(d + 1) * per_direction] for d in range(directions)]


def _ieee_products(a, b):
    """a [rows, k] times b [columns, k] transposed, each product formed as IEEE defines it (NaN * 0 is NaN; numpy's
    BLAS matmul skips zero weights)."""
    return (a[:, None, :] * b[None, :, :]).sum(axis=-1)


def _recurrent_in(compute, op, inputs, attrs):
    """RNN, GRU and LSTM by the spec's equations, every step in the numpy type `compute`, not rounded to X's type.
    Steps at and past sequence_lens[b] leave the state as it is and write zeros to Y (the reverse pass starts at
    the last valid step), so Y_h and Y_c hold the state of the last valid step, the initial state for a length
    of 0. An LSTM with input_forget couples the gates as f = 1 - i. clip bounds the input of f and g (not h's,
    which is the cell state)."""
    padded = list(inputs) + [None] * (8 - len(inputs))
    x, w, r, bias, lengths, initial_h, initial_c, peepholes = [
        None if a is None else a if a.dtype.kind in "iu" else a.astype(compute) for a in padded]
    layout = attrs.get("layout", 0)
    if layout:
        x = x.swapaxes(0, 1)
        initial_h = None if initial_h is None else initial_h.swapaxes(0, 1)
        initial_c = None if initial_c is None else initial_c.swapaxes(0, 1)
    steps, batch = x.shape[:2]
    hidden = attrs["hidden_size"]
    direction = attrs.get("direction", "forward")
    directions = 2 if direction == "bidirectional" else 1
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    activations = _recurrent_activations(op, attrs, directions)
    clip = float(np.float32(attrs.get("clip", 0.0)))
    clipped = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    y = np.zeros((steps, directions, batch, hidden), compute)
    y_h, y_c = np.zeros((directions, batch, hidden), compute), np.zeros((directions, batch, hidden), compute)
    with np.errstate(all="ignore"):
        for d in range(directions):
            f = activations[d]
            w_d, r_d = w[d], r[d]
            b = bias[d] if bias is not None else np.zeros(2 * gates * hidden, compute)
            wb, rb = np.split(b, 2)
            h = initial_h[d].copy() if initial_h is not None else np.zeros((batch, hidden), compute)
            c = initial_c[d].copy() if initial_c is not None else np.zeros((batch, hidden), compute)
            p = peepholes[d] if peepholes is not None else np.zeros(3 * hidden, compute)
            for step in range(steps):
                t = steps - 1 - step if direction == "reverse" or d == 1 else step
                active = np.ones(batch, bool) if lengths is None else t < lengths
                x_part = _ieee_products(x[t], w_d) + wb
                h_part = _ieee_products(h, r_d) + rb
                if op == "RNN":
                    new_h, new_c = f[0](clipped(x_part + h_part)), c
                elif op == "GRU":
                    xz, xr, xh = np.split(x_part, 3, axis=-1)
                    hz, hr, hh = np.split(h_part, 3, axis=-1)
                    z, reset = f[0](clipped(xz + hz)), f[0](clipped(xr + hr))
                    r_h, rb_h = np.split(r_d, 3)[2], np.split(rb, 3)[2]
                    if attrs.get("linear_before_reset", 0):
                        candidate = f[1](clipped(xh + reset * (_ieee_products(h, r_h) + rb_h)))
                    else:
                        candidate = f[1](clipped(xh + _ieee_products(reset * h, r_h) + rb_h))
                    new_h, new_c = (1 - z) * candidate + z * h, c
                else:
                    pi, po, pf = np.split(p, 3)
                    xi, xo, xf, xc = np.split(x_part + h_part, 4, axis=-1)
                    i = f[0](clipped(xi + pi * c))
                    forget = 1 - i if attrs.get("input_forget", 0) else f[0](clipped(xf + pf * c))
                    new_c = forget * c + i * f[1](clipped(xc))
                    o = f[0](clipped(xo + po * new_c))
                    new_h = o * f[2](new_c)
                h = np.where(active[:, None], new_h, h)
                c = np.where(active[:, None], new_c, c)
                y[t, d] = np.where(active[:, None], new_h, 0.0)
            y_h[d], y_c[d] = h, c
    if layout:
        y, y_h, y_c = y.transpose(2, 0, 1, 3), y_h.swapaxes(0, 1), y_c.swapaxes(0, 1)
    return [y, y_h, y_c][:3 if op == "LSTM" else 2]


def _recurrent_by_the_spec(op, opset, inputs, attrs):
    """The spec's equations in float64, rounded once to X's type."""
    with np.errstate(all="ignore"):
        return [o.astype(inputs[0].dtype) for o in _recurrent_in(np.float64, op, inputs, attrs)]


def recurrent_rounding_atol(op, inputs, attrs):
    """nxrt's float32 cells (which also serve float16 and bfloat16) and float64 cells add a gate's terms in
    another order than numpy, so where terms cancel a result keeps only the absolute accuracy of the sum, which
    steps and gates pass on. Its size for this case: 16 times the largest difference between the spec's
    equations evaluated with every step in nxrt's compute type (float32, or float64) and in a wider one
    (float64, or x86's 80-bit long double). None when the narrower evaluation overflows where the wider does not:
    the spec fixes no order for the sums, which then decides between +-inf and NaN."""
    narrow = np.float64 if inputs[0].dtype == np.float64 else np.float32
    wide = np.longdouble if narrow == np.float64 else np.float64
    with np.errstate(all="ignore"):
        pairs = zip(_recurrent_in(narrow, op, inputs, attrs), _recurrent_in(wide, op, inputs, attrs))
        largest = 0.0
        for a, b in pairs:
            a, b = a.astype(wide), b.astype(wide)
            if (np.isfinite(a) != np.isfinite(b)).any() or (np.isnan(a) != np.isnan(b)).any():
                return None
            both = np.isfinite(a) & np.isfinite(b)
            if both.any():
                largest = max(largest, float(np.abs(a - b)[both].max()))
    return 16 * largest


def _reference_wrong_for_recurrent(op):
    """Whether a case uses what the reference's RNN, GRU or LSTM leaves out (sequence_lens, clip, input_forget,
    activations other than the defaults, activation_alpha / beta), is a sequence of length 0 (the reference
    fails), or multiplies a non-finite value in its matrix products (X, W, R and the states)."""
    def applies(opset, inputs, attrs):
        names = [name.lower() for name in attrs.get("activations", [])]
        defaults = [name.lower() for name in _RECURRENT_DEFAULT_ACTIVATIONS[op]]
        ignored = (len(inputs) > 4 and inputs[4] is not None) or bool(attrs.get("clip")) or bool(
            attrs.get("input_forget")) or any(n != d for n, d in zip(names, defaults * 2))
        products = [a for i, a in enumerate(inputs) if i in (0, 1, 2, 5, 6) and a is not None]
        non_finite = any(not np.isfinite(a.astype(np.float64)).all() for a in products)
        return (ignored or non_finite or "activation_alpha" in attrs or "activation_beta" in attrs
                or inputs[0].shape[attrs.get("layout", 0)] == 0)
    return applies


DIFFERENCES = [
    *[Difference(
        op,
        "The reference ignores sequence_lens, clip and input_forget (\"TODO: support overridden attributes\"), "
        "runs GRU and LSTM with the default activations whatever `activations` says, knows only Tanh and Affine "
        "for RNN (taking activation_alpha per direction, not per activation), fails on a sequence of length 0, "
        "and its matrix products (numpy's BLAS) skip zero weights, so NaN or inf times 0 gives 0 there where "
        "IEEE gives NaN. Compared with the spec's equations in float64, every product formed: the activations "
        "with the next activation_alpha / activation_beta value for those that take one (defaults: the ONNX "
        "operators'), clip on the input of f "
        "and g, LSTM input_forget as f = 1 - i, and for sequence_lens (the spec is silent past a sequence's end) "
        "zeros in Y and the last valid state in Y_h / Y_c, the initial state for a length of 0. onnxruntime "
        "agrees except for a length of 0, where its Y_h and Y_c are 0, and refuses layout 1.",
        _reference_wrong_for_recurrent(op),
        _recurrent_by_the_spec,
    ) for op in ("RNN", "GRU", "LSTM")],
]
