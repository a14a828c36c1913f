"""Known differences of the matrix products (MatMul, Gemm, MatMulInteger, QLinearMatMul and the com.microsoft
quantized products: FusedGemm, QLinearAdd / QLinearMul, MatMulIntegerToFloat, DynamicQuantizeMatMul, QGemm,
QAttention) and of QuantizeLinear / DequantizeLinear."""

import numpy as np

from .common import Difference, _contrib_spec


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


def _qlinear_sigmoid_by_the_spec(op, opset, inputs, attrs):
    """QLinearSigmoid as its schema defines it, in float64: Y = quantize(sigmoid(dequantize(X))), rounding half to
    even and saturating to the element type (omitted zero points are 0)."""
    x, x_scale, x_zero, y_scale, y_zero = (list(inputs) + [None] * 5)[:5]
    x_zero = 0.0 if x_zero is None else x_zero.astype(np.float64)
    y_zero = 0.0 if y_zero is None else y_zero.astype(np.float64)
    with np.errstate(all="ignore"):
        real = (x.astype(np.float64) - x_zero) * float(x_scale)
        quantized = np.rint((1.0 / (1.0 + np.exp(-real))) / float(y_scale)) + y_zero
    info = np.iinfo(x.dtype)
    return [np.clip(quantized, info.min, info.max).astype(x.dtype)]


DIFFERENCES = [
    Difference(
        "com.microsoft.QLinearSigmoid",
        "onnxruntime's float sigmoid is an approximation that reaches 0 near x = -18 (sigmoid(-18) is 1.5e-8): "
        "divided by a Y_scale below 1e-6 its error exceeds the quantum (uint8 0 where the quotient saturates to "
        "255). Compared there with the schema's formula in float64.",
        lambda opset, inputs, attrs: float(inputs[3]) < 1e-6,
        _qlinear_sigmoid_by_the_spec,
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
]
