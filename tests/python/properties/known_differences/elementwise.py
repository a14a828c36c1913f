"""Known differences of element-wise ops: Erf, HardSwish, Gelu, PRelu, Pow, Shrink, SwiGLU and the com.microsoft
FastGelu and QuickGelu (compared with contrib_spec.py, as onnx.reference has no contrib ops)."""

import math

import numpy as np

from .common import Difference, _contrib_spec


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


def _swiglu_function_body(op, opset, inputs, attrs):
    """SwiGLU's function body for a half type, every op rounded to it: CastLike(alpha), alpha * A, Sigmoid (one
    op: computed in float64, rounded once), A * sigmoid, then * B."""
    a, b = inputs
    alpha = np.array(attrs.get("alpha", 1.0), np.float32).astype(a.dtype)
    with np.errstate(all="ignore"):
        scaled = (alpha * a).astype(a.dtype)
        sigmoid = (1.0 / (1.0 + np.exp(-scaled.astype(np.float64)))).astype(a.dtype)
        return [((a * sigmoid).astype(a.dtype) * b).astype(a.dtype)]


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
        "Shrink",
        "For integers the reference computes in float32 (up to 16 bits) or float64 and converts back with "
        "numpy's astype, which wraps what falls outside the type (Shrink(uint8 255, bias -1, lambd 0) gives 0, "
        "int64 max with bias 0 gives int64 min). nxrt saturates to the type's range instead (255, int64 max). "
        "onnxruntime computes in float32 and casts.",
        lambda opset, inputs, attrs: inputs[0].dtype.kind in "iu",
        _shrink_saturating,
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
]
