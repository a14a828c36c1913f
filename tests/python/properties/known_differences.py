"""Cases where onnx.reference.ReferenceEvaluator is wrong, each with the reason, and what the property tests
compare nxrt against there instead. The spec decides; where it is silent the reference does, unless its result is
a documented bug of the reference (listed here). onnxruntime's answer for the same case is noted beside it."""

import math
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Difference:
    op: str
    reason: str
    applies: Callable  # (opset, inputs, attrs) -> bool
    expected: Callable  # (op, opset, inputs, attrs) -> list of arrays


# Rules for every element-wise op (property_harness.reference_in_float), the second also for reductions:
# - The reference fails on some rank-0 inputs (Softsign: "return arrays must be of ArrayType"), so element-wise ops
#   are evaluated on their inputs broadcast and flattened to one dimension, the result reshaped.
# - For float16 and bfloat16 the reference computes in the half type step by step (numpy float16 arithmetic,
#   ml_dtypes' bfloat16), rounding after each operation: Gelu(-2) in float16 is -0.04544 there, 2 ulps from the
#   value rounded once (-0.0455); near the subnormal range the steps lose most of the digits (HardSwish(-3.05e-5)
#   in float16, Mish(1.2e-38) in bfloat16). The spec defines the math on the values; nxrt computes in float32 and
#   rounds once. Oracle: the reference on float32 copies of the inputs, rounded to the half type once.
#   onnxruntime also computes half types in float32.


def _erf_through_float64(op, opset, inputs, attrs):
    """math.erf of each element in float64, converted to the input's type (toward zero for integers)."""
    x = inputs[0]
    values = np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)) if x.size else x.astype(np.float64)
    return [values.astype(x.dtype).reshape(x.shape)]


def _hard_swish_exact(op, opset, inputs, attrs):
    x = inputs[0]
    with np.errstate(all="ignore"):
        return [(x * np.clip(x / 6 + 0.5, 0, 1)).astype(x.dtype)]


def _gelu_float64(op, opset, inputs, attrs):
    x = inputs[0]
    if not x.size:
        return [x.copy()]
    with np.errstate(all="ignore"):
        if attrs.get("approximate", "none") == "tanh":
            inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)
            return [0.5 * x * (1.0 + np.tanh(inner))]
        erf = np.vectorize(math.erf, otypes=[np.float64])
        return [(0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).reshape(x.shape)]


def _saturated(values, dtype):
    """float64 values converted toward zero into integer `dtype`, saturating at its range, NaN to 0 (nxrt's
    conversion wherever an integer op computes in float)."""
    info = np.iinfo(dtype)
    values = np.asarray(values, np.float64)
    out = np.zeros(values.shape, dtype)
    high, low = values >= float(info.max), values <= float(info.min)
    out[high], out[low] = info.max, info.min
    inside = ~(high | low | np.isnan(values))
    out[inside] = values[inside].astype(dtype)
    return out


def _reduction_axes(op, opset, inputs, attrs):
    """The axes a Reduce* case reduces, as a tuple (empty with noop_with_empty_axes: only the per-element transform
    applies, as in the reference)."""
    x = inputs[0]
    axes_input = opset >= (13 if op == "ReduceSum" else 18)
    axes = (inputs[1].tolist() if len(inputs) > 1 and inputs[1] is not None else None) if axes_input else \
        attrs.get("axes")
    if not axes:
        return () if axes_input and attrs.get("noop_with_empty_axes", 0) else tuple(range(x.ndim))
    return tuple(a % x.ndim for a in axes)


def _log_sum_exp(v, axes, keep):
    """log(sum(exp(v))) over `axes`, shifted by the largest finite value (so 710 stays 710 and +inf gives +inf)."""
    finite = np.where(np.isfinite(v), v, -np.inf)
    shift = np.max(finite, axis=axes, keepdims=True, initial=-np.inf) if v.size else np.zeros_like(
        np.sum(v, axis=axes, keepdims=True))
    shift = np.where(np.isfinite(shift), shift, 0.0)
    with np.errstate(all="ignore"):
        out = np.log(np.sum(np.exp(v - shift), axis=axes, keepdims=True)) + shift
    return out if keep else np.squeeze(out, axis=axes)


def _exact_integer_mean(op, opset, inputs, attrs):
    """The mean of integers exactly (Python integers), truncated toward zero; 0 for an empty set."""
    x = inputs[0]
    axes = _reduction_axes(op, opset, inputs, attrs)
    keep = bool(attrs.get("keepdims", 1))
    sums = np.sum(x.astype(object), axis=axes, keepdims=keep) if axes else x.astype(object)
    count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    mean = np.vectorize(lambda t: 0 if count == 0 else (abs(int(t)) // count) * (1 if int(t) >= 0 else -1),
                        otypes=[object])(sums) if np.size(sums) else np.asarray(sums)
    return [np.asarray(mean).astype(x.dtype).reshape(np.shape(sums))]


def _reduce_in_float64(reduce):
    """An integer reduction computed on float64 values by `reduce(values, axes, keepdims)` and converted back as
    _saturated does."""
    def expected(op, opset, inputs, attrs):
        x = inputs[0]
        axes = _reduction_axes(op, opset, inputs, attrs)
        with np.errstate(all="ignore"):
            values = reduce(x.astype(np.float64), axes, bool(attrs.get("keepdims", 1)))
        return [_saturated(values, x.dtype)]
    return expected


def _reference_result_as(op, opset, inputs, attrs, dtype):
    from property_harness import node_model, run_reference

    results = run_reference(node_model(op, opset, inputs, attrs), inputs)
    return [r.astype(dtype) for r in results]


def _rank0_through_rank1(op, opset, inputs, attrs):
    """A reduction of a rank-0 input, evaluated by the reference as the same value reduced from shape [1]."""
    from property_harness import reference_in_float

    case = [inputs[0].reshape(1), *inputs[1:]]  # a rank-0 input reduces over no axis or all: the same on [1]
    return [r.reshape(()) for r in reference_in_float(op, opset, case, attrs, 1, "")]


def _trilu_strings(op, opset, inputs, attrs):
    x = inputs[0]
    k = int(inputs[1]) if len(inputs) > 1 and inputs[1] is not None else 0
    rows, cols = x.shape[-2:]
    keep = np.triu(np.ones((rows, cols), bool), k) if attrs.get("upper", 1) else np.tril(np.ones((rows, cols), bool), k)
    out = np.where(keep, x, "").astype(object)
    return [out.reshape(x.shape)]


def _coerced_through_the_reference(op, inputs, attrs):
    """Softmax / Hardmax before opset 13 on half types: the reference's opset-13 op along the last axis of the
    spec's coerced 2-D input (it rounds every step in the half type, as nxrt's half Softmax does)."""
    from property_harness import node_model, run_reference

    x = inputs[0]
    axis = attrs.get("axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    flat = x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), int(np.prod(x.shape[axis:], dtype=np.int64)))
    if flat.size == 0:
        return [x.copy()]
    return [r.reshape(x.shape) for r in run_reference(node_model(op, 13, [flat], {"axis": 1}), [flat])]


def _softmax_family_by_the_spec(op, opset, inputs, attrs):
    """Softmax, LogSoftmax and Hardmax as the spec defines them, in float64 (float32 for half types), rounded once:
    from opset 13 along the single `axis` (default -1); before, on the input coerced to 2-D
    [a_0 * ... * a_(k-1), a_k * ... * a_(n-1)] at `axis` (default 1, which may equal the rank). LogSoftmax is
    (x - max) - log(sum(exp(x - max)))."""
    x = inputs[0]
    if op != "LogSoftmax" and opset < 13 and x.dtype.itemsize == 2:
        return _coerced_through_the_reference(op, inputs, attrs)
    wide = x.astype(np.float32 if x.dtype.itemsize == 2 else np.float64)
    if opset >= 13:
        axis = attrs.get("axis", -1) % x.ndim
        wide = np.moveaxis(wide, axis, -1)
        moved = wide.shape
        wide = wide.reshape(int(np.prod(moved[:-1], dtype=np.int64)), moved[-1]) if wide.ndim else wide.reshape(1, 1)
    else:
        axis = attrs.get("axis", 1)
        axis = axis + x.ndim if axis < 0 else axis
        wide = wide.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), int(np.prod(x.shape[axis:], dtype=np.int64)))
    rows = wide.shape[0]
    with np.errstate(all="ignore"):
        if op == "Hardmax":
            out = np.zeros_like(wide)
            if wide.size:
                out[np.arange(rows), np.argmax(wide, axis=1)] = 1
        else:
            shifted = wide - np.max(wide, axis=1, keepdims=True, initial=-np.inf)
            if op == "Softmax":
                e = np.exp(shifted)
                out = e / np.sum(e, axis=1, keepdims=True)
            else:
                out = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    if opset >= 13:
        out = np.moveaxis(out.reshape(moved), -1, attrs.get("axis", -1) % x.ndim) if x.ndim else out.reshape(())
    with np.errstate(all="ignore"):  # -inf and overflow round to the half type's infinities
        return [out.astype(x.dtype).reshape(x.shape)]


def _flattened(x, axis):
    axis = axis + x.ndim if axis < 0 else axis
    return [x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), int(np.prod(x.shape[axis:], dtype=np.int64)))]


def _prelu_by_the_spec(op, opset, inputs, attrs):
    x, slope = inputs
    with np.errstate(all="ignore"):
        return [np.where(x >= 0, x, x * slope).astype(x.dtype)]


def _pow_integer_base(op, opset, inputs, attrs):
    """Integer bases: integer exponents exactly, modulo 2^bits (two's complement, as C's unsigned arithmetic);
    float exponents in float64, converted toward zero and saturated to the type's range, NaN to 0."""
    base, exponent = inputs
    shape = np.broadcast_shapes(base.shape, exponent.shape)
    info, bits = np.iinfo(base.dtype), 8 * base.dtype.itemsize
    values = []
    for x, y in zip(np.broadcast_to(base, shape).ravel().tolist(), np.broadcast_to(exponent, shape).ravel().tolist()):
        if exponent.dtype.kind in "iu":
            v = pow(int(x), int(y), 1 << bits)
            values.append(v - (1 << bits) if info.min < 0 and v > info.max else v)
            continue
        with np.errstate(all="ignore"):
            f = float(np.power(np.float64(x), np.float64(y)))
        values.append(0 if math.isnan(f) else info.max if f >= info.max else info.min if f <= info.min else int(f))
    return [np.array(values, dtype=base.dtype).reshape(shape)]


def _shrink_saturating(op, opset, inputs, attrs):
    """Shrink of integers computed as the reference's numpy promotion does (float32 up to 16 bits, float64
    above) and converted back saturating to the type's range instead of wrapping."""
    x, lambd, bias = inputs[0], np.float32(attrs.get("lambd", 0.5)), np.float32(attrs.get("bias", 0.0))
    v = x.astype(np.float32 if x.dtype.itemsize <= 2 else np.float64)
    r = np.where(v < -lambd, v + bias, np.where(v > lambd, v - bias, 0.0))
    info = np.iinfo(x.dtype)
    # float64(info.max) rounds up past the range for 64-bit types: those saturate to max explicitly.
    out = np.where(r >= float(info.max), info.max, np.where(r <= float(info.min), info.min, 0)).astype(x.dtype)
    inside = (r < float(info.max)) & (r > float(info.min))
    out[inside] = r[inside].astype(x.dtype)
    return [out]


def _sequence_insert_at_end(op, opset, inputs, attrs):
    """The sequence with the tensor inserted before `position` (at the end for position = length)."""
    sequence, tensor, position = inputs
    result = list(sequence)
    result.insert(int(position), tensor)
    return [result]


def _optional_by_the_spec(opset, inputs):
    """The outputs of the property test's optional graphs: [None] -> has_element of an empty optional; [x, sequence]
    -> has / get of Optional(x) and Optional(sequence), then (opset 18) has of x, of an omitted input, get of x."""
    if inputs[0] is None:
        return [np.array(False)]
    x, sequence = inputs
    outputs = [np.array(True), np.array(True), x, sequence]
    return outputs + ([np.array(True), np.array(False), x] if opset >= 18 else [])


def _wrapped_to(values, dtype):
    """Python integers wrapped modulo 2^bits into integer `dtype` (two's complement)."""
    bits = 8 * np.dtype(dtype).itemsize
    signed = np.dtype(dtype).kind == "i"
    wrapped = [v % (1 << bits) for v in values]
    return np.array([v - (1 << bits) if signed and v >= 1 << (bits - 1) else v for v in wrapped], dtype=dtype)


def _gemm_integer_terms(inputs, attrs):
    """alpha * A'B' and beta * C of an integer Gemm (whole multipliers) as lists of Python integers, with C
    broadcast to [M, N]."""
    a, b = inputs[0], inputs[1]
    a = (a.T if attrs.get("transA", 0) else a).astype(object)
    b = (b.T if attrs.get("transB", 0) else b).astype(object)
    rows, cols = a.shape[0], b.shape[1]
    product = [sum((int(a[i, p]) * int(b[p, j]) for p in range(a.shape[1])), 0)
               for i in range(rows) for j in range(cols)]
    c = inputs[2] if len(inputs) > 2 else None
    added = np.broadcast_to(c, (rows, cols)).ravel().tolist() if c is not None else [0] * (rows * cols)
    alpha, beta = int(attrs.get("alpha", 1.0)), int(attrs.get("beta", 1.0))
    return [alpha * v for v in product], [beta * int(v) for v in added], (rows, cols)


def _gemm_integer_leaves_float64(opset, inputs, attrs):
    """Whether the reference's float64 route for an integer Gemm is inexact: a term beyond 2^53 or a result
    outside the type."""
    if inputs[0].dtype.kind not in "iu":
        return False
    scaled, added, _ = _gemm_integer_terms(inputs, attrs)
    info = np.iinfo(inputs[0].dtype)
    return any(abs(s) > 2 ** 53 or abs(c) > 2 ** 53 or not info.min <= s + c <= info.max
               for s, c in zip(scaled, added))


def _gemm_integer_wrapped(op, opset, inputs, attrs):
    scaled, added, shape = _gemm_integer_terms(inputs, attrs)
    return [_wrapped_to([s + c for s, c in zip(scaled, added)], inputs[0].dtype).reshape(shape)]


def _product_by_the_formula(a, b):
    """numpy.matmul of float arrays as element-wise products summed (1-D operands promoted and the added dim
    removed), without BLAS."""
    left = a[None, :] if a.ndim == 1 else a
    right = b[:, None] if b.ndim == 1 else b
    with np.errstate(all="ignore"):
        product = (left[..., :, :, None] * right[..., None, :, :]).sum(axis=-2)
    if a.ndim == 1:
        product = product[..., 0, :]
    return product[..., 0] if b.ndim == 1 else product


def _zero_meets_non_finite(opset, inputs, attrs):
    """Whether a zero of one float operand meets a NaN or an infinity of the other."""
    a, b = inputs[0], inputs[1]
    if a.dtype.kind in "iu":
        return False
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return bool((not np.isfinite(a64).all() and (b64 == 0).any()) or (not np.isfinite(b64).all() and (a64 == 0).any()))


def _matmul_by_the_formula(op, opset, inputs, attrs):
    """MatMul by _product_by_the_formula, half types in float32 rounded once."""
    a, b = inputs
    wide = np.float32 if a.dtype.itemsize == 2 else a.dtype
    with np.errstate(all="ignore"):
        return [_product_by_the_formula(a.astype(wide), b.astype(wide)).astype(a.dtype)]


def _gemm_by_the_formula(op, opset, inputs, attrs):
    """Y = alpha * A' B' + beta * C by _product_by_the_formula, with beta * C for every beta (0 * NaN is NaN),
    half types in float32 rounded once."""
    a, b = inputs[0], inputs[1]
    wide = np.float32 if a.dtype.itemsize == 2 else a.dtype
    a = (a.T if attrs.get("transA", 0) else a).astype(wide)
    b = (b.T if attrs.get("transB", 0) else b).astype(wide)
    alpha, beta = (np.array(np.float32(attrs.get(name, 1.0)), wide) for name in ("alpha", "beta"))
    with np.errstate(all="ignore"):
        y = _product_by_the_formula(a, b) * alpha
        if len(inputs) > 2:
            y = y + inputs[2].astype(wide) * beta
        return [y.astype(inputs[0].dtype)]


def _gemm_zero_beta_keeps_c(opset, inputs, attrs):
    c = inputs[2] if len(inputs) > 2 else None
    return (c is not None and attrs.get("beta", 1.0) == 0 and inputs[0].dtype.kind not in "iu"
            and not np.isfinite(c.astype(np.float64)).all())


def _matmul_integer_per_row(op, opset, inputs, attrs):
    """MatMulInteger with a 1-D a_zero_point as the spec's per-row vector ([M] applies along A's rows)."""
    a, b = inputs[0].astype(np.int64), inputs[1].astype(np.int64)
    a_zero = inputs[2] if len(inputs) > 2 else None
    b_zero = inputs[3] if len(inputs) > 3 else None
    if a_zero is not None:
        a = a - (a_zero.astype(np.int64).reshape(-1, 1) if a_zero.ndim == 1 else a_zero.astype(np.int64))
    if b_zero is not None:
        b = b - b_zero.astype(np.int64)
    return [np.matmul(a, b).astype(np.int32)]


def _contrib_spec(function_name):
    """The contrib spec's float64 form of a com.microsoft op (contrib_spec.py), as a Difference's expected."""
    def expected(op, opset, inputs, attrs):
        import contrib_spec

        return getattr(contrib_spec, function_name)(op.rsplit(".", 1)[-1], inputs, attrs)
    return expected


def _ml_reference(op, inputs, attrs, outputs=1, opset=1):
    """The reference's results for an ai.onnx.ml case (`op` without its domain)."""
    from property_harness import node_model, run_reference

    return run_reference(node_model(op, opset, inputs, attrs, outputs, domain="ai.onnx.ml"), inputs)


def _scaler_in_float64(op, opset, inputs, attrs):
    """Scaler: the reference on float64 copies (at least 1-D), converted to float32 once in the input's shape."""
    x = inputs[0]
    result = _ml_reference("Scaler", [x.astype(np.float64).reshape(x.shape or (1,))], attrs)[0]
    with np.errstate(all="ignore"):  # beyond float32's range: +-inf
        return [result.astype(np.float32).reshape(x.shape)]


def _as_rows(x):
    """x as rows of its last dimension, [-1, C] (a rank-0 x: one row of one)."""
    columns = x.shape[-1] if x.ndim else 1
    return x.reshape(int(np.prod(x.shape[:-1], dtype=np.int64)) if x.ndim else 1, columns)


def _normalizer_divisors(x, norm):
    """Each row's divisor in float64 by the norm's formula: max |x|, sum |x| or sqrt(sum x^2) (NaN in a row: NaN)."""
    rows = _as_rows(x).astype(np.float64)
    with np.errstate(all="ignore"):
        if norm == "MAX":
            return np.max(np.abs(rows), axis=1, initial=0.0) if rows.shape[1] else np.zeros(len(rows))
        if norm == "L1":
            return np.sum(np.abs(rows), axis=1)
        return np.sqrt(np.sum(rows * rows, axis=1))


def _normalizer_by_the_spec(op, opset, inputs, attrs):
    x = inputs[0]
    rows = _as_rows(x).astype(np.float64)
    divisors = _normalizer_divisors(x, attrs.get("norm", "MAX"))[:, None]
    with np.errstate(all="ignore"):
        out = np.where(divisors == 0, rows, rows / np.where(divisors == 0, 1.0, divisors))
    return [out.astype(np.float32).reshape(x.shape)]


def _normalizer_reference_wrong(opset, inputs, attrs):
    """Where the reference's Normalizer differs from the formula: not float32 [N, C], a divisor under its 1e-30
    floor, a NaN row under MAX (np.max propagates it, as the formula does, but the floor hides 0 * inf) or a
    float32 sum of squares / of magnitudes that overflows where the float64 one does not."""
    x = inputs[0]
    if x.dtype != np.float32 or x.ndim != 2 or x.size == 0:
        return True
    norm = attrs.get("norm", "MAX")
    exact = _normalizer_divisors(x, norm)
    with np.errstate(all="ignore"):  # the reference's float32 divisors
        magnitudes = np.abs(x)
        in_float32 = (np.max(magnitudes, axis=1) if norm == "MAX" else np.sum(magnitudes, axis=1) if norm == "L1"
                      else np.sqrt(np.sum(x * x, axis=1))).astype(np.float64)
        off = ~((in_float32 == exact) | (np.abs(in_float32 - exact) <= 1e-6 * np.abs(exact)))
    finite = np.isfinite(x).all(axis=1)
    return bool(((exact > 0) & (exact < 1e-30)).any() or (finite & off).any())


def _imputer_on_rows(op, opset, inputs, attrs):
    """Imputer of any rank: the reference on the input as rows of its last dimension ([-1, C]), reshaped back."""
    x = inputs[0]
    return [_ml_reference("Imputer", [_as_rows(x)], attrs)[0].reshape(x.shape)]


def _feature_vectorizer_rows(op, opset, inputs, attrs):
    """The reference with each 1-D input given as the spec's [1, C], its result converted to float32."""
    rows = [a.reshape(1, -1) if a.ndim == 1 else a for a in inputs]
    return [_ml_reference("FeatureVectorizer", rows, attrs)[0].astype(np.float32)]


