"""Cases where onnx.reference.ReferenceEvaluator is wrong, each with the reason, and what the property tests
compare nxrt against there instead. The spec decides; where it is silent the reference does, unless its result is
a documented bug of the reference (listed here). onnxruntime's answer for the same case is noted beside it."""

import math
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