def _one_hot_by_the_spec(op, opset, inputs, attrs):
    """One column per listed category (a repeated category: its last column); numbers truncated toward zero to
    int64 first, NaN, infinities and values outside int64 matching none."""
    x = inputs[0]
    categories = attrs.get("cats_strings") or attrs.get("cats_int64s")
    column = {c: i for i, c in enumerate(categories)}
    out = np.zeros((x.size, len(categories)), np.float32)
    for i, v in enumerate(x.ravel().tolist()):
        if isinstance(v, float):
            v = int(v) if math.isfinite(v) and abs(v) < 2.0 ** 63 else None
        if v in column:
            out[i, column[v]] = 1.0
    return [out.reshape(*x.shape, len(categories))]


def _tensor_attribute_values(tensor):
    """A TensorProto's elements as a list; strings read from the proto itself (numpy's bytes arrays drop a
    string's trailing NULs)."""
    from onnx import TensorProto, numpy_helper

    if tensor.data_type == TensorProto.STRING:
        return [s.decode("utf-8") for s in tensor.string_data]
    return numpy_helper.to_array(tensor).ravel().tolist()


def _label_encoder_keys_and_values(attrs):
    """LabelEncoder's key and value lists from its keys_* / values_* attributes."""
    def pick(prefix):
        for suffix in ("strings", "int64s", "floats"):
            if f"{prefix}_{suffix}" in attrs:
                return list(attrs[f"{prefix}_{suffix}"])
        return _tensor_attribute_values(attrs[f"{prefix}_tensor"])
    return pick("keys"), pick("values")


def _label_encoder_default(attrs, dtype):
    if "default_tensor" in attrs:
        return _tensor_attribute_values(attrs["default_tensor"])[0]
    if dtype == object:
        return attrs.get("default_string", "_Unused")
    if dtype.kind == "f":
        return attrs.get("default_float", -0.0)
    return attrs.get("default_int64", -1)


def _label_encoder_by_the_spec(op, opset, inputs, attrs):
    """Look-up by value, the last of repeated keys winning; NaN matches a NaN key; at opset 2 (bit-wise
    comparison) -0.0 and 0.0 are different keys, from opset 4 the same one."""
    x = inputs[0]
    keys, values = _label_encoder_keys_and_values(attrs)
    out_dtype = _label_encoder_value_dtype(attrs)

    def canonical(v):
        if isinstance(v, float):
            if math.isnan(v):
                return "nan"
            if v == 0 and opset < 4:
                return ("zero", math.copysign(1.0, v))
            return v + 0.0
        return v
    table = {canonical(k): v for k, v in zip(keys, values)}
    default = _label_encoder_default(attrs, out_dtype)
    found = [table.get(canonical(v), default) for v in x.ravel().tolist()]
    return [np.array(found, dtype=out_dtype).reshape(x.shape)]


def _label_encoder_value_dtype(attrs):
    if "values_tensor" in attrs:
        from onnx import numpy_helper

        return numpy_helper.to_array(attrs["values_tensor"]).dtype
    return np.dtype({"values_strings": object, "values_int64s": np.int64, "values_floats": np.float32}[
        next(k for k in attrs if k.startswith("values_"))])


def _label_encoder_reference_wrong(opset, inputs, attrs):
    """The reference never matches a NaN key, matches -0.0 with 0.0 at opset 2, fails without default_tensor and
    loses the trailing NULs of strings in tensor attributes (numpy bytes)."""
    x = inputs[0]
    if opset >= 4 and "values_tensor" in attrs and "default_tensor" not in attrs:
        return True
    tensors = [attrs[name] for name in ("keys_tensor", "values_tensor", "default_tensor") if name in attrs]
    if any(v.endswith("\x00") for t in tensors if t.data_type == 8 for v in _tensor_attribute_values(t)):
        return True
    if x.dtype.kind != "f" or x.size == 0:
        return False
    keys, _ = _label_encoder_keys_and_values(attrs)
    has_nan = any(math.isnan(k) for k in keys) and bool(np.isnan(x).any())
    zeros = opset < 4 and any(k == 0 for k in keys) and bool((x == 0).any())
    return has_nan or zeros


def _one_sample_symmetric_window(opset, inputs, attrs):
    """A symmetric window of one sample in an integer output type (where the spec's window is NaN)."""
    integer_types = {2, 3, 4, 5, 6, 7, 12, 13}
    return attrs.get("periodic", 1) == 0 and int(inputs[0]) == 1 and attrs.get("output_datatype", 1) in integer_types


def _nan_window_as_integer(op, opset, inputs, attrs):
    from onnx.helper import tensor_dtype_to_np_dtype

    return [np.zeros(1, tensor_dtype_to_np_dtype(attrs["output_datatype"]))]


def _window_in_float64(op, opset, inputs, attrs):
    """The reference's window computed in float64 (output_datatype double), rounded once to the output type."""
    from onnx.helper import tensor_dtype_to_np_dtype
    from property_harness import node_model, run_reference

    wide = {**attrs, "output_datatype": 11}
    window = run_reference(node_model(op, opset, inputs, wide), inputs)[0]
    with np.errstate(all="ignore"):
        return [window.astype(tensor_dtype_to_np_dtype(attrs.get("output_datatype", 1)))]


def _cast_types(inputs, attrs):
    """(source, destination) numpy dtypes of a Cast case (attribute `to`) or a CastLike one (input target_type)."""
    from onnx.helper import tensor_dtype_to_np_dtype

    if len(inputs) > 1:
        return inputs[0].dtype, inputs[1].dtype
    return inputs[0].dtype, np.dtype(object) if attrs["to"] == 8 else np.dtype(tensor_dtype_to_np_dtype(attrs["to"]))


def _shortest_scientific(value, dtype):
    """The fewest significant digits, as "d.ddde+XX", that read back through float32 (float64 for float64) to the
    same value of `dtype`; a float8 value prints as the float32 it is."""
    import ml_dtypes

    if dtype in (np.float16, np.float32, np.float64) or dtype.itemsize == 1:
        kind = dtype.type if dtype in (np.float16, np.float32, np.float64) else np.float32
        return np.format_float_scientific(kind(value), unique=True, trim="-", exp_digits=2)
    for digits in range(17):  # bfloat16
        text = f"{value:.{digits}e}"
        if float(np.float32(float(text)).astype(ml_dtypes.bfloat16)) == value:
            return text
    raise AssertionError(f"no digits read back to {value}")


def _float_strings(op, opset, inputs, attrs):
    """Float elements as the spec's plain representation: the shortest round-trip digits of the value in its own
    type, positional for 1e-4 <= |x| < 1e16 and zero ("1024.0", "0.1", "-0.0"), scientific elsewhere ("1e+16",
    "6e-05"); "nan", "inf", "-inf"."""
    from decimal import Decimal

    x = inputs[0]
    out = []
    for value in x.astype(np.float64).ravel().tolist():
        if math.isnan(value) or math.isinf(value):
            out.append("nan" if math.isnan(value) else "inf" if value > 0 else "-inf")
            continue
        scientific = _shortest_scientific(value, x.dtype)
        number = Decimal(scientific)
        if number == 0 or Decimal("1e-4") <= abs(number) < Decimal("1e16"):
            text = format(number, "f")
            out.append(text if "." in text else text + ".0")
        else:
            out.append(scientific)
    return [np.array(out, dtype=object).reshape(x.shape)]


def _casts_to_string_from_float(opset, inputs, attrs):
    """A cast into string from float32, float16, bfloat16 or a float8 format (not float64: the reference is right
    there)."""
    source, to = _cast_types(inputs, attrs)
    return to == np.dtype(object) and source.name.startswith(("float16", "float32", "bfloat16", "float8"))


def _parsed_strings_through_the_reference(op, opset, inputs, attrs):
    """Strings parsed as Python floats (the spec's literals: "1e-5", "+INF", "nan" in any case), then the
    reference's Cast (or CastLike) from float64 with the same attributes."""
    from property_harness import node_model, run_reference

    x = inputs[0]
    floats = np.array([float(s) for s in x.ravel().tolist()], np.float64).reshape(x.shape)
    case = [floats, *inputs[1:]]
    node_attrs = attrs if op == "Cast" else {k: v for k, v in attrs.items() if k != "to"}
    return run_reference(node_model(op, opset, case, node_attrs), case)


def _strings_to_bool(op, opset, inputs, attrs):
    """nxrt's rule: "true" / "false" in any letter case, else the number the literal spells, nonzero (NaN too) is
    True."""
    def truth(text):
        return text.lower() == "true" or (text.lower() != "false" and float(text) != 0)

    x = inputs[0]
    return [np.array([truth(s) for s in x.ravel().tolist()], dtype=np.bool_).reshape(x.shape)]


def batch_norm_by_the_spec(opset, inputs, attrs, training, compute=None):
    """BatchNormalization by the spec's formulas, computed in `compute` (default float64) and rounded once to the
    output types: Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel (per channel and position for
    spatial 0 before opset 9), with the given statistics in inference mode and the batch's (population variance)
    in training mode, where the running statistics are input * momentum + batch * (1 - momentum) in the mean's
    type, and before opset 14 saved_mean / saved_var are the batch mean and variance."""
    x, scale, bias, mean, var = inputs
    compute = np.dtype(compute or np.float64)
    epsilon = compute.type(np.float32(attrs.get("epsilon", 1e-5)))
    momentum = compute.type(np.float32(attrs.get("momentum", 0.9)))
    spatial = attrs.get("spatial", 1) if opset < 9 else 1
    shape = (1, -1) + (1,) * (x.ndim - 2) if spatial else (1, *x.shape[1:])
    axes = (0, *range(2, x.ndim)) if spatial else (0,)
    wide = x.astype(compute)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statistics of no channels: empty, without numpy's warning
        if training:
            use_mean, use_var = wide.mean(axis=axes), wide.var(axis=axes)
        else:
            use_mean, use_var = mean.astype(compute), var.astype(compute)
        y = ((wide - use_mean.reshape(shape)) / np.sqrt(use_var.reshape(shape) + epsilon)
             * scale.astype(compute).reshape(shape) + bias.astype(compute).reshape(shape))
        outputs = [y.astype(x.dtype)]
        if training:
            outputs += [(mean.astype(compute) * momentum + use_mean * (1 - momentum)).astype(mean.dtype),
                        (var.astype(compute) * momentum + use_var * (1 - momentum)).astype(var.dtype)]
            if opset < 14:
                outputs += [use_mean.astype(x.dtype), use_var.astype(x.dtype)]
    return outputs


def _layer_norm_statistics_in_float(op, opset, inputs, attrs):
    """The reference's LayerNormalization (half types on float32 copies) with Y in X's type and Mean /
    InvStdDev in float32, the stash type; all three outputs (the test keeps those its node has)."""
    from property_harness import node_model, run_reference

    case = [a.astype(np.float32) if a.dtype.itemsize == 2 else a for a in inputs]
    y, mean, inv_std = run_reference(node_model(op, opset, case, attrs, 3), case)
    with np.errstate(all="ignore"):
        return [y.astype(inputs[0].dtype), mean.astype(np.float32), inv_std.astype(np.float32)]


def _rms_norm_in_scale_type(op, opset, inputs, attrs):
    """The reference's RMSNormalization with Y in the scale's type, on copies of X and the scale in float64 where
    either is float64, else in float32 (its Y in X's type would lose the range of a float64 scale)."""
    from property_harness import node_model, run_reference

    wide = np.float64 if np.float64 in (inputs[0].dtype, inputs[1].dtype) else np.float32
    case = [a.astype(wide) for a in inputs]
    with np.errstate(all="ignore"):
        return [run_reference(node_model(op, opset, case, attrs), case)[0].astype(inputs[1].dtype)]


def lp_norm_by_the_spec(inputs, attrs, compute=np.float64):
    """x / (sum(|x|^p))^(1/p) along `axis` (default -1) in `compute`, 0 where the norm is 0, rounded once."""
    x = inputs[0]
    p, axis = attrs.get("p", 2), attrs.get("axis", -1)
    wide = x.astype(compute)
    with np.errstate(all="ignore"):
        norm = np.sum(np.abs(wide) ** p, axis=axis, keepdims=True) ** (1.0 / p)
        return [np.where(norm == 0, 0, wide / norm).astype(x.dtype)]


def _window(name):
    """A function of window_oracles.py: the spec's pools, convolutions and LRN and the predicates of their known
    differences (imported on use, as it imports the harness)."""
    import window_oracles

    return getattr(window_oracles, name)


def _window_case(name, *args):
    """For an op, the window_oracles predicate `name` (op, opset, inputs, attrs) as a Difference's applies(opset,
    inputs, attrs); with `args`, `name` makes the predicate from them first (ceil_pad_beyond(2))."""
    def applies(op):
        return lambda opset, inputs, attrs: _window(name)(*args)(op, opset, inputs, attrs) if args else \
            _window(name)(op, opset, inputs, attrs)
    return applies


def _pool_by_the_spec(op, opset, inputs, attrs):
    """window_oracles' pool; "MaxPool with Indices" (MaxPool with its second output) gives [Y, Indices]."""
    kind = {"AveragePool": "average", "MaxPool": "max", "LpPool": "lp", "GlobalMaxPool": "max"}[op.split()[0]]
    if op == "GlobalMaxPool":
        attrs = {"kernel_shape": list(inputs[0].shape[2:])}
    y, indices, _ = _window("pool_by_the_spec")(kind, inputs[0], attrs, attrs.get("p", 2))
    return [y, indices] if op.endswith("Indices") else [y]


def _deform_conv_by_the_spec(op, opset, inputs, attrs):
    x, w, offset, b, mask = (list(inputs) + [None, None])[:5]
    return [_window("deform_conv_by_the_spec")(x, w, offset, b, mask, attrs)[0]]


_REFERENCE_DROPS_NAN = (
    "The reference marks pads with NaN and drops every NaN from a window, the input's included: AveragePool([1, "
    "NaN], kernel 2) is 1 there and LpPool([1, NaN], kernel 2, p 1) 2 (its LpPool is the non-NaN mean of |x|^p "
    "times the kernel size). The spec averages (or sums) the window's values: NaN, which nxrt and onnxruntime give.")


def _simple_case(text, upper):
    """Unicode's simple case mapping, code point by code point (Python's str.upper / str.lower use the full
    mapping, which turns some code points into several: those keep their simple mapping, "ß" -> "ß", "İ" -> "i")."""
    def one(c):
        mapped = c.upper() if upper else c.lower()
        return mapped if len(mapped) == 1 else ("i" if c == "\u0130" and not upper else c)
    return "".join(one(c) for c in text)


def _string_normalizer_by_the_spec(op, opset, inputs, attrs):
    """The elements that are not stop words (compared after lower-casing unless is_case_sensitive), case-changed;
    one empty string where none is left."""
    x = inputs[0]
    fold = (lambda w: w) if attrs.get("is_case_sensitive", 0) else (lambda w: _simple_case(w, upper=False))
    stops = {fold(w) for w in attrs.get("stopwords", [])}
    action = attrs.get("case_change_action", "NONE")
    kept = [w if action == "NONE" else _simple_case(w, upper=action == "UPPER")
            for w in x.ravel().tolist() if fold(w) not in stops] or [""]
    return [np.array(kept, dtype=object).reshape((len(kept),) if x.ndim == 1 else (1, len(kept)))]


def _string_split_rank0(op, opset, inputs, attrs):
    """The reference's split of the same string as shape [1], reshaped to the rank-0 input's outputs."""
    from property_harness import node_model, run_reference

    flat = [inputs[0].reshape(1)]
    pieces, counts = run_reference(node_model(op, opset, flat, attrs, outputs=2), flat)
    return [pieces.reshape(pieces.shape[1:]).astype(object), counts.reshape(())]


def _tfidf_with_unit_weights(op, opset, inputs, attrs):
    from property_harness import node_model, run_reference

    weighted = dict(attrs, weights=[1.0] * len(attrs["ngram_indexes"]))
    return run_reference(node_model(op, opset, inputs, weighted), inputs)


def _onnxruntime_float_layer_norm(op):
    """Where onnxruntime's float Skip(Simplified)LayerNormalization / EmbedLayerNormalization statistics go wrong
    (see the entries)."""
    def applies(opset, inputs, attrs):
        import contrib_spec

        if op == "EmbedLayerNormalization":
            rows, dtype = contrib_spec.embed_sums(inputs), inputs[2].dtype
        else:
            rows, dtype = contrib_spec.skip_norm_sums(op, inputs), inputs[0].dtype
        return contrib_spec.beyond_float_statistics(rows.reshape(-1, rows.shape[-1]), "Simplified" in op,
                                                    dtype != np.float16)
    return applies


def _regex_full_match_ascii_classes(op, opset, inputs, attrs):
    import re

    regex = re.compile(attrs["pattern"], re.ASCII)
    x = inputs[0]
    return [np.array([regex.fullmatch(v) is not None for v in x.ravel().tolist()], dtype=bool).reshape(x.shape)]


def _mel_with_float64_edges(op, opset, inputs, attrs):
    """The reference's MelWeightMatrix with the edge frequencies given as float64."""
    from property_harness import node_model, run_reference

    case = [*inputs[:3], *(a.astype(np.float64) for a in inputs[3:5])]
    return run_reference(node_model(op, opset, case, attrs), case)


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


def _loop_iterations(trip, first, conditions):
    """How many iterations the property test's Loop runs: with M and no cond, M (the body's condition is ignored);
    else none with a false first condition, and otherwise until the body's condition conditions[i] is false
    (iteration i included) or M, where given, is reached."""
    if first is None and trip is not None:
        return int(trip)
    if first is not None and not bool(first):
        return 0
    count = int(np.argmin(conditions)) + 1
    return count if trip is None else min(count, int(trip))


def _loop_stacked(op, opset, inputs, attrs):
    """The final state and the scan output [iterations, *state shape] ([0] when no iteration runs: the body's
    output shape is unknown), from the reference run with M = the number of iterations, cond true and every
    body condition true (the same values: the body's condition never reaches its state or scan output)."""
    from property_harness import node_model, run_reference

    trip, first, state, conditions, step = inputs
    iterations = _loop_iterations(trip, first, conditions)
    if iterations == 0:
        return [state, np.zeros((0,), state.dtype)]
    node_attrs = {k: v for k, v in attrs.items() if k != "node_inputs"}
    explicit = [np.array(iterations, np.int64), np.array(True), state, np.ones_like(conditions), step]
    model = node_model(op, opset, explicit, node_attrs, outputs=2, node_inputs=["x0", "x1", "x2"])
    final, scanned = run_reference(model, explicit)
    return [final, scanned.reshape((iterations, *state.shape))]


def _shape_by_the_spec(op, opset, inputs, attrs):
    """Shape's start and end as the spec clamps them: a negative one counts from the back, then into [0, rank]."""
    rank = inputs[0].ndim

    def clamped(value, default):
        value = default if value is None else value
        return min(max(value + rank if value < 0 else value, 0), rank)

    start, end = clamped(attrs.get("start"), 0), clamped(attrs.get("end"), rank)
    return [np.array(inputs[0].shape[start:max(start, end)], np.int64)]


def _gather_nd_by_the_spec(op, opset, inputs, attrs):
    """GatherND one index tuple at a time: output[batch..., position...] = data[batch..., *tuple]."""
    data, indices = inputs
    batch_dims, k = attrs.get("batch_dims", 0), indices.shape[-1]
    out = np.empty(indices.shape[:-1] + data.shape[batch_dims + k:], data.dtype)
    for position in np.ndindex(indices.shape[:-1]):
        out[position] = data[position[:batch_dims] + tuple(int(i) for i in indices[position])]
    return [out]


def _onnx_one_hot_by_the_spec(op, opset, inputs, attrs):
    """OneHot as the spec words it: depth and indices cast to int64 (toward zero); an index in [-depth, depth - 1]
    (from opset 11; [0, depth - 1] before) puts on_value at its class, every other position holds off_value."""
    indices, depth, values = inputs
    depth = int(depth.reshape(-1)[0].astype(np.float64)) if depth.dtype.kind not in "iu" else int(depth.reshape(-1)[0])
    axis = attrs.get("axis", -1)
    axis = axis + indices.ndim + 1 if axis < 0 else axis
    classes = np.array([int(v) for v in indices.astype(np.float64 if indices.dtype.kind not in "iu" else object)
                        .reshape(-1).tolist()], np.int64).reshape(indices.shape)
    if opset >= 11:
        classes = np.where(classes < 0, classes + depth, classes)
    depth_axis = np.arange(depth).reshape((1,) * axis + (depth,) + (1,) * (indices.ndim - axis))
    hot = np.expand_dims(classes, axis) == depth_axis
    return [np.where(hot, values[1:2], values[0:1]).astype(values.dtype)]


def _one_hot_arithmetic_is_inexact(values):
    """Whether the reference's indicator * (on - off) + off misses on_value or off_value, or cannot be computed."""
    if values.dtype == object or values.dtype == np.bool_:
        return True
    if values.dtype.kind in "iu":  # wraps modulo 2^bits both ways: exact
        return False
    off, on = values[0:1], values[1:2]
    with np.errstate(all="ignore"):
        gives_on, gives_off = (on - off) + off, (on - off) * 0 + off
    return not (np.array_equal(gives_on, on) and np.array_equal(gives_off, off))


def _unique_key(value):
    """Unique's equality and order: numbers ascending, -0.0 equal to 0.0, NaN after every number and equal to NaN
    (numpy.unique's equal_nan, which the reference gets on flattened inputs), strings by code point."""
    if isinstance(value, float):
        return (1, 0.0) if math.isnan(value) else (0, value + 0.0)
    return (0, value)


def _unique_by_the_spec(op, opset, inputs, attrs):
    """Unique's four outputs: the distinct elements (flattened) or slices along `axis` (compared element by element
    with _unique_key), sorted or in the order of their first occurrence, with first-occurrence indices, inverse
    indices and counts."""
    x, axis = inputs[0], attrs.get("axis")
    wide = x.astype(np.float64) if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else x
    if axis is None:
        keys = [(_unique_key(v),) for v in wide.reshape(-1).tolist()]
    else:
        moved = np.moveaxis(wide, axis % x.ndim, 0)
        keys = [tuple(_unique_key(v) for v in np.asarray(moved[i]).reshape(-1).tolist())
                for i in range(moved.shape[0])]
    first, counts = {}, {}
    for position, key in enumerate(keys):
        first.setdefault(key, position)
        counts[key] = counts.get(key, 0) + 1
    order = sorted(first) if attrs.get("sorted", 1) else sorted(first, key=first.get)
    place = {key: i for i, key in enumerate(order)}
    firsts = np.array([first[key] for key in order], np.int64)
    y = x.reshape(-1)[firsts] if axis is None else np.take(x, firsts, axis=axis)
    return [y, firsts, np.array([place[key] for key in keys], np.int64),
            np.array([counts[key] for key in order], np.int64)]


def _strings_zero_filled_empty(array):
    """A string result in which the reference wrote its numeric zero fill (the integer 0) where "" belongs."""
    if array.dtype != object:
        return array
    return np.array([v if isinstance(v, str) else "" for v in array.reshape(-1).tolist()], object).reshape(array.shape)


def _pad_widths(opset, inputs, attrs):
    """(begin, end) pads of every axis of a Pad case (the pads attribute before opset 11; the axes input from 18)."""
    x = inputs[0]
    pads = list(attrs["pads"]) if opset < 11 else inputs[1].tolist()
    axes = inputs[3].tolist() if len(inputs) > 3 and inputs[3] is not None else list(range(x.ndim))
    widths = [(0, 0)] * x.ndim
    for i, axis in enumerate(axes):
        widths[axis % x.ndim] = (pads[i], pads[i + len(axes)])
    return widths


def _pad_removing_first(op, opset, inputs, attrs):
    """Pad through the reference on the input cropped by the negative pads and padded by the positive ones, its
    string zero fill written as ""."""
    from property_harness import node_model, run_reference

    x = inputs[0]
    widths = _pad_widths(opset, inputs, attrs)
    kept = x[tuple(slice(max(-b, 0), d - max(-e, 0)) for d, (b, e) in zip(x.shape, widths))]
    added = [max(b, 0) for b, _ in widths] + [max(e, 0) for _, e in widths]
    if opset < 11:
        case, case_attrs = [kept], {**attrs, "pads": added}
    else:  # every axis's pads, so no axes input
        case, case_attrs = [kept, np.array(added, np.int64), *inputs[2:3]], attrs
    return [_strings_zero_filled_empty(r) for r in run_reference(node_model(op, opset, case, case_attrs), case)]


def _center_crop_pad_strings(op, opset, inputs, attrs):
    from property_harness import node_model, run_reference

    return [_strings_zero_filled_empty(r) for r in run_reference(node_model(op, opset, inputs, attrs), inputs)]


def _scatter_elements_nan_propagating(op, opset, inputs, attrs):
    """ScatterElements' max / min reduction with numpy.maximum / minimum (NaN from either side propagates)."""
    data, indices, updates = inputs
    axis = attrs.get("axis", 0) % data.ndim
    combine = np.maximum if attrs["reduction"] == "max" else np.minimum
    out = data.copy()
    for position in np.ndindex(indices.shape):
        target = tuple(int(indices[position]) if d == axis else i for d, i in enumerate(position))
        out[target] = combine(out[target], updates[position])
    return [out]


def _probit(values):
    """1.41421356 * erf^-1(2v - 1) by Winitzki's approximation, as the reference and onnxruntime compute it, with
    erf^-1(+-1) = +-inf (the limit; the reference returns 0 there)."""
    x = 2.0 * np.asarray(values, np.float64) - 1.0
    with np.errstate(all="ignore"):
        square = (1.0 - x) * (1.0 + x)
        log = np.log(square)
        a = 2.0 / (np.pi * 0.147) + 0.5 * log
        root = np.where(square == 0, np.inf, np.sqrt(-a + np.sqrt(a * a - log / 0.147)))
        return 1.41421356 * np.where(x < 0, -1.0, 1.0) * root


def _post_transformed(scores, post):
    """The reference's post-transforms (onnx.reference's _common_classifier) on rows of scores, in their type;
    PROBIT as _probit."""
    from onnx.reference.ops.aionnxml._common_classifier import expit, softmax, softmax_zero

    z = np.array(scores, copy=True)
    if z.size == 0 or post in (None, "NONE", 0):
        return z
    with np.errstate(all="ignore"):
        if post in ("LOGISTIC", 2):
            return expit(z)
        if post in ("SOFTMAX", 1):
            return softmax(z)
        if post in ("SOFTMAX_ZERO", 3):
            return softmax_zero(z)
        return _probit(z).astype(z.dtype)


def _linear_scores(x, attrs, count):
    """float64 scores of a linear model: x . coefficients[t] + intercepts[t] for each of `count` coefficient rows
    (intercepts zeros when omitted), as [N, count] for x [N, F] or [F]. The products are formed one by one: numpy's
    matrix product (BLAS) makes NaN * 0 zero, which IEEE arithmetic does not."""
    rows = (x.reshape(1, -1) if x.ndim == 1 else x).astype(np.float64)
    weights = np.array(attrs["coefficients"], np.float64).reshape(count, rows.shape[1])
    intercepts = np.array(attrs.get("intercepts") or [0.0] * count, np.float64)
    with np.errstate(all="ignore"):
        return np.sum(rows[:, None, :] * weights[None, :, :], axis=2) + intercepts


def _linear_regressor_in_float64(op, opset, inputs, attrs):
    """The spec's scores in float64 (_linear_scores), the reference's post-transform in float64, converted to
    float32 once."""
    scores = _linear_scores(inputs[0], attrs, attrs.get("targets", 1))
    with np.errstate(all="ignore"):
        return [_post_transformed(scores, attrs.get("post_transform", "NONE")).astype(np.float32)]


def _linear_classifier_in_float64(op, opset, inputs, attrs):
    """The spec's scores in float64 (_linear_scores; a single row with two class labels as [-s, s]), converted to
    float32 once; then as the reference continues for float32 inputs: the post-transform in float32 and the label,
    the argmax (the first NaN, else the first largest) or for one score column the threshold 0 (0.5 after a
    post-transform): the first label (1 without labels) at or above it, else 0 (or the empty string)."""
    x = inputs[0]
    post = attrs.get("post_transform", "NONE")
    classes = len(attrs["coefficients"]) // (x.shape[-1])
    labels = attrs.get("classlabels_ints") or attrs.get("classlabels_strings")
    scores = _linear_scores(x, attrs, classes)
    if classes == 1 and labels is not None and len(labels) == 2:
        scores = np.concatenate([-scores, scores], axis=1)
    with np.errstate(all="ignore"):
        scores = _post_transformed(scores.astype(np.float32), post)
        if scores.shape[1] > 1:
            label = [labels[i] if labels is not None else i for i in np.argmax(scores, axis=1)]
        else:
            positive = scores[:, 0] >= (0 if post == "NONE" else 0.5)
            label = [(labels[0] if labels is not None else 1) if p else (0 if labels is None or isinstance(
                labels[0], int) else "") for p in positive]
    string_labels = "classlabels_strings" in attrs
    return [np.array(label, dtype=object if string_labels else np.int64).reshape(len(scores)), scores]


def _tree_ensemble_by_the_spec(op, opset, inputs, attrs):
    """TreeEnsemble (opset 5): the reference on the input (float16: on a float32 copy, rounded once), after
    rewriting each BRANCH_NEQ node as the BRANCH_EQ node with swapped branches and inverted missing-value track
    (the same tree for every input, NaN included, where the reference's NEQ sends NaN true); targets no leaf
    reaches read 0 under MIN and MAX; then the post-transform."""
    from onnx import numpy_helper

    x = inputs[0]
    result_shape = (x.shape[0], attrs["n_targets"])
    if x.shape[0] == 0:
        return [np.zeros(result_shape, x.dtype)]
    fixed = {**attrs, "nodes_trueleafs": list(attrs["nodes_trueleafs"]),
             "nodes_falseleafs": list(attrs["nodes_falseleafs"])}
    modes = numpy_helper.to_array(attrs["nodes_modes"]).copy()
    if (modes == 5).any():
        neq = modes == 5
        modes[neq] = 4
        swap = {}
        for side in ("nodeids", "leafs"):
            true, false = list(attrs[f"nodes_true{side}"]), list(attrs[f"nodes_false{side}"])
            swap[f"nodes_true{side}"] = [f if n else t for t, f, n in zip(true, false, neq)]
            swap[f"nodes_false{side}"] = [t if n else f for t, f, n in zip(true, false, neq)]
        missing = list(attrs.get("nodes_missing_value_tracks_true") or [0] * len(modes))
        fixed.update(swap, nodes_modes=numpy_helper.from_array(modes),
                     nodes_missing_value_tracks_true=[1 - m if n else m for m, n in zip(missing, neq)])
    # A one-leaf tree (a root whose both branches are one leaf): the reference reads the leaf at the root's node
    # index instead of the one named; given as a root over that leaf and a copy of it.
    weights = numpy_helper.to_array(attrs["leaf_weights"])
    targets, false_ids = list(attrs["leaf_targetids"]), list(fixed["nodes_falsenodeids"])
    for root in attrs["tree_roots"]:
        if fixed["nodes_trueleafs"][root] and fixed["nodes_falseleafs"][root] and \
                fixed["nodes_truenodeids"][root] == false_ids[root]:
            weights = np.append(weights, weights[false_ids[root]])
            targets.append(targets[false_ids[root]])
            false_ids[root] = len(targets) - 1
    fixed.update(leaf_weights=numpy_helper.from_array(weights), leaf_targetids=targets, nodes_falsenodeids=false_ids)
    wide = x.astype(np.float32) if x.dtype == np.float16 else x
    result = _ml_reference("TreeEnsemble", [wide], fixed, opset=opset)[0]
    if attrs.get("aggregate_function", 1) in (2, 3):  # the targets some leaf reaches: a count of them above 0
        ones = numpy_helper.from_array(np.ones(len(targets), weights.dtype))
        counted = {**fixed, "leaf_weights": ones, "aggregate_function": 1}
        result[_ml_reference("TreeEnsemble", [wide], counted, opset=opset)[0] == 0] = 0
    with np.errstate(all="ignore"):
        return [_post_transformed(result.astype(np.float64), attrs.get("post_transform", 0)).astype(x.dtype)]


def _scatter_nd_strings_by_code_point(op, opset, inputs, attrs):
    """ScatterND's max / min reduction of strings by code point (Python's order), element by element."""
    data, indices, updates = inputs
    out = data.copy()
    for position in np.ndindex(indices.shape[:-1]):
        target = tuple(int(i) for i in indices[position])
        current, update = np.asarray(out[target], object), np.asarray(updates[position], object)
        keep = (update < current) if attrs["reduction"] == "max" else (current < update)
        out[target] = np.where(keep, current, update)
    return [out]


def _reference_resize_unclipped(opset, inputs, attrs):
    """The reference's Resize at `opset`, its float results converted to the input type as IEEE rounding does
    (it clips them to the type's finite range first, so +-inf becomes +-max); integers as it converts them.
    cubic_coeff_a reaches its cubic coefficients as a float64 number (it passes numpy.float32, which makes the
    coefficients float32)."""
    from unittest import mock

    import onnx.numpy_helper
    from onnx.reference.ops import op_resize
    from property_harness import node_model, run_reference

    def in_float64(coefficients):
        return lambda ratio, scale, A=-0.75: coefficients(ratio, scale, A=float(A))

    saturate_cast = onnx.numpy_helper.saturate_cast

    def converted(x, dtype):
        if np.issubdtype(dtype, np.integer):  # saturating also where float(max) = 2^63 or 2^64 wraps in astype
            info, rounded = np.iinfo(dtype), np.round(np.asarray(x, np.float64))
            inside = saturate_cast(x, dtype)
            return np.where(rounded >= float(info.max), info.max,
                            np.where(rounded <= float(info.min), info.min, inside)).astype(dtype)
        with np.errstate(all="ignore"):
            return np.asarray(x).astype(dtype)

    if "axes" in attrs:  # the reference transposes by the axes as given, which fails for negative ones
        attrs = {**attrs, "axes": [a % inputs[0].ndim for a in attrs["axes"]]}
    if opset >= 11 and len(inputs) > 1 and inputs[1] is not None:  # it computes crop coordinates in roi's type
        inputs = [inputs[0], inputs[1].astype(np.float64), *inputs[2:]]
    with mock.patch.object(onnx.numpy_helper, "saturate_cast", converted), \
            mock.patch.object(op_resize, "_cubic_coeffs", in_float64(op_resize._cubic_coeffs)), \
            mock.patch.object(op_resize, "_cubic_coeffs_antialias", in_float64(op_resize._cubic_coeffs_antialias)):
        return run_reference(node_model("Resize", opset, inputs, attrs), inputs)


def _reference_knows(attrs):
    """Whether the reference implements the case's coordinate_transformation_mode (not tf_half_pixel_for_nn)."""
    return attrs.get("coordinate_transformation_mode") != "tf_half_pixel_for_nn"


def _resize_64_bit_extremes(x, beyond=2.0 ** 62):
    """Whether X is a 64-bit integer tensor with values beyond `beyond` (2^62: where float(max) overflows back;
    2^53: where float64 loses digits)."""
    return x.dtype in (np.int64, np.uint64) and x.size > 0 and bool(
        (np.abs(x.astype(np.float64)) > beyond).any())


def _resize_fill(value, dtype):
    """extrapolation_value in X's type, converted as the reference converts results (integers rounded half to
    even and clipped)."""
    if dtype == np.bool_:
        return np.bool_(value)
    if np.issubdtype(dtype, np.integer):  # saturating also where float(max) = 2^63 or 2^64 wraps in astype
        info, rounded = np.iinfo(dtype), np.round(value)
        return np.array(info.max if rounded >= float(info.max) else info.min if rounded <= float(info.min)
                        else rounded).astype(dtype)
    return np.array(value).astype(dtype)


def _resize_nearest_through_indices(op, opset, inputs, attrs):
    """Nearest resizing with the source elements the reference chooses (found by resizing a tensor of element
    indices, in float64), the elements then copied; tf_crop_and_resize positions outside the input take
    extrapolation_value."""
    x = inputs[0]
    indices = np.arange(x.size, dtype=np.float64).reshape(x.shape)
    probe = {k: v for k, v in attrs.items() if k != "antialias"}  # no effect on nearest; the reference refuses it
    probe["extrapolation_value"] = -1.0
    positions = _reference_resize_unclipped(opset, [indices, *inputs[1:]], probe)[0]
    taken = x.ravel()[np.clip(positions, 0, None).astype(np.int64)]
    return [np.where(positions < 0, _resize_fill(attrs.get("extrapolation_value", 0.0), x.dtype), taken)]


def _resize_float_can_overflow(x):
    """Whether X is a float tensor holding NaN, an infinity, or values that interpolation (cubic weights reach
    1.4) can carry past the type's range."""
    if x.dtype.kind in "iub" or x.size == 0:
        return False
    wide = x.astype(np.float64)
    import ml_dtypes

    return bool(not np.isfinite(wide).all() or np.abs(wide).max() > float(ml_dtypes.finfo(x.dtype).max) / 4)


def _resize_asymmetric_by_the_spec(op, opset, inputs, attrs):
    """Resize-10 and Upsample: output lengths floor(length * scale), source coordinate x_resized / scale; nearest
    takes floor(x) where the axis grows or keeps its length and ceil(x) where it shrinks (onnxruntime's rule for
    these versions, which its backend tests fix), clamped; linear as the reference's Resize-11 with
    coordinate_transformation_mode asymmetric."""
    x = inputs[0]
    scales = np.asarray(attrs["scales"] if len(inputs) < 2 else inputs[1], np.float32).astype(np.float64)
    if attrs.get("mode", "nearest") != "nearest":
        case = [x, np.array([], np.float32), scales.astype(np.float32)]
        return _reference_resize_unclipped(11, case, {"mode": "linear",
                                                      "coordinate_transformation_mode": "asymmetric"})
    picks = []
    for length, scale in zip(x.shape, scales):
        source = np.arange(int(np.floor(length * scale))) / scale
        chosen = np.floor(source) if scale >= 1 else np.ceil(source)
        picks.append(np.clip(chosen, 0, max(length - 1, 0)).astype(np.int64))
    return [x[np.ix_(*picks)] if picks else x.copy()]


def mvn_by_the_spec(inputs, attrs, compute=np.float64, two_pass=False):
    """MeanVarianceNormalization over `axes` (default [0, 2, 3]) in `compute`, rounded once: the function body's
    (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), or with two_pass the variance as E[(X - E[X])^2], the spec's
    (X - EX) / sqrt(E(X - EX)^2), which is never negative."""
    x = inputs[0]
    axes = tuple(a % x.ndim for a in attrs.get("axes", [0, 2, 3]))
    wide = x.astype(compute)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the mean of an empty set: NaN, without numpy's warning
        mean = wide.mean(axis=axes, keepdims=True)
        variance = ((wide - mean) ** 2).mean(axis=axes, keepdims=True) if two_pass else \
            (wide * wide).mean(axis=axes, keepdims=True) - mean * mean
        return [((wide - mean) / (np.sqrt(variance) + np.array(1e-9, compute))).astype(x.dtype)]


def _reference_with(op, opset, inputs, attrs):
    """The reference's results for the same inputs with other attributes."""
    from property_harness import node_model, run_reference

    return run_reference(node_model(op, opset, inputs, attrs), inputs)


def _resize_tf_half_pixel_for_nn(op, opset, inputs, attrs):
    """Resize-11 nearest with tf_half_pixel_for_nn: x_original = (x_resized + 0.5) / scale per the spec, the
    element chosen as the reference's nearest_mode rules choose (an integral x is itself; otherwise floor or
    floor + 1, ties by the mode), clamped to the axis."""
    x, scales, sizes = inputs[0], inputs[2], inputs[3] if len(inputs) > 3 else None
    mode = attrs.get("nearest_mode", "round_prefer_floor")
    picks = []
    for axis, length in enumerate(x.shape):
        if sizes is not None and sizes.size:
            out, scale = int(sizes[axis]), int(sizes[axis]) / length if length else 1.0
        else:
            scale = float(scales[axis])
            out = int(np.floor(length * scale))
        source = (np.arange(out) + 0.5) / scale
        below = np.floor(source)
        ratio = source - below
        up = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": ratio < 0,
              "ceil": ratio > 0}[mode]
        picks.append(np.clip(below + up, 0, max(length - 1, 0)).astype(np.int64))
    return [x[np.ix_(*picks)]]


def _quantize_parameters(inputs, attrs):
    """x, the scale and the zero point (None when absent) of a QuantizeLinear / DequantizeLinear case, the last
    two expanded to x's shape as the spec lays them out (per tensor, per axis, blocked)."""
    from onnx.reference.ops._quant_utils import reshape_input

    x, scale, zero = (list(inputs) + [None, None])[:3]
    axis, block = attrs.get("axis", 1), attrs.get("block_size", 0)
    expand = (lambda v: np.broadcast_to(reshape_input(v, x.shape, axis, block), x.shape)) if x.ndim else \
        (lambda v: v.reshape(()))
    return x, scale, expand(scale), zero, None if zero is None else expand(zero)


def _quantize_ratios(inputs, attrs):
    """x / y_scale as the spec divides: in `precision` (else the scale's type; float32 for an int32 scale), both
    operands converted to it and the quotient rounded to it."""
    import ml_dtypes  # noqa: F401 - the half dtypes below
    from onnx.helper import tensor_dtype_to_np_dtype

    x, scale, s, _, _ = _quantize_parameters(inputs, attrs)
    precision = np.dtype(tensor_dtype_to_np_dtype(attrs["precision"])) if attrs.get("precision") else scale.dtype
    precision = np.dtype(np.float32) if precision.kind in "iu" else precision
    with np.errstate(all="ignore"):
        return (x.astype(precision) / s.astype(precision)).astype(precision)


def _quantize_by_the_spec(op, opset, inputs, attrs):
    """y = saturate(round(x / y_scale) + y_zero_point), the division as _quantize_ratios does it, ties to even;
    NaN to the low end of an integer type (as the reference gives it); for float8 x / y_scale + y_zero_point
    converted by Cast's rules (`saturate`)."""
    from onnx.helper import tensor_dtype_to_np_dtype
    from onnx.numpy_helper import saturate_cast

    _, _, _, zero, z = _quantize_parameters(inputs, attrs)
    ratio = _quantize_ratios(inputs, attrs)
    out = zero.dtype if zero is not None else np.dtype(tensor_dtype_to_np_dtype(attrs.get("output_dtype") or 2))
    with np.errstate(all="ignore"):
        if out.kind in "iu":
            info = np.iinfo(out)
            q = np.rint(ratio.astype(np.float64)) + (0 if z is None else z.astype(np.float64))
            return [np.where(np.isnan(q), info.min, np.clip(q, info.min, info.max)).astype(out)]
        v = ratio.astype(np.float32) + (0 if z is None else z.astype(np.float32))
        return [saturate_cast(v, out) if attrs.get("saturate", 1) else v.astype(out)]


def _quantize_output_is_integer(inputs, attrs):
    from onnx.helper import tensor_dtype_to_np_dtype

    zero = inputs[2] if len(inputs) > 2 else None
    out = zero.dtype if zero is not None else np.dtype(tensor_dtype_to_np_dtype(attrs.get("output_dtype") or 2))
    return out.kind in "iu"


def _dequantize_by_the_spec(op, opset, inputs, attrs):
    """y = (x - x_zero_point) * x_scale in float32 (as the reference computes), converted to output_dtype (else
    the scale's type)."""
    from onnx.helper import tensor_dtype_to_np_dtype

    x, scale, s, zero, z = _quantize_parameters(inputs, attrs)
    out = np.dtype(tensor_dtype_to_np_dtype(attrs["output_dtype"])) if attrs.get("output_dtype") else scale.dtype
    shifted = x.astype(np.float32) - (0 if z is None else z.astype(np.float32))
    with np.errstate(all="ignore"):
        return [(shifted * s.astype(np.float32)).astype(out)]


def _scan_through_axis_zero(op, opset, inputs, attrs):
    """Scan-9+ with one state and one scan input: the reference scanning axis 0 forward of the input moved and
    reversed as the spec's scan_input_axes / scan_input_directions say, its scan outputs reversed and moved back as
    scan_output_directions / scan_output_axes say (a negative output axis counts in the output's rank)."""
    from property_harness import node_model, run_reference

    state, scanned = inputs
    moved = np.moveaxis(scanned, attrs["scan_input_axes"][0], 0)
    if attrs["scan_input_directions"][0]:
        moved = moved[::-1]
    plain = {"body": attrs["body"], "num_scan_inputs": 1}
    final, *outputs = run_reference(node_model(op, opset, [state, moved], plain, outputs=3), [state, moved])
    for k, (axis, direction) in enumerate(zip(attrs["scan_output_axes"], attrs["scan_output_directions"])):
        stacked = outputs[k][::-1] if direction else outputs[k]
        outputs[k] = np.moveaxis(stacked, 0, axis % stacked.ndim)
    return [final, *outputs]


def _is_float8(dtype):
    return dtype.itemsize == 1 and dtype.kind not in "iub"


def _qlinear_matmul_by_the_spec(op, opset, inputs, attrs):
    """y = saturate((a - a_zero_point) @ (b - b_zero_point) * (a_scale * b_scale / y_scale) + y_zero_point): the
    product in float64 (wrapping to int32 when both operands are integers), the scale factor in the scales' type
    as the reference computes it, integers rounded to nearest even and saturated (NaN to the low end, as
    QuantizeLinear), float8 converted by Cast's saturating rules."""
    from onnx.numpy_helper import saturate_cast

    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = inputs
    with np.errstate(all="ignore"):  # float8 operands hold NaN and infinities
        product = np.matmul(a.astype(np.float64) - a_zero.astype(np.float64),
                            b.astype(np.float64) - b_zero.astype(np.float64))
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        product = ((product.astype(np.int64) + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.float64)
    with np.errstate(all="ignore"):
        value = product * (a_scale * b_scale / y_scale).astype(np.float64) + y_zero.astype(np.float64)
        if y_zero.dtype.kind in "iu":
            info = np.iinfo(y_zero.dtype)  # NaN (a NaN or inf - inf of float8 operands) to the low end
            return [np.where(np.isnan(value), info.min, np.clip(np.rint(value), info.min, info.max)).astype(
                y_zero.dtype)]
        return [saturate_cast(value, y_zero.dtype)]


def _affine_grid_by_the_spec(op, opset, inputs, attrs):
    """AffineGrid in float64, rounded once to theta's type: the base grid of each spatial axis of length n is
    linspace(-1, 1) at the pixel centres, (2i + 1) / n - 1, or with align_corners at the corners,
    -1 + 2i / (n - 1); each point (x, y[, z], 1) (x along the last axis) is multiplied by theta's rows with every
    product formed (inf * 0 is NaN) and summed in order."""
    theta, size = inputs[0], [int(v) for v in inputs[1]]
    spatial = size[2:]
    if attrs.get("align_corners", 0):
        axes = [-1 + 2 * np.arange(n) / (n - 1) if n > 1 else np.full(n, -1.0) for n in spatial]
    else:
        axes = [(2 * np.arange(n) + 1) / n - 1 for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    points = np.stack([*reversed(mesh), np.ones(mesh[0].shape)], axis=-1)  # (..., k + 1)
    wide = theta.astype(np.float64)
    with np.errstate(all="ignore"):
        grid = np.zeros((size[0], *spatial, len(spatial)))
        for batch in range(size[0]):
            for row in range(len(spatial)):
                total = np.zeros(points.shape[:-1])
                for column in range(len(spatial) + 1):
                    total = total + wide[batch, row, column] * points[..., column]
                grid[batch, ..., row] = total
        return [grid.astype(theta.dtype)]


def _scan_strings_as_codes(op, opset, inputs, attrs):
    """A string Scan evaluated on int64 codes of its strings (the body only passes values through), decoded back."""
    import copy

    from onnx import TensorProto

    state, scanned = inputs
    table = sorted(set(state.ravel().tolist()) | set(scanned.ravel().tolist()))
    code = {text: i for i, text in enumerate(table)}
    encode = np.vectorize(lambda t: code[t], otypes=[np.int64])
    body = copy.deepcopy(attrs["body"])
    for value in list(body.input) + list(body.output):
        value.type.tensor_type.elem_type = TensorProto.INT64
    coded = [encode(a) if a.size else a.astype(np.int64) for a in (state, scanned)]
    coded_attrs = dict(attrs, body=body)
    if any(attrs.get(k) and any(attrs[k]) for k in ("scan_input_axes", "scan_input_directions", "scan_output_axes",
                                                   "scan_output_directions")):
        results = _scan_through_axis_zero(op, opset, coded, coded_attrs)
    else:
        from property_harness import node_model, run_reference

        results = run_reference(node_model(op, opset, coded, coded_attrs, outputs=3), coded)
    decode = np.array(table, dtype=object)
    return [decode[r] if r.size else r.astype(object) for r in results]


def _svm_kernel_value(svm, x, v, kernel):
    """K(x, v) as nxrt computes it: x . v in float32 (the reference's kernel_dot for LINEAR), the kernel of that
    in float64 rounded to float32 once; RBF's |x - v|^2 in float64."""
    with np.errstate(all="ignore"):
        if kernel == "RBF":
            distance = float(np.sum((x.astype(np.float64) - v.astype(np.float64)) ** 2))
            return float(np.float32(np.exp(-svm.gamma_ * distance)))
        dot = float(np.float32(svm.kernel_dot(x, v, "LINEAR")))
        if kernel == "POLY":
            return float(np.float32(np.power(svm.gamma_ * dot + svm.coef0_, float(svm.degree_))))
        return float(np.float32(np.tanh(svm.gamma_ * dot + svm.coef0_))) if kernel == "SIGMOID" else dot


def _svm_regressor_with_double_sums(op, opset, inputs, attrs):
    """SVMRegressor as nxrt computes it: the kernel values of _svm_kernel_value (the reference's parameters and
    kernel formulas) summed in float64 (rho + sum of coefficient x kernel value), the linear form x . coefficients
    + rho in float64; +-1 for one_class; then the reference's post-transforms in float64, rounded to float32."""
    from onnx.reference.ops.aionnxml.op_svm_helper import SVMCommon

    x = inputs[0]
    rows = (x.reshape(1, -1) if x.ndim == 1 else x).astype(np.float32)
    names = ("coefficients", "kernel_params", "kernel_type", "n_supports", "one_class", "rho", "support_vectors")
    defaults = {"kernel_type": "LINEAR", "n_supports": 0, "one_class": 0}
    svm = SVMCommon(**{name: attrs.get(name, defaults.get(name)) for name in names})
    supports = attrs.get("n_supports", 0)
    coefficients = np.array(attrs["coefficients"], np.float64)
    values = []
    with np.errstate(all="ignore"):
        for row in rows:
            if supports:
                vectors = np.array(attrs["support_vectors"], np.float32).reshape(supports, -1)
                kernels = [_svm_kernel_value(svm, row, v, attrs.get("kernel_type", "LINEAR")) for v in vectors]
                value = float(attrs["rho"][0])
                for c, k in zip(coefficients.tolist(), kernels):
                    value += c * k
            else:
                value = float(attrs["rho"][0]) + float(np.sum(row.astype(np.float64) * coefficients))
            values.append((1.0 if value > 0 else -1.0) if attrs.get("one_class", 0) else value)
        result = np.array(values, np.float64).reshape(len(rows), 1)
        return [_post_transformed(result, attrs.get("post_transform", "NONE")).astype(np.float32)]


def _pillow_mode(blob):
    import io

    import PIL.Image

    return PIL.Image.open(io.BytesIO(blob.tobytes())).mode


def _decoded_through_rgb(op, opset, inputs, attrs):
    """Pillow's decode converted to RGB (alpha dropped, grey and palette expanded), channels reversed for BGR; for
    Grayscale Pillow's conversion of the decoded image to L."""
    import io

    import PIL.Image

    image = PIL.Image.open(io.BytesIO(inputs[0].tobytes()))
    if attrs.get("pixel_format", "RGB") == "Grayscale":
        return [np.asarray(image.convert("L"))[:, :, None]]
    rgb = np.asarray(image.convert("RGB"))
    return [rgb[:, :, ::-1].copy() if attrs.get("pixel_format") == "BGR" else rgb]


def _range_count_through_float(opset, inputs, attrs):
    """Whether numpy.arange's count, ceil of (limit - start) / delta divided into a float, misses the exact count of
    an integer Range."""
    if inputs[0].dtype.kind not in "iu":
        return False
    start, limit, delta = (int(a) for a in inputs)
    return max(-((start - limit) // delta), 0) != max(math.ceil((limit - start) / delta), 0)


def _range_of_integers_exactly(op, opset, inputs, attrs):
    """An integer Range with the spec's count, max(ceil((limit - start) / delta), 0), in exact integer arithmetic."""
    start, limit, delta = (int(a) for a in inputs)
    return [np.array([start + i * delta for i in range(max(-((start - limit) // delta), 0))], inputs[0].dtype)]


def _attention_total_keys(inputs):
    """past_sequence_length + kv_sequence_length of an Attention case."""
    past_key = inputs[4] if len(inputs) > 4 else None
    return inputs[1].shape[2 if inputs[1].ndim == 4 else 1] + (past_key.shape[2] if past_key is not None else 0)


def _attention_query_length(inputs):
    return inputs[0].shape[2 if inputs[0].ndim == 4 else 1]


def _causal_with_query_broadcast_mask(inputs, attrs):
    """is_causal with an attn_mask of rank 1, or one that broadcasts over several queries (dimension -2 of 1)."""
    mask = inputs[3] if len(inputs) > 3 else None
    return bool(attrs.get("is_causal")) and mask is not None and (
        mask.ndim == 1 or (mask.shape[-2] == 1 and _attention_query_length(inputs) != 1))


def _integer_mask(inputs):
    return len(inputs) > 3 and inputs[3] is not None and inputs[3].dtype.kind in "iu"


def _attention_head_size(inputs, attrs):
    q = inputs[0]
    return q.shape[3] if q.ndim == 4 else q.shape[2] // attrs["q_num_heads"]


def _float64_default_scale(inputs, attrs):
    return inputs[0].dtype == np.float64 and not attrs.get("scale")


def _attention_without_keys(op, opset, inputs, attrs):
    """Attention over no keys at all: every query row is fully masked, so Y is zeros; present_key / present_value
    are the empty concatenation of past and new, and qk_matmul_output has no columns."""
    q, k, v = inputs[:3]
    if q.ndim == 3:
        q_heads, kv_heads = attrs["q_num_heads"], attrs["kv_num_heads"]
        batch, q_len = q.shape[:2]
        head, v_head = q.shape[2] // q_heads, v.shape[2] // kv_heads
        y = np.zeros((batch, q_len, q_heads * v_head), q.dtype)
    else:
        batch, q_heads, q_len, head = q.shape
        kv_heads, v_head = k.shape[1], v.shape[3]
        y = np.zeros((batch, q_heads, q_len, v_head), q.dtype)
    return [y, np.zeros((batch, kv_heads, 0, head), q.dtype), np.zeros((batch, kv_heads, 0, v_head), v.dtype),
            np.zeros((batch, q_heads, q_len, 0), q.dtype)]


def _attention_reference_run(op, opset, inputs, attrs):
    """The reference on one 4-D Attention case (all four outputs). With softcap and a half type it is the
    reference's own _compute_attention given the softcap as a Python float, with which numpy keeps the half type
    through the softcap as the function body does."""
    from property_harness import HALF, node_model, run_reference

    if not (attrs.get("softcap") and inputs[0].dtype in HALF):
        return run_reference(node_model(op, opset, inputs, attrs, 4), inputs)
    from onnx.reference.ops.op_attention import _compute_attention

    padded = list(inputs) + [None] * (7 - len(inputs))
    keywords = {k: a for k, a in attrs.items() if k != "softcap"}
    with np.errstate(all="ignore"):
        results = _compute_attention(*padded, softcap=float(attrs["softcap"]), _validate_attention25=opset >= 25,
                                     **keywords)
    return [np.asarray(r) for r in results]


def _attention_reference(op, opset, inputs, attrs):
    """The reference on an Attention case with each of its faults below worked around without changing the
    spec's result: float64 without a scale given the float32 default scale; an integer mask converted to T; with
    is_causal, a mask broadcast over the queries; with softcap in mode 0, qk_matmul_output from the same case
    without softcap; no keys by the fully-masked rule; 3-D inputs through their 4-D form (heads split out in
    front of the sequence), Y merged back to 3-D; half types with softcap through _attention_reference_run."""
    inputs = list(inputs)
    if _float64_default_scale(inputs, attrs):
        attrs = {**attrs, "scale": float(np.float32(1) / np.sqrt(np.float32(_attention_head_size(inputs, attrs))))}
    if _integer_mask(inputs):
        inputs[3] = inputs[3].astype(inputs[0].dtype)
    if _causal_with_query_broadcast_mask(inputs, attrs):
        mask = inputs[3] if inputs[3].ndim >= 2 else inputs[3].reshape(1, -1)
        queries = _attention_query_length(inputs)
        inputs[3] = np.broadcast_to(mask, (*mask.shape[:-2], queries, mask.shape[-1])).copy()
    if attrs.get("softcap") and attrs.get("qk_matmul_output_mode", 0) == 0:
        capped = _attention_reference(op, opset, inputs, {**attrs, "qk_matmul_output_mode": 1})
        raw = _attention_reference(op, opset, inputs, {k: a for k, a in attrs.items() if k != "softcap"})
        return capped[:3] + raw[3:]
    if _attention_total_keys(inputs) == 0:
        return _attention_without_keys(op, opset, inputs, attrs)
    if inputs[0].ndim == 4:
        return _attention_reference_run(op, opset, inputs, attrs)
    q_heads, kv_heads = attrs["q_num_heads"], attrs["kv_num_heads"]

    def split(x, heads):
        return x.reshape(x.shape[0], x.shape[1], heads, x.shape[2] // heads).transpose(0, 2, 1, 3)

    case = [split(inputs[0], q_heads), split(inputs[1], kv_heads), split(inputs[2], kv_heads), *inputs[3:]]
    results = _attention_reference_run(op, opset, case,
                                       {k: a for k, a in attrs.items() if k not in ("q_num_heads", "kv_num_heads")})
    y = results[0]
    results[0] = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], y.shape[1] * y.shape[3])
    return results


def _swiglu_function_body(op, opset, inputs, attrs):
    """SwiGLU's function body for a half type, every op rounded to it: CastLike(alpha), alpha * A, Sigmoid (one
    op: computed in float64, rounded once), A * sigmoid, then * B."""
    a, b = inputs
    alpha = np.array(attrs.get("alpha", 1.0), np.float32).astype(a.dtype)
    with np.errstate(all="ignore"):
        scaled = (alpha * a).astype(a.dtype)
        sigmoid = (1.0 / (1.0 + np.exp(-scaled.astype(np.float64)))).astype(a.dtype)
        return [((a * sigmoid).astype(a.dtype) * b).astype(a.dtype)]


class _BFloat16MatmulNumpy:
    """numpy, except that matmul of bfloat16 operands returns bfloat16 (ml_dtypes' matmul returns float32)."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def matmul(a, b):
        result = np.matmul(a, b)
        bfloat16 = np.asarray(a).dtype
        return result.astype(bfloat16) if str(bfloat16) == "bfloat16" and result.dtype != bfloat16 else result


def _flex_attention_matmul_in_bfloat16(op, opset, inputs, attrs):
    """The reference's FlexAttention computation with its bfloat16 matrix products rounded to bfloat16."""
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.ops.aionnx_preview import op_flex_attention

    mods = {name: ReferenceEvaluator(attrs[name], opsets={"": 23}) for name in ("score_mod", "prob_mod")
            if name in attrs}
    original = op_flex_attention.np
    op_flex_attention.np = _BFloat16MatmulNumpy()
    try:
        with np.errstate(all="ignore"):
            return list(op_flex_attention._compute_flex_attention(
                *inputs, scale=attrs.get("scale"), softmax_precision=attrs.get("softmax_precision"), **mods))
    finally:
        op_flex_attention.np = original


def _causal_conv_function_body(op, opset, inputs, attrs):
    """CausalConvWithState by its function body for a half type T: the depthwise Conv as one op (the reference on
    float32 copies, rounded once to T, as the suite compares Conv), then for silu / swish the activation in float
    on that rounded ConvOut (Cast to float, Sigmoid, Mul, CastLike to T); present_state is a copy."""
    from property_harness import node_model, run_reference

    dtype = inputs[0].dtype
    wide = [a.astype(np.float32) if a is not None else None for a in inputs]
    plain = {k: a for k, a in attrs.items() if k != "activation"}
    conv, state = run_reference(node_model(op, opset, wide, plain, 2), wide)
    with np.errstate(all="ignore"):
        conv = conv.astype(dtype)
        if attrs.get("activation", "none") != "none":
            x = conv.astype(np.float32)
            conv = (x * (np.float32(1) / (np.float32(1) + np.exp(-x)))).astype(dtype)
    return [conv, state.astype(dtype)]


def _sum_in_double(values):
    """The exact sum of float64 values rounded once (numpy's sum where they hold infinities or overflow)."""
    values = np.asarray(values, np.float64).ravel()
    try:
        return math.fsum(values.tolist())
    except (OverflowError, ValueError):  # a finite overflow, or +inf and -inf together
        with np.errstate(all="ignore"):
            return float(np.sum(values))


def _loss_by_the_spec(op, opset, inputs, attrs):
    """NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss by the spec's formulas in float64, each result rounded
    once to the input type: SoftmaxCrossEntropyLoss's log-probabilities as the function body's LogSoftmax along
    axis 1, (x - max) - log(sum(exp(x - max))); loss -w[c] * logp[n, c, ...] (w = 1 without weights), 0 and weight
    0 where the target is ignore_index; "mean" divides the summed losses by the summed weights (the function body's
    Div: 0 / 0 = NaN when every target is ignored). Returns (loss, log_prob); callers keep the outputs they have."""
    x, target = inputs[0], inputs[1]
    weight = inputs[2] if len(inputs) > 2 else None
    values = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if op == "SoftmaxCrossEntropyLoss" and values.size:
            shifted = values - np.max(values, axis=1, keepdims=True)
            values = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
        ignore_index = attrs.get("ignore_index")
        kept = target != ignore_index if ignore_index is not None else np.ones(target.shape, bool)
        safe = np.where(kept, target, 0).astype(np.int64)
        picked = np.take_along_axis(values, safe[:, None], axis=1)[:, 0] if target.size else np.zeros(target.shape)
        w = weight.astype(np.float64)[safe] if weight is not None else np.ones(target.shape)
        loss = np.where(kept, -picked * w, 0.0)
        reduction = attrs.get("reduction", "mean")
        if reduction == "sum":
            loss = np.array(_sum_in_double(loss))
        elif reduction == "mean":
            loss = np.array(np.float64(_sum_in_double(loss)) / np.float64(_sum_in_double(np.where(kept, w, 0.0))))
        return [loss.astype(x.dtype), values.astype(x.dtype)]


def _nms_reference_fails(opset, inputs, attrs):
    """NonMaxSuppression inputs the reference cannot read (see _nms_with_defaults)."""
    padded = list(inputs) + [None] * (5 - len(inputs))
    return (padded[2] is None or padded[2].size == 0 or int(padded[2].ravel()[0]) < 0 or padded[3] is None
            or any(a is not None and a.ndim == 0 for a in padded[2:]))


def _nms_with_defaults(op, opset, inputs, attrs):
    """The reference given the spec's defaults for what it cannot read: an omitted, empty or negative
    max_output_boxes_per_class as [0], an omitted iou_threshold as [0.0], scalars of rank 0 as shape [1]."""
    from property_harness import node_model, run_reference

    inputs = list(inputs) + [None] * (5 - len(inputs))
    if inputs[2] is None or inputs[2].size == 0 or int(inputs[2].ravel()[0]) < 0:
        inputs[2] = np.array([0], np.int64)
    if inputs[3] is None:
        inputs[3] = np.array([0.0], np.float32)
    inputs = [a.reshape(1) if a is not None and a.ndim == 0 else a for a in inputs]
    while inputs[-1] is None:
        inputs.pop()
    return run_reference(node_model(op, opset, inputs, attrs), inputs)


def _adam_by_the_spec(op, opset, inputs, attrs):
    """Adam's update of each optimized tensor in float64 (the spec's formulas, in the order of the reference's
    single-tensor form), rounded once to the tensor's type: outputs X'1..n, V'1..n, H'1..n."""
    rate, count = float(inputs[0]), int(inputs[1])
    n = (len(inputs) - 2) // 4
    defaults = {"alpha": 0.9, "beta": 0.999, "epsilon": 1e-6, "norm_coefficient": 0.0, "norm_coefficient_post": 0.0}
    alpha, beta, epsilon, norm, post = (float(np.float32(attrs.get(k, d))) for k, d in defaults.items())
    xs, vs, hs = [], [], []
    with np.errstate(all="ignore"):
        adjusted = rate * np.sqrt(1 - np.float64(beta) ** count) / (1 - np.float64(alpha) ** count) if count > 0 \
            else rate
        for i in range(n):
            x, g, v, h = (inputs[2 + k * n + i].astype(np.float64) for k in range(4))
            g = norm * x + g
            v = alpha * v + (1 - alpha) * g
            h = beta * h + (1 - beta) * (g * g)
            x = (1 - post) * (x - adjusted * (v / (np.sqrt(h) + epsilon)))
            dtype = inputs[2 + i].dtype
            xs.append(x.astype(dtype))
            vs.append(v.astype(dtype))
            hs.append(h.astype(dtype))
    return xs + vs + hs


def _qlinear_beyond_int32(opset, inputs, attrs):
    """Whether a QLinearAdd / QLinearMul result, before saturation, is beyond the int32 range."""
    a, sa, za, b, sb, zb, sc, zc = (list(inputs) + [None] * 8)[:8]
    da = a.astype(np.float64) - (0.0 if za is None else float(za))
    db = b.astype(np.float64) - (0.0 if zb is None else float(zb))
    with np.errstate(all="ignore"):
        add = np.abs(float(sa) * da + float(sb) * db) / float(sc)
        mul = np.abs(da * db) * (float(sa) * float(sb) / float(sc))
    return bool(add.size and max(add.max(), mul.max()) >= 2.0 ** 31)


def _u8s8_operands(op, inputs, attrs):
    """Whether a uint8-by-int8 product of `op` has a pair of products beyond int16 (see the entry)."""
    import contrib_spec

    if op == "QGemm":
        a, b = inputs[0], inputs[3]
        a, b = (a.T if attrs.get("transA", 0) else a), (b.T if attrs.get("transB", 0) else b)
    elif op == "DynamicQuantizeMatMul":
        a, b = contrib_spec.dynamic_quantize(inputs[0])[0], inputs[1]
    elif op == "QAttention":
        a, b = inputs[0].reshape(-1, inputs[0].shape[-1]), inputs[1]
    else:
        a, b = inputs[0], inputs[1]
    return contrib_spec.u8s8_pairs_overflow(a, b)


def _as_float_lists(attrs):
    """The legacy tree ensembles' *_as_tensor attributes as their float list forms (the reference reads only
    those; the values are float32 in the property tests, so the lists hold them exactly)."""
    from onnx import numpy_helper

    fixed = dict(attrs)
    for name in [n for n in attrs if n.endswith("_as_tensor")]:
        fixed[name[:-len("_as_tensor")]] = numpy_helper.to_array(fixed.pop(name)).astype(np.float64).tolist()
    return fixed


def _tree_ensemble_regressor_by_the_reference(op, opset, inputs, attrs):
    """The reference on float64 [N, F] copies with list attributes, missing-value tracks 0 when omitted and no
    post-transform; then its post-transform in float64, converted to float32 once."""
    x = inputs[0]
    rows = (x.reshape(1, -1) if x.ndim == 1 else x).astype(np.float64)
    fixed = {**_as_float_lists(attrs), "post_transform": "NONE"}
    fixed.setdefault("nodes_missing_value_tracks_true", [0] * len(attrs["nodes_treeids"]))
    result = _ml_reference("TreeEnsembleRegressor", [rows], fixed, opset=opset)[0]
    with np.errstate(all="ignore"):
        return [_post_transformed(result.reshape(len(rows), attrs["n_targets"]),
                                  attrs.get("post_transform", "NONE")).astype(np.float32)]


DIFFERENCES = [
    Difference(
        "Erf",
        "The reference computes Erf of every type through float32: for float64 erf(0.5) comes out "
        "0.5204998850822449, not 0.5204998778130465, and erf(3e-251) as 0; for the integer types of Erf-9 "
        "erf(4) = 0.99999998 rounds to 1.0 in float32 and converts to 1. Compared with math.erf in float64, "
        "converted toward zero for integers (erf(4) -> 0). onnxruntime computes float64 in float64 and has no "
        "integer Erf.",
        lambda opset, inputs, attrs: inputs[0].dtype == np.float64 or inputs[0].dtype.kind in "iu",
        _erf_through_float64,
    ),
    Difference(
        "HardSwish",
        "The spec's alpha is 1/6; the reference holds it as float32 (0.16666667163), which float64 inputs show: "
        "HardSwish(-2.5) is -0.2083333022892475 there, -0.20833333333333334 with 1/6. Compared with x * clip(x / 6 "
        "+ 0.5, 0, 1) in float64.",
        lambda opset, inputs, attrs: inputs[0].dtype == np.float64,
        _hard_swish_exact,
    ),
    Difference(
        "Gelu",
        "The reference's float64 Gelu goes through float32: the erf form takes erf through float32 as its Erf "
        "does (Gelu(-2) is -0.04550027847290039 there, -0.04550026389635842 with a float64 erf), and the tanh "
        "form holds its constants in float32 (Gelu(-3) is -0.003637392815791174 there, -0.0036373920817729943 "
        "with sqrt(2 / pi) and 0.044715 in float64). Compared with both formulas in float64.",
        lambda opset, inputs, attrs: inputs[0].dtype == np.float64,
        _gelu_float64,
    ),
    Difference(
        "PRelu",
        "The spec's PRelu is slope * x for x < 0 and x for x >= 0; the reference takes x only for x > 0, so a zero "
        "(or -0.0) x with a NaN or infinite slope gives NaN there and x by the spec. Compared with the spec's form.",
        lambda opset, inputs, attrs: True,
        _prelu_by_the_spec,
    ),
    Difference(
        "Pow",
        "For integer bases the reference computes through float64 (numpy's promotion of a signed 64-bit base with "
        "an unsigned exponent, and of any integer base with a float exponent) and converts back with astype: "
        "Pow(int64 max, uint64 1) is int64 min there and Pow(int32 3, 40.0) or Pow(int32 0, NaN) INT_MIN. The "
        "spec is silent on results outside the type. nxrt computes integer exponents exactly modulo 2^bits (as "
        "the reference does for same-signedness types) and float exponents in float64, saturating, NaN to 0.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind in "iu",
        _pow_integer_base,
    ),
    Difference(
        "ReduceL2",
        "For integers the reference squares in the input type (wrapping: 153696^2 in int32 is negative) and takes "
        "the square root of that, converting NaN to INT_MIN. The spec defines sqrt(sum(x^2)); nxrt computes it in "
        "float64 (153696) and converts toward zero.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind in "iu",
        _reduce_in_float64(lambda v, axes, keep: np.sqrt(np.sum(v * v, axis=axes, keepdims=keep))),
    ),
    Difference(
        "ReduceMean",
        "For integers the reference takes the float mean and converts it with astype: the mean of an empty set "
        "(NaN) becomes INT_MIN (uint64: 2^63), a mean beyond 2^53 loses its low digits, "
        "empty mean (NaN) to 0; and its integer sum wraps (the mean of {INT64_MAX, INT64_MAX} as -1). nxrt's "
        "integer mean is exact (a 128-bit sum divided toward zero; INT64_MAX there), 0 for an empty set.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind in "iu",
        _exact_integer_mean,
    ),
    Difference(
        "ReduceSumSquare",
        "For 32-bit integers the reference returns a 64-bit result (numpy's square promotes); the schema's output "
        "type is the input's, as onnxruntime and nxrt give it (summed in the input type, wrapping). Compared with "
        "the reference's 64-bit result converted to the input type.",
        lambda opset, inputs, attrs: inputs[0].dtype in (np.int32, np.uint32),
        lambda op, opset, inputs, attrs: _reference_result_as(op, opset, inputs, attrs, inputs[0].dtype),
    ),
    Difference(
        "ReduceLogSum",
        "The reference refuses integer inputs (\"integer types were removed from the schema in opset 28\"), which the "
        "schema allows before opset 28. nxrt computes log(sum) in float64 and converts toward zero, saturating, "
        "NaN to 0.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind in "iu",
        _reduce_in_float64(lambda v, axes, keep: np.log(np.sum(v, axis=axes, keepdims=keep))),
    ),
    Difference(
        "ReduceLogSumExp",
        "As ReduceLogSum: the reference refuses the integer inputs the schema allows before opset 28. nxrt "
        "computes log(sum(exp)) in float64, shifted by the largest finite value (710 stays 710), and converts "
        "toward zero, saturating, NaN to 0.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind in "iu",
        _reduce_in_float64(_log_sum_exp),
    ),
    Difference(
        "ReduceLogSumExp",
        "The reference subtracts the largest value before exp; when that is infinite it computes inf - inf = NaN. "
        "log(sum(exp(x))) is +inf with a +inf element and -inf over only -inf elements, which nxrt gives (it "
        "shifts by the largest finite value). Compared with that shifted form in float64.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind not in "iu"
        and bool(np.isinf(inputs[0].astype(np.float64)).any()),
        lambda op, opset, inputs, attrs: [_log_sum_exp(
            inputs[0].astype(np.float64), _reduction_axes(op, opset, inputs, attrs),
            bool(attrs.get("keepdims", 1))).astype(inputs[0].dtype)],
    ),
    *[Difference(
        op,
        "The reference fails on a rank-0 input (\"Issues with types [<class 'numpy.ndarray'>]\": its result is a "
        "numpy scalar). Compared with the reference reducing the same value from shape [1].",
        lambda opset, inputs, attrs: inputs[0].ndim == 0,
        _rank0_through_rank1,
    ) for op in ("ReduceLogSum", "ReduceLogSumExp")],
    Difference(
        "Trilu",
        "For strings the reference fills the zeroed triangle with the integer 0 (numpy.triu on an object array); "
        "a string tensor's zero is the empty string, which nxrt writes.",
        lambda opset, inputs, attrs: inputs[0].dtype == object,
        _trilu_strings,
    ),
    *[Difference(
        op,
        "Before opset 13 the spec coerces the input to 2-D at `axis` (\"[a_0 * ... * a_{k-1}, a_k * ... * "
        "a_{n-1}]\") and normalises each row; the reference applies the opset-13 form along the single axis "
        "instead (for a [2] input with the default axis 1 it normalises both elements together, where the spec's "
        "rows hold one each). Compared with the spec's coerced form.",
        lambda opset, inputs, attrs: opset < 13,
        _softmax_family_by_the_spec,
    ) for op in ("Softmax", "LogSoftmax", "Hardmax")],
    Difference(
        "LogSoftmax",
        "The reference computes LogSoftmax as log(Softmax(x)) in the input type: near a probability of 1 the "
        "log loses digits (LogSoftmax([-0, 6])[1] is -0.0024756414 there in float32, -0.0024756852 by the formula) "
        "and a probability that underflows gives -inf where the value is finite (x - max - log(sum)). nxrt "
        "computes the spec's (x - max) - log(sum(exp(x - max))) with the sum in double. Compared with that "
        "formula in float64.",
        lambda opset, inputs, attrs: opset >= 13,
        _softmax_family_by_the_spec,
    ),
    Difference(
        "Flatten",
        "The reference fails on zero-size inputs (it reshapes to (rows, -1), which numpy cannot infer from 0 "
        "elements). Compared with the spec's [a_0 * ... * a_(axis-1), a_axis * ... * a_(n-1)] reshape.",
        lambda opset, inputs, attrs: inputs[0].size == 0,
        lambda op, opset, inputs, attrs: _flattened(inputs[0], attrs.get("axis", 1)),
    ),
    Difference(
        "Shrink",
        "For integers the reference computes in float32 (up to 16 bits) or float64 and converts back with "
        "numpy's astype, which wraps what falls outside the type (Shrink(uint8 255, bias -1, lambd 0) gives 0, "
        "int64 max with bias 0 gives int64 min). nxrt saturates to the type's range instead (255, int64 max). "
        "onnxruntime computes in float32 and casts.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind in "iu",
        _shrink_saturating,
    ),
    Difference(
        "SequenceInsert",
        "The spec accepts positions in [-n, n] for a sequence of n tensors, n inserting at the end; the reference "
        "takes the position modulo n, so n inserts at the front. Compared with Python's list.insert at the "
        "position (negative ones counted from the end). onnxruntime inserts at the end.",
        lambda opset, inputs, attrs: inputs[2] is not None and int(inputs[2]) == len(inputs[0]),
        _sequence_insert_at_end,
    ),
    Difference(
        "SequenceMap",
        "For an empty input sequence the reference fails (\"'NoneType' object is not iterable\": it builds its "
        "outputs from the first element). The spec's outputs are sequences of the input's length: empty ones. "
        "onnxruntime returns empty sequences.",
        lambda opset, inputs, attrs: len(inputs[0]) == 0,
        lambda op, opset, inputs, attrs: [[] for _ in range(attrs["outputs"])],
    ),
    Difference(
        "Optional",
        "The reference represents an optional as a one-element list: Optional(x) is [x], Optional() is [None]. "
        "Its OptionalGetElement returns that list instead of the tensor or sequence inside (a sequence of one "
        "tensor where the spec's output is the tensor), and its OptionalHasElement counts [None] as an element "
        "(true where the spec's \"If the input is not provided, the output is an empty optional\" gives false). "
        "Compared with the spec's results: the wrapped value, true for a full optional (and from opset 18 for a "
        "plain tensor), false for an empty one or an omitted input. onnxruntime gives the same.",
        lambda opset, inputs, attrs: True,
        lambda op, opset, inputs, attrs: _optional_by_the_spec(opset, inputs),
    ),
    Difference(
        "Gemm",
        "For integers the reference computes np.dot(A', B') * alpha + C * beta in float64 and converts with "
        "astype: a term beyond 2^53 loses its low digits and a result outside the type becomes the conversion's "
        "garbage (uint32: 1 * (2^32 - 1) + (2^32 - 1) gives 0). The spec's formula in the integer type wraps "
        "(docs/numerics.md: integer math wraps), as nxrt gives it (2^32 - 2). onnxruntime has no integer Gemm. "
        "Compared with exact integer arithmetic modulo 2^bits.",
        _gemm_integer_leaves_float64,
        _gemm_integer_wrapped,
    ),
    Difference(
        "Gemm",
        "For beta = 0 the reference leaves out the term beta * C (\"if c is not None and beta != 0\"), a BLAS "
        "convention; the spec's formula Y = alpha * A' * B' + beta * C keeps it, and 0 * NaN and 0 * inf are NaN. "
        "nxrt gives NaN where C is NaN or infinite; onnxruntime skips C as the reference does. Compared with the "
        "formula: element-wise products summed, then alpha and beta * C (half types in float32, rounded once).",
        _gemm_zero_beta_keeps_c,
        _gemm_by_the_formula,
    ),
    *[Difference(
        op,
        "The reference multiplies through numpy.dot, whose BLAS (OpenBLAS) skips a zero factor of a matrix-vector "
        "product: [[NaN], [NaN]] times [-0.0] is [0, 0] there. The spec's product is IEEE multiplication and "
        "addition, where NaN * 0 and inf * 0 are NaN, as nxrt and onnxruntime give it. Compared with the "
        "element-wise products summed (numpy without BLAS; half types in float32, rounded once).",
        _zero_meets_non_finite,
        expected,
    ) for op, expected in (("MatMul", _matmul_by_the_formula), ("Gemm", _gemm_by_the_formula))],
    Difference(
        "MatMulInteger",
        "The reference subtracts a 1-D a_zero_point as numpy broadcasts it, along A's last dim (K): for A [[1, 2], "
        "[3, 4]] and a_zero_point [1, 2] it shifts by column ([[0, 0], [2, 2]]). The spec's 1-D a_zero_point is "
        "per row (\"an M element vector [zp_1, zp_2, ..., zp_M]\"), which nxrt applies ([[0, 1], [1, 2]]); "
        "onnxruntime refuses a zero point that is not a scalar. Compared with the per-row subtraction.",
        lambda opset, inputs, attrs: len(inputs) > 2 and inputs[2] is not None and inputs[2].ndim == 1,
        _matmul_integer_per_row,
    ),
    Difference(
        "com.microsoft.FastGelu",
        "onnxruntime's float64 FastGelu holds its constants in float32 and computes 0.5 x (1 + tanh(u)), whose 1 + "
        "tanh cancels: FastGelu(-3) is -3.63746258e-03 there, -3.63739208e-03 by the spec's formula in float64, "
        "and every x <= -8 gives -0 (FastGelu(-10) = -1.2041e-37). nxrt computes x / (1 + exp(-2u)) in double, the "
        "same function without the cancellation. Compared with that formula in float64 (contrib_spec.py).",
        lambda opset, inputs, attrs: inputs[0].dtype == np.float64,
        _contrib_spec("gelu_family"),
    ),
    Difference(
        "com.microsoft.QuickGelu",
        "onnxruntime's float64 QuickGelu loses digits where sigmoid(alpha x) is small: QuickGelu(-20) is "
        "-3.10862e-14 there, -3.29341e-14 by the spec's x * sigmoid(alpha x) in float64, and QuickGelu(42, alpha "
        "-0.5) 3.184675723e-08 against 3.184675377e-08. nxrt computes x / (1 + exp(-alpha x)) in double. Compared "
        "with that formula in float64 (contrib_spec.py).",
        lambda opset, inputs, attrs: inputs[0].dtype == np.float64,
        _contrib_spec("gelu_family"),
    ),
    # ai.onnx.ml (test_ml_properties.py, test_ml_model_properties.py)
    Difference(
        "ai.onnx.ml.Scaler",
        "The schema's Y is float; the reference returns the input's type (int32 (x - 1.5) * 0.5 of -3 is -2 "
        "there, -2.25 in float) and for a rank-0 input a [1] result (its length-1 offset list broadcasts). "
        "Compared with the reference on float64 copies, converted to float32 once in the input's shape (nxrt "
        "computes in double; onnxruntime gives the same float results and refuses rank 0).",
        lambda opset, inputs, attrs: inputs[0].dtype != np.float32 or inputs[0].ndim == 0,
        _scaler_in_float64,
    ),
    Difference(
        "ai.onnx.ml.Normalizer",
        "The reference divides by max(divisor, 1e-30) where the spec divides unless the divisor is zero ([1e-40, 0] "
        "under MAX is [1e-10, 0] there, [1, 0] by the spec), computes float32 rows in float32 (L2 of [1e20] "
        "overflows to 0 there, 1 in float64), returns float64 for double and integer inputs (the schema's Y is "
        "float) and fails on a 1-D input (the spec's one row). Compared with the formula in float64: max |x|, "
        "sum |x|, sqrt(sum x^2) (the spec writes max(X) and sum(X); the norms' absolute values, as the reference "
        "and scikit-learn read them), a zero divisor leaving the row as it is. onnxruntime divides by the signed "
        "max(X) (MAX of [-3, 1, 2] is [-1.5, 0.5, 1]) and sums float32 squares (L2 of [1e20] is NaN).",
        _normalizer_reference_wrong,
        _normalizer_by_the_spec,
    ),
    Difference(
        "ai.onnx.ml.Imputer",
        "The reference refuses inputs that are not 2-D (\"x must be a matrix\"); the spec's [*, F] takes any rank "
        "(onnxruntime and nxrt). Compared with the reference on the input as [-1, F] rows, reshaped back.",
        lambda opset, inputs, attrs: inputs[0].ndim != 2,
        _imputer_on_rows,
    ),
    Difference(
        "ai.onnx.ml.FeatureVectorizer",
        "The reference reshapes a 1-D input [C] to [C, 1] (C rows) where the spec treats it as [1, C], and returns "
        "the inputs' type where the schema's Y is float. Compared with the reference on 1-D inputs given as "
        "[1, C], converted to float32 (onnxruntime also gives float).",
        lambda opset, inputs, attrs: inputs[0].dtype != np.float32 or any(a.ndim == 1 for a in inputs),
        _feature_vectorizer_rows,
    ),
    Difference(
        "ai.onnx.ml.OneHotEncoder",
        "For float and double inputs the spec casts \"to integers\" before the look-up; the reference looks the "
        "float up as it is (2.5 matches no category there, category 2 after the cast, as nxrt and onnxruntime "
        "give). It implements ranks 1 and 2 only (the spec: any), fails on an empty input with zeros = 0 (np.min of "
        "nothing), and with a repeated category sizes the output by the distinct ones and fails (the spec: one "
        "column per listed category; nxrt and onnxruntime set the last one's). Compared with the spec's rule.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind == "f" or inputs[0].ndim not in (1, 2) or (
            attrs.get("zeros", 1) == 0 and inputs[0].size == 0) or len(
            set(attrs.get("cats_strings") or attrs.get("cats_int64s"))) < len(
            attrs.get("cats_strings") or attrs.get("cats_int64s")),
        _one_hot_by_the_spec,
    ),
    Difference(
        "ai.onnx.ml.LabelEncoder",
        "The reference never maps a NaN input (dict look-up: NaN != NaN) where the spec maps it (\"even a float NaN "
        "can be mapped\", opset 2; \"NaN match any input NaN\", opset 4); at opset 2 it maps -0.0 to the value of "
        "key 0.0 where the spec compares bit-wise; at opset 4 it fails on a values_tensor without default_tensor "
        "(the spec's default is {-1}, {-0.f} or {\"_Unused\"} by type); a string ending in NUL in a tensor "
        "attribute loses the NUL (numpy bytes). Compared with the spec's look-up, the "
        "last of repeated keys winning (opset 4: \"the last key takes precedence\", as the reference does). "
        "onnxruntime maps no NaN, maps -0.0 as 0.0, takes the first of repeated keys and has no opset 4.",
        _label_encoder_reference_wrong,
        _label_encoder_by_the_spec,
    ),
    *[Difference(
        op,
        "A symmetric window of one sample is NaN by the spec's function body (AngularIncrement = Tau / (size - 1) "
        "is inf, Range * inf is 0 * inf), then Cast to output_datatype; a Cast of NaN to an integer type is "
        "undefined. The reference converts with numpy's astype (INT32_MIN and INT64_MIN, 2^63 for uint64, 0 for "
        "the narrow types). nxrt converts NaN to 0, its rule wherever float math yields an integer. onnxruntime "
        "gives INT64_MIN for int64.",
        _one_sample_symmetric_window,
        _nan_window_as_integer,
    ) for op in ("HannWindow", "HammingWindow", "BlackmanWindow")],
    *[Difference(
        op,
        "The reference computes Hann and Hamming windows in the output type (np.arange(size, dtype=output type)), "
        "rounding every step: HammingWindow(5)[4] in float16 is 0.403 there, 0.4023 rounded once, and the zero of "
        "a symmetric HannWindow(2) is sin(float32(pi))^2 = 7.6e-15 in float32 (1.5e-32 in float64). The spec "
        "defines the values, not a precision; nxrt computes in float64 and rounds once (as the reference's "
        "BlackmanWindow does for every type). Compared with the reference's float64 window rounded once. "
        "onnxruntime computes in float32.",
        lambda opset, inputs, attrs: attrs.get("output_datatype", 1) in (1, 10, 16),
        _window_in_float64,
    ) for op in ("HannWindow", "HammingWindow")],
    *[Difference(
        op,
        "The spec: \"When casting from numeric tensors to string tensors, plain floating-point representation (such "
        "as '314.15926') would be used\". The reference writes numpy's str(), which turns scientific from 1e3 "
        "for float16 ('1e+03', '1.024e+03') and from 1e6 for float32 ('2.1474836e+09'), and it fails "
        "for bfloat16 and the float8 formats ('cannot cast dtype bfloat16 to StrDType'). nxrt writes the "
        "shortest round-trip digits of the value in its type (a float8 value as the float32 it is), positional "
        "for 1e-4 <= |x| < 1e16 for every type, as the reference does for float64 ('1024.0', "
        "'2147483600.0'). onnxruntime writes %.8g-style '1000', '2.1474836e+09', 'INF', 'NaN' "
        "and cannot cast float8 or bfloat16 to string.",
        _casts_to_string_from_float,
        _float_strings,
    ) for op in ("Cast", "CastLike")],
    *[Difference(
        op,
        "The reference fails to parse strings into bfloat16 and the float8 formats ('Issues with types'). The "
        "spec parses number literals into float types; compared with the literals parsed as float64 and the "
        "reference's Cast from float64 (one rounding; nxrt parses to double and rounds once). onnxruntime "
        "parses with std::stod and converts.",
        lambda opset, inputs, attrs: inputs[0].dtype == object and _cast_types(inputs, attrs)[1].name.startswith(
            ("bfloat16", "float8")),
        _parsed_strings_through_the_reference,
    ) for op in ("Cast", "CastLike")],
    *[Difference(
        op,
        "String -> bool: the reference gives numpy's truth of a non-empty string ('0', 'False' and "
        "'0.0' are True). The spec defines no string -> bool literals; nxrt reads the number a literal "
        "spells (nonzero, NaN included, is True) and 'true' / 'false' in any letter case. onnxruntime "
        "parses an unsigned integer ('0' is False, 'True' fails).",
        lambda opset, inputs, attrs: inputs[0].dtype == object and _cast_types(inputs, attrs)[1] == np.bool_,
        _strings_to_bool,
    ) for op in ("Cast", "CastLike")],
    Difference(
        "BatchNormalization",
        "Before opset 14 the reference has no working form: at opset 7 (its BatchNormalization_6, reading the "
        "absent is_test as training) it returns a tuple and fails, and at opset 9 it normalizes with the running "
        "statistics blended with the batch's even in test mode (momentum has a default, so its inference branch "
        "never runs), and fails on the five training outputs. The spec: one output is test mode, Y = (X - mean) / "
        "sqrt(var + epsilon) * scale + B with the given statistics; five outputs are training mode, Y with the "
        "batch statistics, mean / var the running ones (input * momentum + batch * (1 - momentum)), saved_mean / "
        "saved_var the batch mean and variance, as nxrt gives them. onnxruntime agrees except saved_var, where "
        "it gives the inverse standard deviation 1 / sqrt(var + epsilon). Compared with batch_norm_by_the_spec "
        "(float64, rounded once).",
        lambda opset, inputs, attrs: opset < 14,
        lambda op, opset, inputs, attrs: batch_norm_by_the_spec(opset, inputs, attrs, False),
    ),
    Difference(
        "BatchNormalization",
        "In training mode the reference returns running_mean / running_var in X's type; the schema gives them "
        "the statistics' own type (U at opset 14, T2 from 15), which may differ from X's, as nxrt does. Compared "
        "with batch_norm_by_the_spec (float64, rounded once to each output's type).",
        lambda opset, inputs, attrs: opset >= 14 and attrs.get("training_mode", 0) == 1
        and inputs[3].dtype != inputs[0].dtype,
        lambda op, opset, inputs, attrs: batch_norm_by_the_spec(opset, inputs, attrs, True),
    ),
    Difference(
        "LayerNormalization",
        "The reference returns Mean and InvStdDev in X's type; the schema gives them type U, the stash_type "
        "(float32 by default), as nxrt and onnxruntime do. Compared with the reference's values (half types "
        "computed on float32 copies, Y rounded once) with Mean and InvStdDev in float32.",
        lambda opset, inputs, attrs: inputs[0].dtype != np.float32,
        _layer_norm_statistics_in_float,
    ),
    Difference(
        "RMSNormalization",
        "The reference returns Y in X's type; the schema gives Y the scale's type V (\"Y: V\"), which may differ "
        "from X's (T), as nxrt does. Compared with the reference's values (half types computed on float32 copies) "
        "rounded once to the scale's type.",
        lambda opset, inputs, attrs: inputs[1].dtype != inputs[0].dtype,
        _rms_norm_in_scale_type,
    ),
    Difference(
        "LpNormalization",
        "For p = 1 the reference divides by sum(x) (numpy.power(x, 1).sum()), not by the L1 norm sum(|x|): "
        "LpNormalization([-1, 2], p=1) is [-1, 2] there, [-1/3, 2/3] by the norm, as nxrt and onnxruntime give "
        "it. Compared with x / sum(|x|^p)^(1/p) in float64, rounded once (0 where the norm is 0).",
        lambda opset, inputs, attrs: attrs.get("p", 2) == 1,
        lambda op, opset, inputs, attrs: lp_norm_by_the_spec(inputs, attrs),
    ),
    Difference("AveragePool", _REFERENCE_DROPS_NAN,
               lambda opset, inputs, attrs: not attrs.get("count_include_pad", 0)
               and _window("nan_input")("AveragePool", opset, inputs, attrs), _pool_by_the_spec),
    Difference("LpPool", _REFERENCE_DROPS_NAN, _window_case("nan_input")("LpPool"), _pool_by_the_spec),
    *[Difference(
        op,
        "With auto_pad SAME_UPPER, SAME_LOWER or VALID the reference sizes the pads and the output with the "
        "undilated kernel: VALID over 4 values with kernel 2 and dilation 2 gives 3 outputs there, (4 - 3) / 1 + 1 "
        "= 2 by the spec's formula, with windows of 2 values 2 apart. nxrt and onnxruntime follow the spec.",
        _window_case("dilated_auto_pad")(op), _pool_by_the_spec) for op in ("AveragePool", "LpPool")],
    *[Difference(
        op,
        "SAME_UPPER / SAME_LOWER where the spec's pad_shape, (out - 1) * stride + dilated kernel - in, is "
        "negative (stride above the kernel: 5 values, stride 3, kernel 1): the reference pads by that negative "
        "amount, which numpy refuses. Pads are >= 0 by the spec; nxrt and onnxruntime pad nothing (windows at 0 "
        "and 3).",
        _window_case("same_pad_negative")(op), _pool_by_the_spec) for op in ("AveragePool", "LpPool")],
    Difference(
        "AveragePool",
        "With ceil_mode the reference pads the input out to the last window and puts half of that extra pad "
        "(rounded down) at the beginning, which shifts every window once the extra is 2 or more: over [0, 1, 2, "
        "3, 4] with kernel 3 and stride 4 it gives [0.5, 3]; the spec's windows [0, 2] and [4, 6] (taps past the "
        "end pad are not part of a window) give [1, 4], as nxrt and onnxruntime do.",
        _window_case("ceil_pad_beyond", 2)("AveragePool"), _pool_by_the_spec),
    Difference(
        "LpPool",
        "The reference's LpPool is the mean of |x|^p over a window's taps in input and pads, times the kernel "
        "size: the sum only where every tap lies in the input or the pads. A ceil_mode window reaching past the "
        "end pad has fewer taps, so the reference scales its mean up: LpPool([1, 2, 4], kernel 2, stride 2, p 1, "
        "ceil_mode) is [3, 8] there, [3, 4] by the spec; with an extra of 2 or more it also shifts the windows as "
        "its AveragePool does. nxrt and onnxruntime sum the window.",
        _window_case("ceil_pad_beyond", 1)("LpPool"), _pool_by_the_spec),
    *[Difference(
        op,
        "With every stride and dilation 1 the reference runs MaxPool through an older implementation that reads "
        "2-D pads as [top, bottom, left, right] (the spec's order is [x1_begin, x2_begin, x1_end, x2_end]), "
        "mishandles pads in 1-D and 3-D (MaxPool([0, 1, 2, 3, 4], kernel 2, pads [1, 0]) fails), counts them "
        "twice with ceil_mode, handles SAME only in 2-D, pads 2-D inputs with NaN even without pads (which fails "
        "for int8 and uint8), and drops NaN (a window of only NaN fails). nxrt and onnxruntime follow the spec's "
        "geometry and skip NaN unless the whole window is NaN (then NaN).",
        _window_case("unit_max_pool_faults")(op), _pool_by_the_spec) for op in ("MaxPool", "MaxPool with Indices")],
    *[Difference(
        op,
        "With a stride or dilation above 1 the reference's MaxPool sizes SAME_LOWER outputs floor(in / stride) "
        "(the spec: ceil) and pads them as SAME_UPPER, splits a negative SAME pad with floor division (shifting "
        "the windows by one), and keeps a NaN first tap as the maximum (later NaN taps are skipped). nxrt and "
        "onnxruntime skip NaN unless the whole window is NaN.",
        _window_case("strided_max_pool_faults")(op), _pool_by_the_spec) for op in ("MaxPool", "MaxPool with Indices")],
    Difference(
        "MaxPool with Indices",
        "The unit-stride MaxPool of the reference (see above) computes Indices within the plane, without the "
        "(n * C + c) * plane offset of the spec's flat range [0, N x C x D1 x ... x Dn), takes the window's argmax "
        "as coordinates over the output's shape, and ignores storage_order. nxrt and onnxruntime give flat "
        "offsets into X.",
        lambda opset, inputs, attrs: _window("unit_stride_max_pool")(opset, attrs), _pool_by_the_spec),
    Difference(
        "GlobalAveragePool",
        "The reference fails on an empty batch (numpy.average over the spatial axes of a [0, C, ...] array divides "
        "by its zero output size). The output is empty as well, as nxrt and onnxruntime give it.",
        lambda opset, inputs, attrs: inputs[0].shape[0] * inputs[0].shape[1] == 0,
        lambda op, opset, inputs, attrs: [np.zeros(inputs[0].shape[:2] + (1,) * (inputs[0].ndim - 2),
                                                   inputs[0].dtype)]),
    Difference(
        "GlobalMaxPool",
        "The spec defines GlobalMaxPool as MaxPool with the whole plane as its window; the reference's GlobalMaxPool "
        "is numpy's max, which propagates NaN, while its MaxPool skips NaN. nxrt follows MaxPool (NaN only from a "
        "plane of NaN), as onnxruntime does. The reference also reduces axes (R - 2, R - 1) for a rank-R input, the "
        "spatial axes only in 4-D (3-D: the channels and the one spatial axis, 5-D: the last two).",
        lambda opset, inputs, attrs: inputs[0].ndim != 4 or _window("nan_input")("", opset, inputs, attrs),
        _pool_by_the_spec),
    Difference(
        "LRN",
        "The reference loops over the batch size where the spec's square_sum runs over the channels (channels from "
        "N on get a square sum of 0; N > C fails), refuses inputs that are not 4-D (the spec's X is N x C x D1 x "
        "... x Dk), and computes in the input type (float32 squares overflow to inf beyond 1.8e19, giving 0). "
        "Compared with the spec's formula in float64, as nxrt computes it; onnxruntime computes float32 in "
        "float32.",
        _window_case("lrn_reference_faults")("LRN"),
        lambda op, opset, inputs, attrs: _window("lrn_by_the_spec")(inputs[0], attrs)),
    Difference(
        "StringNormalizer",
        "The spec removes the elements equal to a stop word, then changes case, and gives one empty string where "
        "nothing is left. The reference also strips accents (\"été\" -> \"ete\" with case_change_action NONE), "
        "removes stop words as space-separated words inside each element, and drops empty elements. Compared with "
        "the spec's steps, case changed by Unicode's simple case mapping (nxrt's choice for every locale; "
        "onnxruntime gives the same under a UTF-8 locale and refuses the default en_US where it is not installed).",
        lambda opset, inputs, attrs: True,
        _string_normalizer_by_the_spec,
    ),
    Difference(
        "StringSplit",
        "The reference fails on a rank-0 input (\"object of type 'NoneType' has no len()\"). Compared with the "
        "reference splitting the same string as shape [1]: pieces [k], count []. onnxruntime gives the same.",
        lambda opset, inputs, attrs: inputs[0].ndim == 0,
        _string_split_rank0,
    ),
    Difference(
        "TfIdfVectorizer",
        "The spec: \"By default, weights is an all-one tensor\"; the reference fails in modes IDF and TFIDF "
        "without weights (\"object of type 'NoneType' has no len()\"). Compared with the reference given "
        "all-one weights. onnxruntime gives the same.",
        lambda opset, inputs, attrs: attrs.get("mode") != "TF" and "weights" not in attrs,
        _tfidf_with_unit_weights,
    ),
    *[Difference(
        f"com.microsoft.{op}",
        "onnxruntime computes the row statistics of float32 / bfloat16 rows in float32: squares whose sum "
        "overflows it (near |v| = 2^64) give inv_std_var 0 and a zero or NaN output ([3e38, -3e38] normalizes to NaN, "
        "not [1, -1]; the RMS of [3e38, 3e38] gives output 0, not 1 * gamma); squares that underflow it give a "
        "statistic of 0 (the RMS of [1.2e-38] with epsilon 0 is 0 there, inv_std_var inf, output NaN; 1 * gamma by "
        "the spec); a row holding an infinity has mean "
        "NaN there, where the spec's mean is that infinity ([inf, 1]: inf); and it subtracts a float mean from "
        "values far from 0 next to their spread ([1e20, 1e20 + 1e13] normalizes to [0, 1.414], not [-1, 1]). nxrt "
        "takes such rows in double. Compared with the spec's formulas in float64 (contrib_spec.py).",
        _onnxruntime_float_layer_norm(op),
        _contrib_spec("embed_layer_norm" if op.startswith("Embed") else "skip_layer_norm"),
    ) for op in ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization")],
    Difference(
        "RegexFullMatch",
        "The spec's patterns are RE2's, whose Perl classes \\w, \\d, \\s (and \\b) are ASCII only; the reference "
        "matches with Python's re, where they are Unicode classes (\\w* matches \"été\" there, not in RE2). "
        "Compared with Python's re in ASCII mode for patterns holding those classes. onnxruntime (RE2) gives the "
        "same.",
        lambda opset, inputs, attrs: any(c in attrs["pattern"] for c in ("\\w", "\\W", "\\d", "\\D", "\\s", "\\S",
                                                                        "\\b", "\\B")),
        _regex_full_match_ascii_classes,
    ),
    Difference(
        "MelWeightMatrix",
        "The reference computes the mel edges in the type of lower_edge_hertz and upper_edge_hertz (float16, "
        "bfloat16 and float32 arithmetic: lower_edge_hertz / 700, log1p, ...) before it floors them to DFT bins, "
        "so an edge close to a bin boundary lands on another bin than the float64 computation (dft_length 3, "
        "sample_rate 8, edges 0.5 and 2.5 Hz in float16 give one triangle a row less). The spec defines the "
        "mel scale, not a precision; nxrt computes in float64. Compared with the reference given float64 edges. "
        "onnxruntime computes in float32.",
        lambda opset, inputs, attrs: inputs[3].dtype != np.float64,
        _mel_with_float64_edges,
    ),
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
    Difference(
        "Conv",
        "The reference dilates W by inserting zero weights between its taps, so the input values a dilation skips "
        "are multiplied by 0: a NaN or infinity there turns the output NaN, where the spec's window does not read "
        "them. Compared with the spec's sum over the dilated taps; nxrt and onnxruntime read only those.",
        _window_case("conv_dilation_faults")("Conv"),
        lambda op, opset, inputs, attrs: [_window("conv_by_the_spec")(*inputs[:2], inputs[2] if len(inputs) > 2
                                                                       else None, attrs)[0]]),
    Difference(
        "ConvTranspose",
        "The reference's ConvTranspose is wrong or fails for group > 1 (it writes one output channel per group and "
        "adds B by the group's local channel), for an empty batch (no output at all), with output_padding (its "
        "col2im then counts blocks over the padded size and fails) and with output_shape (it keeps the given pads, "
        "where the spec derives them from output_shape: SAME_UPPER total / 2 at the beginning, otherwise total - "
        "total / 2). Compared with the spec's sum over the taps that land on each output; nxrt and onnxruntime "
        "follow the spec (onnxruntime checked on groups with bias and on output_shape 5 and 7 over [0, 1, 2], "
        "stride 2).",
        _window_case("conv_transpose_faults")("ConvTranspose"),
        lambda op, opset, inputs, attrs: [_window("conv_transpose_by_the_spec")(
            *inputs[:2], inputs[2] if len(inputs) > 2 else None, attrs)[0]]),
    Difference(
        "DeformConv",
        "The reference's DeformConv runs 2-D inputs only (the spec's X is N x C x D1 x ... x Dn) and normalises "
        "its sampling grid by (side - 1), which divides by zero for a side of 1. Compared with the spec's "
        "multilinear sampling over the 2^R corners around each point, as nxrt computes it.",
        _window_case("deform_conv_faults")("DeformConv"), _deform_conv_by_the_spec),
    Difference(
        "DeformConv",
        "The reference samples through GridSample, which weighs all 2^R corners around a point, also those of "
        "weight 0: a NaN or infinity next to a point on the input's grid (an integral offset) makes it NaN. The "
        "spec: \"Use linear interpolation for fractional offset values\", so a whole coordinate reads that value "
        "alone (with zero offsets DeformConv is Conv). Compared with the spec's multilinear sampling over the "
        "corners of nonzero weight, as nxrt computes it; onnxruntime weighs all corners as the reference does (a "
        "1x1 DeformConv of [[1, 2, inf], ...] with zero offsets gives [1, NaN, inf, ...] in both, [1, 2, inf, ...] "
        "in nxrt).",
        _window_case("non_finite_input")("DeformConv"), _deform_conv_by_the_spec),
    Difference(
        "Col2Im",
        "The reference fails on an empty batch (its result stays None). The output is empty, as nxrt and "
        "onnxruntime give it.",
        lambda opset, inputs, attrs: inputs[0].shape[0] == 0,
        lambda op, opset, inputs, attrs: [_window("col2im_by_the_spec")(
            inputs[0], inputs[1].tolist(), inputs[2].tolist(), attrs)[0]]),
    Difference(
        "Loop",
        "The spec stacks each iteration's scan output along a new first axis ([iterations, *shape]); the reference "
        "concatenates them with numpy.vstack, which gives [iterations, 1] for rank-0 values and [iterations * a, b] "
        "for [a, b] ones, and it fails when no iteration runs (\"need at least one array to concatenate\"). It also "
        "runs no iteration when cond is omitted, where the spec runs M iterations and ignores the body's condition "
        "(\"input (trip_count, \"\") ... analogous to a for loop\"). Compared with the spec's iteration count, the "
        "reference's values for it restacked as the spec says, and an empty [0] scan output for a loop that runs no "
        "iteration (the body's output shape is not declared; onnxruntime gives the same [0]). onnxruntime ends an "
        "(M, \"\") loop at the body's first false condition.",
        lambda opset, inputs, attrs: True,
        _loop_stacked,
    ),
    Difference(
        "Shape",
        "For an end below -rank the reference adds the rank once and slices with the still negative result, which "
        "Python counts from the back again: Shape([2, 3, 4] input, end=-4) is [2, 3] there. The spec clamps end + "
        "rank into [0, rank]: an empty shape, as nxrt and onnxruntime give it.",
        lambda opset, inputs, attrs: attrs.get("end", 0) < -inputs[0].ndim,
        _shape_by_the_spec,
    ),
    Difference(
        "GatherND",
        "The reference reshapes the indices to (batch, -1, k), which numpy cannot do for zero index tuples (\"cannot "
        "reshape array of size 0\"). The spec's output is then empty, of shape indices.shape[:-1] + "
        "data.shape[batch_dims + k:], as nxrt and onnxruntime give it.",
        lambda opset, inputs, attrs: inputs[1].size == 0,
        _gather_nd_by_the_spec,
    ),
    Difference(
        "OneHot",
        "The reference takes numpy.arange(depth), which numpy 2 refuses for a depth of shape [1] (\"only "
        "0-dimensional arrays can be converted to Python scalars\"); the spec allows a \"Scalar or rank 1 tensor "
        "containing exactly one element\". Compared with the spec's OneHot; onnxruntime takes either shape.",
        lambda opset, inputs, attrs: inputs[1].ndim != 0,
        _onnx_one_hot_by_the_spec,
    ),
    Difference(
        "OneHot",
        "The spec casts a non-integer depth and non-integer indices to int64; the reference keeps the fractions: "
        "depth 3.5 gives 4 classes there (numpy.arange(3.5)), 3 by the spec, and index 1.5 matches no class there, "
        "class 1 by the spec. nxrt casts toward zero; onnxruntime gives 3 classes for depth 3.5 and has no float "
        "indices.",
        lambda opset, inputs, attrs: any(a.dtype.kind not in "iu" and bool((a.astype(np.float64) % 1 != 0).any())
                                         for a in inputs[:2]),
        _onnx_one_hot_by_the_spec,
    ),
    Difference(
        "OneHot",
        "OneHot-9 says indices \"outside the range [0, depth) will result in one-hot representation with all "
        "'off_value' values\"; the reference counts a negative index from the back at every opset (OneHot-11's "
        "rule), as onnxruntime also does at opset 9. nxrt follows each opset's wording.",
        lambda opset, inputs, attrs: opset < 11 and bool((inputs[0].astype(np.float64) < 0).any()),
        _onnx_one_hot_by_the_spec,
    ),
    Difference(
        "OneHot",
        "The spec fills on_value at each index's class and off_value elsewhere; the reference computes indicator * "
        "(on - off) + off, which fails for strings and bools (numpy has no subtraction for them), gives NaN where "
        "on or off is infinite and misses them where they differ greatly in magnitude (on 1, off 1e8 in float32 "
        "gives 0). nxrt and onnxruntime copy the two values (onnxruntime has no bool values).",
        lambda opset, inputs, attrs: _one_hot_arithmetic_is_inexact(inputs[2]),
        _onnx_one_hot_by_the_spec,
    ),
    Difference(
        "Unique",
        "With sorted=0 the reference reorders the sorted results by first occurrence with numpy.take(x, indices, "
        "axis=0): on the input as given instead of the flattened one (a [2, 2] input gives rows, not elements) and "
        "along axis 0 instead of `axis`, and it fails on a rank-0 input. Compared with the spec's outputs in "
        "first-occurrence order, which nxrt and onnxruntime give (Unique([[2, 1], [1, 3]], sorted=0) is [2, 1, 3]).",
        lambda opset, inputs, attrs: not attrs.get("sorted", 1) and not (
            inputs[0].ndim == 1 and attrs.get("axis", 0) in (0, -1)),
        _unique_by_the_spec,
    ),
    Difference(
        "Unique",
        "With an axis the reference calls numpy.unique(axis=...), which refuses string tensors and ignores "
        "equal_nan: two slices holding NaN at the same place stay distinct there, while for a flattened input the "
        "reference counts NaN equal to NaN. nxrt compares slices element by element with the flattened rule (NaN "
        "equals NaN, -0.0 equals 0.0, NaN sorts last, strings by code point), as onnxruntime does (one [NaN, 1] "
        "row from two).",
        lambda opset, inputs, attrs: "axis" in attrs and (
            inputs[0].dtype == object or bool(np.isnan(inputs[0].astype(np.float64)).any())),
        _unique_by_the_spec,
    ),
    Difference(
        "Pad",
        "The reference passes the pads to numpy.pad, which refuses negative widths; the spec's pads \"add or remove "
        "(if negative)\" elements. Compared with the reference on the input cropped by the negative pads, padded "
        "by the positive ones: removal first, as onnxruntime does (wrap of [1, 2, 3, 4] with pads [-1, 1] is [2, "
        "3, 4, 2]; onnxruntime refuses reflect pads beyond the remaining elements, which nxrt reflects again as "
        "numpy does).",
        lambda opset, inputs, attrs: min((p for w in _pad_widths(opset, inputs, attrs) for p in w), default=0) < 0,
        _pad_removing_first,
    ),
    Difference(
        "Pad",
        "A string tensor padded in constant mode without constant_value gets the integer 0 from the reference "
        "(numpy.pad's default); the spec's default is \"0, empty string, or False\", so \"\" for strings, which "
        "nxrt writes (onnxruntime has no string Pad).",
        lambda opset, inputs, attrs: inputs[0].dtype == object and inputs[0].ndim > 0
        and attrs.get("mode", "constant") == "constant" and (len(inputs) < 3 or inputs[2] is None),
        _pad_removing_first,
    ),
    Difference(
        "CenterCropPad",
        "The reference pads into numpy.zeros of the input's type, which for strings holds the integer 0; the "
        "zero of a string tensor is \"\" (Pad's default constant), which nxrt writes. onnxruntime has no string "
        "CenterCropPad.",
        lambda opset, inputs, attrs: inputs[0].dtype == object,
        _center_crop_pad_strings,
    ),
    Difference(
        "ScatterElements",
        "The reference's max / min reduction is Python's max / min, which keep the first argument when a NaN takes "
        "part: a NaN update leaves the data value (max(1, nan) = 1) while a NaN already in the data stays. Its "
        "ScatterND uses numpy.maximum / minimum, which propagate NaN from either side; the spec words both "
        "reductions alike. nxrt propagates NaN in both ops, as onnxruntime does (ScatterElements([1], [0], [nan], "
        "max) is [nan] there).",
        lambda opset, inputs, attrs: attrs.get("reduction") in ("max", "min") and inputs[0].dtype.kind in "fV"
        and bool(np.isnan(inputs[2].astype(np.float64)).any()),
        _scatter_elements_nan_propagating,
    ),
    Difference(
        "ai.onnx.ml.LinearRegressor",
        "The reference implements post_transform NONE only (NotImplementedError), adds NaN when intercepts are "
        "omitted (np.array(None)), casts the coefficients to integer inputs' type and returns the input's type "
        "(the schema's Y is float), computes float32 inputs in float32 (x . w loses the digits that cancel), "
        "returns a 1-D input's scores as [targets] (the spec's one example: [1, targets]) and takes numpy's "
        "matrix product, which makes NaN * 0 zero. Compared with x . w + b in float64 (products one by one), "
        "the reference's own post-transforms (PROBIT as _probit) in float64, converted to float32 once; nxrt "
        "computes in double.",
        lambda opset, inputs, attrs: True,
        _linear_regressor_in_float64,
    ),
    Difference(
        "ai.onnx.ml.LinearClassifier",
        "The reference adds NaN scores when intercepts are omitted, computes in float32 (integer inputs lose their "
        "digits beyond 2^24; x . w loses what cancels) but in float64 for double inputs (Z then float64, the "
        "schema's is float), and its PROBIT gives 0 for a score of 0 or 1 (its erf^-1(+-1) returns 0; the limit, "
        "which nxrt and onnxruntime give, is -inf / +inf); numpy's matrix product makes NaN * 0 zero. Compared "
        "with x . w + b in float64 (products one by one), converted to float32 once, then the reference's own "
        "float32 post-transform and label rule.",
        lambda opset, inputs, attrs: True,
        _linear_classifier_in_float64,
    ),
    Difference(
        "ai.onnx.ml.TreeEnsemble",
        "The reference ignores post_transform (the spec: \"the transform to apply to the score\"), fails on an "
        "input of no rows (apply_along_axis), sends a NaN true at a BRANCH_NEQ node without a missing-value track "
        "(NaN != split; the spec: the false branch when nodes_missing_value_tracks_true is 0), leaves a target "
        "no leaf reaches at +-float max under MIN / MAX (nxrt: 0, as under SUM), reads a one-leaf tree's weight "
        "at the root's node index instead of the leaf it names and adds float16 weights in float16. Compared with the reference on float32 copies of float16 inputs with NEQ nodes rewritten as "
        "the equivalent EQ nodes, unreached MIN / MAX targets 0, then its own post-transforms.",
        lambda opset, inputs, attrs: True,
        _tree_ensemble_by_the_spec,
    ),
    Difference(
        "GroupNormalization",
        "The reference (the schema's function body) fails on a zero-size X: its Reshape to [N, num_groups, -1] "
        "cannot infer the -1 from no elements (\"cannot reshape array of size 0\", or \"index 3 is out of "
        "bounds\" for an empty spatial dim). The spec's Y has X's shape, so it is empty, as nxrt gives it; "
        "onnxruntime runs the same function body and fails in the same Reshape.",
        lambda opset, inputs, attrs: inputs[0].size == 0,
        lambda op, opset, inputs, attrs: [inputs[0].copy()],
    ),
    Difference(
        "ScatterND",
        "The reference's max / min reduction is numpy.maximum / minimum, which have no loop for strings (the "
        "object elements become '<U' arrays: \"ufunc 'maximum' did not contain a loop\"); its ScatterElements takes "
        "Python's max / min, code point order. nxrt orders strings that way in both ops (bytewise UTF-8); "
        "onnxruntime refuses string max / min.",
        lambda opset, inputs, attrs: inputs[0].dtype == object and attrs.get("reduction") in ("max", "min"),
        _scatter_nd_strings_by_code_point,
    ),
    Difference(
        "Resize",
        "Resize-10 takes (X, scales); the reference reads its second input as roi and fails (\"output_size is "
        "None and scale_factors is None\"). The spec gives output lengths floor(length * scale) and the modes "
        "nearest and linear, no coordinate rule: compared with asymmetric coordinates (x / scale), nearest as "
        "floor when an axis grows and ceil when it shrinks, as onnxruntime does for opset 10 and its backend "
        "tests fix.",
        lambda opset, inputs, attrs: opset == 10,
        _resize_asymmetric_by_the_spec,
    ),
    Difference(
        "Resize",
        "The reference resizes nearest as a two-tap interpolation in float64 with weights 0 and 1, so a NaN or "
        "infinity next to the chosen element gives NaN (0 * inf), it clips float results to the type's finite "
        "range (+-inf becomes +-max), rounds 64-bit integers beyond 2^53 to float64 (int64 min + 1 comes back "
        "as int64 min), fails on bool (\"not inexact\") and refuses antialias = 1, which the "
        "spec applies to linear and cubic only. Nearest copies \"the nearest pixel\": compared with the elements "
        "the reference chooses (found by resizing element indices). onnxruntime copies the element too.",
        lambda opset, inputs, attrs: attrs.get("mode", "nearest") == "nearest" and _reference_knows(attrs) and (
            inputs[0].dtype == np.bool_ or _resize_float_can_overflow(inputs[0]) or bool(attrs.get("antialias"))
            or _resize_64_bit_extremes(inputs[0], 2.0 ** 53)),
        _resize_nearest_through_indices,
    ),
    Difference(
        "Resize",
        "The reference clips linear and cubic float results to the type's finite range: an infinite input (or a "
        "cubic overshoot past max) gives +-max where the interpolated value is +-inf; for int64 and uint64 it "
        "clips to float(max) = 2^63 or 2^64, which numpy's astype wraps (uint64 max resized by 1 gives 0). "
        "Compared with the reference's float64 result rounded to the type as IEEE does, integers saturating. "
        "onnxruntime gives inf.",
        lambda opset, inputs, attrs: (_resize_float_can_overflow(inputs[0]) or _resize_64_bit_extremes(inputs[0]))
        and _reference_knows(attrs),
        lambda op, opset, inputs, attrs: _reference_resize_unclipped(opset, inputs, attrs),
    ),
    Difference(
        "Resize",
        "The reference transposes X by the axes as given and fails on a negative one (\"axes don't match "
        "array\"), which the spec accepts (\"Accepted range is [-r, r-1]\"). Compared with the reference given "
        "the same axes counted from the front.",
        lambda opset, inputs, attrs: any(a < 0 for a in attrs.get("axes", [])) and _reference_knows(attrs),
        lambda op, opset, inputs, attrs: _reference_resize_unclipped(opset, inputs, attrs),
    ),
    Difference(
        "Upsample",
        "The reference implements Upsample only for nearest with integer scales (\"Not implemented for "
        "mode='linear'\") and fails at opset 7 (scales as an attribute). Compared with the spec as for Resize-10: "
        "output lengths floor(length * scale), asymmetric coordinates, nearest taking floor (Upsample's scales "
        "are at least 1), linear as the reference's Resize-11 asymmetric.",
        lambda opset, inputs, attrs: opset < 9 or attrs.get("mode", "nearest") != "nearest" or bool(
            (np.asarray(inputs[1]) != np.round(np.asarray(inputs[1]))).any()),
        _resize_asymmetric_by_the_spec,
    ),
    Difference(
        "GroupNormalization",
        "From opset 21 the function body computes stage one (statistics and normalization) in stash_type, float32 "
        "by default, so a float64 X gets float32 precision (5e-7 relative off float64, and a subnormal float64 "
        "value becomes 0: x - mean of 2.2e-309 and 1.1e-309 is 0 there, times an infinite scale NaN). nxrt "
        "computes float64 X in double, more precise than the stash type asks (docs/numerics.md); onnxruntime runs "
        "the function body as the reference does. Compared with the reference at stash_type 11 (float64).",
        lambda opset, inputs, attrs: opset >= 21 and inputs[0].dtype == np.float64 and inputs[0].size > 0
        and attrs.get("stash_type", 1) != 11,
        lambda op, opset, inputs, attrs: _reference_with(op, opset, inputs, {**attrs, "stash_type": 11}),
    ),
    Difference(
        "Resize",
        "The reference does not implement coordinate_transformation_mode tf_half_pixel_for_nn (Resize-11: "
        "\"Invalid coordinate_transformation_mode\"). Compared with the spec's x_original = (x_resized + 0.5) / "
        "scale and the reference's nearest_mode rules (the mode is tested with nearest, which it was made for).",
        lambda opset, inputs, attrs: attrs.get("coordinate_transformation_mode") == "tf_half_pixel_for_nn",
        _resize_tf_half_pixel_for_nn,
    ),
    Difference(
        "QuantizeLinear",
        "For integer outputs the reference converts round(x / y_scale) to int32 before it adds the zero point and "
        "saturates: a ratio beyond the int32 range (x = 9.2e18, +inf) becomes INT32_MIN and saturates to the low "
        "end (0 for uint8), where the spec saturates the value (255); NaN becomes INT32_MIN too, which a negative "
        "zero point wraps to the high end (127 for int8 with zero point -128). nxrt computes in double, saturates "
        "and gives NaN the low end (what the reference gives with a zero point >= 0; the spec has no value for "
        "it). onnxruntime saturates too. Compared with the spec's formula, NaN to the low end.",
        lambda opset, inputs, attrs: _quantize_output_is_integer(inputs, attrs) and bool(
            (~np.isfinite(_quantize_ratios(inputs, attrs).astype(np.float64)) |
             (np.abs(_quantize_ratios(inputs, attrs).astype(np.float64)) >= 2.0 ** 31 - 2.0 ** 17)).any()),
        _quantize_by_the_spec,
    ),
    Difference(
        "QuantizeLinear",
        "For float8 outputs the reference drops y_zero_point (it returns the cast of x / y_scale). The spec: "
        "\"y_zero_point is usually not used for quantization to float8 ..., but the quantization formula remains "
        "the same for consistency\": x / y_scale + y_zero_point, which nxrt computes. Compared with that formula.",
        lambda opset, inputs, attrs: len(inputs) > 2 and inputs[2] is not None and inputs[2].dtype.itemsize == 1
        and inputs[2].dtype.kind not in "iu" and bool((inputs[2].astype(np.float32) != 0).any()),
        _quantize_by_the_spec,
    ),
    Difference(
        "QuantizeLinear",
        "Without the precision attribute the spec divides in the scale's type (\"The type of y_scale determines the "
        "precision of the division operation between x and y_scale\"); the reference divides with numpy's "
        "promotion (float32 x / float16 scale in float32, then rounds once to the integer). nxrt converts both "
        "operands to the scale's type and rounds the quotient to it, as the reference does for an explicit "
        "precision. Compared with that formula.",
        lambda opset, inputs, attrs: opset >= 23 and not attrs.get("precision")
        and inputs[0].dtype != inputs[1].dtype,
        _quantize_by_the_spec,
    ),
    Difference(
        "DequantizeLinear",
        "The reference has no DequantizeLinear before opset 19 (\"No implementation for operator "
        "'DequantizeLinear' ... version 10, found 19, 21, 23, 25\"). Opsets 10 and 13 define the same "
        "y = (x - x_zero_point) * x_scale for int8, uint8 and int32 with a float scale; compared with that formula.",
        lambda opset, inputs, attrs: opset < 19,
        _dequantize_by_the_spec,
    ),
    Difference(
        "DequantizeLinear",
        "For float8 inputs the reference drops a nonzero x_zero_point (its check that the zero point is 0 looks at "
        "the value converted to uint8, so 0.027 passes) and fails on an empty one (the minimum of a zero-size "
        "array). The spec: \"the dequantization formula remains the same for consistency\": "
        "(x - x_zero_point) * x_scale, which nxrt computes. Compared with that formula.",
        lambda opset, inputs, attrs: len(inputs) > 2 and inputs[2] is not None and inputs[2].dtype.itemsize == 1
        and inputs[2].dtype.kind not in "iu" and bool((inputs[2].astype(np.float32) != 0).any()
                                                       or inputs[2].size == 0),
        _dequantize_by_the_spec,
    ),
    Difference(
        "MeanVarianceNormalization",
        "The reference runs the schema's function body, whose epsilon is a float32 Constant added to the "
        "standard deviation without a cast: for any other X type it fails (\"Input type mismatch: float64 != "
        "float32 (operator 'Add')\"). The body's formula, (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), holds "
        "for every float type. Half types run through the harness's float32 copies; for float64 nxrt is "
        "compared with that formula in float64 (mvn_by_the_spec). onnxruntime expands the same body for float64 "
        "and fails the same way (\"bound to different types (tensor(double) and tensor(float))\").",
        lambda opset, inputs, attrs: inputs[0].dtype == np.float64,
        lambda op, opset, inputs, attrs: mvn_by_the_spec(inputs, attrs),
    ),
    Difference(
        "Pad",
        "For a rank-0 input the reference passes an empty pads list to numpy.pad, which refuses it (\"`pad_width` "
        "must be of integral type\": an empty array is float). A rank-0 tensor has no axis to pad: the output is "
        "the input, as nxrt and onnxruntime give it.",
        lambda opset, inputs, attrs: inputs[0].ndim == 0,
        lambda op, opset, inputs, attrs: [inputs[0].copy()],
    ),
    Difference(
        "Scan",
        "The reference implements only scan axis 0 and the forward direction for inputs and outputs (\"Scan is not "
        "implemented for other input axes than 0\"). Compared with the reference on the scan input moved to axis 0 "
        "(and reversed for direction 1), its scan outputs reversed for direction 1 and moved to their "
        "scan_output_axes, which is what the spec's axes and directions mean. onnxruntime gives the same.",
        lambda opset, inputs, attrs: opset >= 9 and inputs[1].dtype != object
        and (any(attrs["scan_input_axes"]) or any(attrs["scan_input_directions"])
                                                     or any(attrs["scan_output_axes"])
                                                     or any(attrs["scan_output_directions"])),
        _scan_through_axis_zero,
    ),
    Difference(
        "com.microsoft.FusedGemm",
        "onnxruntime skips C where beta is 0, so a NaN or infinite C gives activation(alpha * A' B') there; the "
        "schema's Y = activation(alpha * A' * B' + beta * C) keeps it, and 0 * NaN and 0 * inf are NaN, which nxrt "
        "gives (as for ai.onnx Gemm). Compared with the formula in float64 (contrib_spec.py).",
        lambda opset, inputs, attrs: attrs.get("beta", 1.0) == 0 and len(inputs) > 2 and inputs[2] is not None
        and not np.isfinite(inputs[2].astype(np.float64)).all(),
        _contrib_spec("fused_gemm"),
    ),
    Difference(
        "QLinearMatMul",
        "From opset 21 a, b and y may be float8. The reference converts float8 operands to int32 (truncating "
        "0.5 to 0) and looks up np.iinfo of a float8 output (\"Invalid integer data type 'V'\"). The spec's "
        "formula holds for every type: y = saturate((a - a_zero_point) @ (b - b_zero_point) * a_scale * b_scale / "
        "y_scale + y_zero_point), which nxrt computes (float8 outputs by Cast's saturating rules). onnxruntime has "
        "no float8 QLinearMatMul on CPU. Compared with that formula in float64.",
        lambda opset, inputs, attrs: any(_is_float8(inputs[i].dtype) for i in (0, 3, 7)),
        _qlinear_matmul_by_the_spec,
    ),
    Difference(
        "AffineGrid",
        "The reference returns float32 grids for every theta type (the output type is theta's, T1), builds the "
        "base grid with np.arange (its middle point of 3 is -1.1e-16, not 0) and multiplies through numpy's BLAS, "
        "which skips zero factors (inf * 0 gives 0). Compared with the spec's grid in float64: linspace points "
        "(2i + 1) / n - 1 (align_corners: -1 + 2i / (n - 1)) times theta with every product formed, rounded once "
        "to theta's type. onnxruntime computes in theta's type.",
        lambda opset, inputs, attrs: True,
        _affine_grid_by_the_spec,
    ),
    Difference(
        "Scan",
        "For strings the reference's scan slices of a rank-1 input are Python str scalars, which its body's "
        "Identity refuses (\"Issues with types [<class 'str'>]\"). Compared with the reference (and the axis and "
        "direction handling above) on int64 codes of the strings, decoded back: the body only passes values "
        "through. onnxruntime gives the same.",
        lambda opset, inputs, attrs: opset >= 9 and inputs[1].dtype == object,
        _scan_strings_as_codes,
    ),
    Difference(
        "ai.onnx.ml.SVMRegressor",
        "The reference implements post_transform NONE only (the spec: \"the transform to apply to the score\"; "
        "onnxruntime reads it and applies none), treats a 1-D input's elements as rows and sums in float32: "
        "3.4e38 x 2 overflows to inf and inf - inf gives NaN where the double sum is -inf, and a linear "
        "coefficient of 1.4e-45 times 0.5 underflows to 0 where the double product is positive (one_class's sign "
        "flips). Compared with the reference's kernels and parameters in nxrt's arithmetic (x . v in float32, the "
        "kernel of it in float64 rounded once, RBF distances in float64, sums and the linear form in float64), "
        "then the reference's post-transforms.",
        lambda opset, inputs, attrs: True,
        _svm_regressor_with_double_sums,
    ),
    Difference(
        "ImageDecoder",
        "The spec's RGB and BGR outputs are [H, W, 3]; the reference returns Pillow's array in the file's own mode, "
        "[H, W] for grey and palette images and [H, W, 4] for ones with alpha. Compared with Pillow's image "
        "converted to RGB (alpha dropped, colours as stored), reversed for BGR. onnxruntime gives [H, W, 3].",
        lambda opset, inputs, attrs: _pillow_mode(inputs[0]) not in ("RGB", "L")
        or (_pillow_mode(inputs[0]) == "L" and attrs.get("pixel_format", "RGB") != "Grayscale"),
        _decoded_through_rgb,
    ),
    Difference(
        "Range",
        "For integers the reference's numpy.arange divides (limit - start) by delta into a float64 before the ceil, "
        "which rounds a quotient just above an integer down to it: Range(0, INT64_MAX, INT64_MAX - 1) has 1 element "
        "there, 2 by the spec's ceil((limit - start) / delta) ([0, INT64_MAX - 1]). nxrt counts exactly (128-bit "
        "integers), and onnxruntime also gives 2 elements. Compared with the exact count.",
        _range_count_through_float,
        _range_of_integers_exactly,
    ),
    Difference(
        "Attention",
        "With no keys at all (kv_sequence_length and past_sequence_length 0) the reference fails (\"zero-size array "
        "to reduction operation maximum\": its softmax and fully-masked-row guard take a max over the empty key "
        "axis). Every query row is then fully masked, which \"produces a zero output row\" by the spec: Y is "
        "zeros, present_key / present_value are empty and qk_matmul_output has no columns. onnxruntime refuses "
        "(\"KV sequence length must be greater than 0\").",
        lambda opset, inputs, attrs: _attention_total_keys(inputs) == 0,
        _attention_reference,
    ),
    Difference(
        "Attention",
        "For 3-D inputs whose Y is empty (batch 0, q_sequence_length 0 or v_head_size 0) the reference fails "
        "(\"cannot reshape array of size 0 into shape (0,0,newaxis)\": it merges the heads back with a -1 "
        "dimension). Compared with the reference on the 4-D form of the same inputs, its Y merged back to 3-D. "
        "onnxruntime refuses an empty query (\"Q sequence length must be greater than 0\").",
        lambda opset, inputs, attrs: inputs[0].ndim == 3 and (inputs[0].shape[0] * inputs[0].shape[1] == 0
                                                               or inputs[2].shape[2] == 0),
        _attention_reference,
    ),
    Difference(
        "Attention",
        "With is_causal the reference builds the causal frontier from the attn_mask's own last two dimensions, so "
        "a mask that broadcasts over the queries (dimension -2 of 1) gets query 0's frontier for every query (a "
        "[1, 2] bool mask [False, True] with two queries: query 1 sees no key, its Y row is 0), and a mask of "
        "rank 1 fails (\"not enough values to unpack\"). The spec's frontier is per query (\"query i attends key j "
        "iff j <= i + offset\"), composed with the broadcast mask. Compared with the reference given the mask "
        "broadcast over the queries. onnxruntime refuses both masks (\"attn_mask must be 2D or 3D or 4D\", "
        "\"inconsistent q_sequence_length\").",
        lambda opset, inputs, attrs: _causal_with_query_broadcast_mask(inputs, attrs),
        _attention_reference,
    ),
    Difference(
        "Attention",
        "For float16 and bfloat16 with softcap the reference computes the softcap, the bias and the softmax in "
        "float32: the attribute reaches it as a numpy float32, which promotes the half-type scores (x / softcap). "
        "The function body casts softcap to T and rounds every step to T (Cast(softcap, T), Div, Tanh, Mul, Add, "
        "Softmax), as nxrt does: a float16 score of 6.6e-07 with softcap 30 is 0 after the function body's "
        "softcap (6.6e-07 / 30 underflows in float16), 6.6e-07 in the reference. Compared with the reference's "
        "own computation given the softcap as a Python float, which keeps the half type. onnxruntime computes "
        "the softcap in float32, as the reference does.",
        lambda opset, inputs, attrs: bool(attrs.get("softcap")) and inputs[0].dtype.itemsize == 2,
        _attention_reference,
    ),
    Difference(
        "Attention",
        "With softcap and qk_matmul_output_mode 0 the reference's qk_matmul_output is the soft-capped scores; the "
        "spec's mode 0 is \"the output of qk matmul\" (the function body's Identity(QKAttnWeight), before the "
        "softcap), mode 1 the soft-capped one. Compared with the reference's qk_matmul_output of the same case "
        "without softcap (Y and present_key / present_value from the case as given). onnxruntime gives the raw "
        "scores, as nxrt does.",
        lambda opset, inputs, attrs: bool(attrs.get("softcap")) and attrs.get("qk_matmul_output_mode", 0) == 0,
        _attention_reference,
    ),
    Difference(
        "Attention",
        "For float64 inputs without a scale the reference computes the default scale 1 / sqrt(head_size) and its "
        "square root in float64; the function body computes them in float (Cast(head_size, float), Sqrt, Div, "
        "Sqrt) and casts sqrt(scale) to T1, as the reference does for a given scale (a float32 attribute). The "
        "square roots differ by 3e-8 relative, probabilities of scores near 4 by 1e-7. Compared with the "
        "reference given that float32 default scale. onnxruntime computes the scale in float, as nxrt does.",
        lambda opset, inputs, attrs: _float64_default_scale(inputs, attrs),
        _attention_reference,
    ),
    Difference(
        "Attention",
        "For an integer attn_mask the reference adds the mask to the bias in numpy's promoted type (float64 for "
        "int32 and int64 masks) and runs the softmax there; the function body casts the bias to T (AttnBiasT = "
        "Cast(..., T1)) and computes the softmax in T, as nxrt does (float16 probabilities differ by ulps). "
        "Compared with the reference given the mask converted to T (its values are small integers, exact in every "
        "float type). onnxruntime accepts integer masks.",
        lambda opset, inputs, attrs: _integer_mask(inputs),
        _attention_reference,
    ),
    Difference(
        "SwiGLU",
        "For float16 and bfloat16 the reference computes alpha * A and the sigmoid in float32 (alpha reaches it as "
        "a numpy float32 attribute, the schema's default 1.0 too) and rounds the sigmoid to the half type once. "
        "The function body is Swish(A) * B with Swish = X * Sigmoid(CastLike(alpha, X) * X), each op rounded to "
        "T: alpha * A is rounded before the sigmoid (with alpha 1.702 the two differ by an ulp of the half type, "
        "more after the exponential). Compared with the function body's ops in the half type, the sigmoid "
        "computed in float64 and rounded once. onnxruntime has no kernel (it expands to Swish-24, which it lacks).",
        lambda opset, inputs, attrs: inputs[0].dtype.itemsize == 2,
        _swiglu_function_body,
    ),
    Difference(
        "ai.onnx.preview.FlexAttention",
        "For bfloat16 the reference's scores Q K^T (numpy's matmul of ml_dtypes bfloat16, which returns float32) "
        "are not rounded to bfloat16; the function body's Score = MatMul(QScaled, KTranspose) is in T and only "
        "then cast to the softmax precision, as nxrt computes it (2.25 * 2.4375 is 5.5 in bfloat16, 5.484375 in "
        "the reference, 1.5% apart after the exponential). Compared with the reference's computation with its "
        "bfloat16 products rounded to bfloat16. onnxruntime has no FlexAttention.",
        lambda opset, inputs, attrs: str(inputs[0].dtype) == "bfloat16",
        _flex_attention_matmul_in_bfloat16,
    ),
    Difference(
        "CausalConvWithState",
        "For float16 and bfloat16 the reference computes the depthwise convolution in the half type, rounding "
        "every product and partial sum (3.671875 * -2.25 + 1 is -7.265625 in float16 there, -7.26171875 summed in "
        "float32 and rounded once). The function body's Conv is one op, which nxrt computes in float32 and "
        "rounds once as it does Conv (the suite compares Conv's half types with the reference in float32, "
        "rounded once); the activation then runs in float on the rounded ConvOut. Compared with that. "
        "onnxruntime's CausalConvWithState has no half-type kernel to compare.",
        lambda opset, inputs, attrs: inputs[0].dtype.itemsize == 2,
        _causal_conv_function_body,
    ),
    Difference(
        "NegativeLogLikelihoodLoss",
        "With ignore_index -1, no weights and reduction mean the reference divides the summed losses by the count "
        "of every target, ignored ones included (it takes np.mean where no weights are given and ignore_index is "
        "-1); for any other ignore_index it divides by the count of the targets not ignored. The spec's mean "
        "divides \"by the sum of applied weights\" (the function body: ReduceSum of the losses over ReduceSum of "
        "the weights, 0 for an ignored target), so every target ignored gives 0 / 0 = NaN. Compared with the "
        "spec's formulas in float64. onnxruntime gives the spec's mean (0.2231 where the reference gives 0.1116).",
        lambda opset, inputs, attrs: attrs.get("ignore_index") == -1 and len(inputs) < 3
        and attrs.get("reduction", "mean") == "mean",
        _loss_by_the_spec,
    ),
    Difference(
        "NegativeLogLikelihoodLoss",
        "The reference fails on an empty input (\"cannot reshape array of size 0 into shape (0,1,newaxis)\": it "
        "flattens the trailing dims with -1). The spec's losses are then empty; their sum is 0 and their mean "
        "0 / 0 = NaN (the function body's ReduceSum over ReduceSum). Compared with the spec's formulas. "
        "onnxruntime gives 0 for the mean too.",
        lambda opset, inputs, attrs: inputs[0].size == 0,
        _loss_by_the_spec,
    ),
    Difference(
        "SoftmaxCrossEntropyLoss",
        "The reference takes the log-probabilities as log(softmax(x)) in the input type: a probability that "
        "underflows gives -inf where the log-probability is finite (float32 scores [0, 200]: log_prob [-inf, 0] "
        "there, [-200, 0] by the formula, and the loss of label 0 inf instead of 200), and near a probability of 1 "
        "the log loses digits (float32 [-0, 6]: -0.0024756414 there, -0.0024756852 by the formula). The function "
        "body takes LogSoftmax, (x - max) - log(sum(exp(x - max))). Compared with that formula, and the loss on "
        "it, in float64 (as nxrt computes them). onnxruntime gives [-200, 0] too.",
        lambda opset, inputs, attrs: True,
        _loss_by_the_spec,
    ),
    Difference(
        "NonMaxSuppression",
        "The reference fails where max_output_boxes_per_class is omitted, empty or negative (\"'NoneType' / 'int' "
        "object has no attribute 'size'\": it clamps a negative count to a Python 0) or iou_threshold is omitted, "
        "and on scalars of rank 0 (it reads element [0]). The spec's defaults are 0 boxes (an empty result) and "
        "an IoU threshold of 0, and it calls the inputs scalars. Compared with the reference given [0] for those "
        "counts (its own clamp), [0.0] and the scalars as shape [1]. onnxruntime reads them the same way.",
        _nms_reference_fails,
        _nms_with_defaults,
    ),
    Difference(
        "ai.onnx.preview.training.Adam",
        "For more than one optimized tensor the reference converts every output to float32 (a double X' loses "
        "the digits beyond float32). The outputs have the inputs' type T3. Compared with the spec's update in "
        "float64 rounded once to the tensor's type (the reference's single-tensor form). onnxruntime has no "
        "training ops.",
        lambda opset, inputs, attrs: len(inputs) > 6,
        _adam_by_the_spec,
    ),
    Difference(
        "Resize",
        "With tf_crop_and_resize the reference computes x_original from roi's elements in roi's type (float16: "
        "(end - start) and start * (length - 1) rounded to 11 bits), so a position at the crop's edge "
        "(start 0.30005, end 1, length 4) falls just outside and takes extrapolation_value where the spec's "
        "formula on the values lands on the edge. Compared with the reference given roi as float64; nxrt "
        "computes the coordinates in double.",
        lambda opset, inputs, attrs: attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize"
        and inputs[1] is not None and inputs[1].dtype != np.float64,
        lambda op, opset, inputs, attrs: _reference_resize_unclipped(opset, inputs, attrs),
    ),
    *[Difference(
        f"com.microsoft.{op}",
        "onnxruntime converts the scaled result to a 32-bit integer before it saturates: beyond the int32 range "
        "the conversion gives INT_MIN, so QLinearAdd(A 0, B 1, scales 1, C_scale 1e-20) is 0 in uint8 there. The "
        "schema's C = (A_scale (A - A_zp) + B_scale (B - B_zp)) / C_scale + C_zp saturates to 255, which nxrt "
        "gives. Compared with the formula in float64, rounded half to even and saturated (contrib_spec.py).",
        _qlinear_beyond_int32,
        _contrib_spec("qlinear_binary"),
    ) for op in ("QLinearAdd", "QLinearMul")],
    Difference(
        "Resize",
        "The reference passes cubic_coeff_a to its cubic coefficients as numpy.float32, so they are computed in "
        "float32 (7 digits): a cubic resize of int32 [524286, 0] by 1.3 gives 172256.34 where the float64 "
        "coefficients give 172256.71 (172256 against 172257 after rounding). Compared with the reference given "
        "the coefficient as a float64 number; nxrt computes in double.",
        lambda opset, inputs, attrs: attrs.get("mode") == "cubic" and _reference_knows(attrs),
        lambda op, opset, inputs, attrs: _reference_resize_unclipped(opset, inputs, attrs),
    ),
    Difference(
        "com.microsoft.MatMulIntegerToFloat",
        "With K = 0 (A [M, 0], B [0, N]) onnxruntime returns what its output buffer held (4.2e-36, 1.0, ...) and "
        "drops the bias; the product of an empty sum is 0, so Y is the bias (or 0), which nxrt gives. Compared "
        "with the formula (contrib_spec.py).",
        lambda opset, inputs, attrs: inputs[0].shape[-1] == 0,
        _contrib_spec("matmul_integer_to_float"),
    ),
    *[Difference(
        f"com.microsoft.{op}",
        "For uint8 A with int8 B onnxruntime's AVX2 kernel multiplies with vpmaddubsw, which adds each pair of "
        "adjacent products with int16 saturation: A [4, 255] times B [127, 127] is 32767 there, 32893 (4 * 127 + "
        "255 * 127) by the schema's sum, which nxrt computes exactly (QAttention's projection likewise). Compared "
        "with the formula, exact sums scaled in float64 (QAttention: onnxruntime's float Attention of the "
        "dequantized input and weight; contrib_spec.py).",
        (lambda opset, inputs, attrs, op=op: _u8s8_operands(op, inputs, attrs)),
        _contrib_spec(function),
    ) for op, function in (("MatMulIntegerToFloat", "matmul_integer_to_float"),
                           ("DynamicQuantizeMatMul", "dynamic_quantize_matmul"), ("QGemm", "qgemm"),
                           ("QAttention", "qattention"))],
    Difference(
        "com.microsoft.DynamicQuantizeMatMul",
        "With K = 0 onnxruntime returns what its output buffer held (7.1e22, ...) and drops the bias; Y is the "
        "bias (or 0), which nxrt gives. Compared with the formula (contrib_spec.py).",
        lambda opset, inputs, attrs: inputs[0].shape[-1] == 0,
        _contrib_spec("dynamic_quantize_matmul"),
    ),
    Difference(
        "ai.onnx.ml.TreeEnsembleRegressor",
        "The reference implements post_transform NONE only, fails on *_as_tensor attributes (it reads the list "
        "forms) and on a NaN feature when nodes_missing_value_tracks_true is omitted (the spec: false for every "
        "node), returns integer inputs' type (the schema's Y is float) and treats a 1-D input's elements as "
        "rows. Compared with the reference on float64 [N, F] copies with the list forms and tracks of 0, then "
        "its own post-transforms in float64, converted to float32 once (nxrt sums in double).",
        lambda opset, inputs, attrs: True,
        _tree_ensemble_regressor_by_the_reference,
    ),
]


# nxrt's own documented accuracy where it is stated in absolute terms: (op, dtype name) -> (atol, reason).
KERNEL_ATOL = {
    ("Gelu", "float32"): (
        2.5e-7,
        "nxrt's float32 Gelu (erf form) evaluates x / (1 + 2^y) with a polynomial y, accurate to 2e-7 absolute or 3 "
        "ulp (ep/cpu/microkernels/vector_math_coefficients.h): for x < -2.5 the result is below 0.016 and the "
        "absolute bound is the looser one (Gelu(-3) = -0.00404975 against -0.00404969). onnxruntime's float32 Gelu "
        "is of the same absolute accuracy.",
    ),
}


def kernel_atol(op, dtype):
    return KERNEL_ATOL.get((op, str(dtype)), (0.0, ""))[0]


def expected_for(op, opset, inputs, attrs):
    """The replacement oracle for this case, or None when the reference is right."""
    for difference in DIFFERENCES:
        if difference.op == op and difference.applies(opset, inputs, attrs):
            return lambda inputs, attrs, d=difference: d.expected(op, opset, inputs, attrs)
    return None
