"""com.microsoft quantized ops on generated inputs (QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
QLinearConcat, QLinearWhere, QLinearSoftmax, QLinearGlobalAveragePool, QLinearAveragePool, QuantizeLinear,
DequantizeLinear, MatMulIntegerToFloat, DynamicQuantizeMatMul, QGemm, MatMulNBits, GatherBlockQuantized), every
quantized type of their contrib type constraints that onnxruntime's CPU provider runs, against onnxruntime
(contrib_harness; onnx.reference has none of them). Quantized values cover their whole range; scales are positive
finite floats from 2^-12 to 16 with some extreme ones (1e-20, 1e20), zero points anywhere in their type's range.

Tolerances: where a quantized result comes from rounding a float computation, both runtimes round half to even,
but they reach the value by different float steps (onnxruntime multiplies by scale ratios, nxrt dequantizes
first; lookup tables for Sigmoid and LeakyRelu): a value within float rounding of a half-way point may land on
either neighbour, so those results may differ by one quantization step (atol 1). Results that only select or copy
quantized values are exact."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import contrib_spec
import known_differences
from contrib_harness import F16, F32, check_contrib
from property_harness import SETTINGS
from property_values import arrays, broadcastable_shapes, shapes

QUANT = [np.dtype(np.uint8), np.dtype(np.int8)]


def quantized(dtype, shape):
    info = np.iinfo(dtype)
    return arrays(dtype, shape, st.integers(int(info.min), int(info.max)))


def scale():
    """A positive finite scale as a float32 scalar: mostly ordinary, some extreme."""
    ordinary = st.floats(2.0 ** -12, 16.0, width=32)
    return st.one_of(ordinary, ordinary, ordinary, st.sampled_from([1e-20, 1e20, 1.0, 2.0 ** -8])).map(
        lambda v: np.array(v, np.float32))


def zero_point(dtype):
    info = np.iinfo(dtype)
    return st.integers(int(info.min), int(info.max)).map(lambda v: np.array(v, dtype))


def optional(data, strategy, label):
    """A drawn value, or None (an omitted optional input)."""
    return data.draw(st.one_of(st.none(), strategy), label=label)


def zero_points_given(inputs, dtype, slots):
    """`inputs` with the omitted zero points at `slots` given as the schema's default, 0: onnxruntime fails on an
    omitted QLinearAdd / QLinearMul zero point (type inference) and aborts on an omitted trailing QLinearSigmoid /
    QLinearLeakyRelu Y_zero_point, so it runs the case with the default written out."""
    given = list(inputs) + [None] * (max(slots) + 1 - len(inputs))
    for slot in slots:
        if given[slot] is None:
            given[slot] = np.array(0, dtype)
    return given


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", QUANT, ids=str)
@SETTINGS
@given(data=st.data())
def test_qlinear_binary(op, dtype, data):
    shape_a, shape_b = data.draw(broadcastable_shapes(2), label="shapes")
    inputs = [data.draw(quantized(dtype, shape_a), label="A"), data.draw(scale(), label="A_scale"),
              optional(data, zero_point(dtype), "A_zero_point"),
              data.draw(quantized(dtype, shape_b), label="B"), data.draw(scale(), label="B_scale"),
              optional(data, zero_point(dtype), "B_zero_point"),
              data.draw(scale(), label="C_scale"), optional(data, zero_point(dtype), "C_zero_point")]
    check_contrib(op, inputs, atol=1, peer_inputs=zero_points_given(inputs, dtype, (2, 5, 7)),
                  expected=known_differences.expected_for(f"com.microsoft.{op}", 1, inputs, {}))


@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu"])
@pytest.mark.parametrize("dtype", QUANT, ids=str)
@SETTINGS
@given(data=st.data())
def test_qlinear_unary(op, dtype, data):
    inputs = [data.draw(quantized(dtype, shapes()), label="X"), data.draw(scale(), label="X_scale"),
              optional(data, zero_point(dtype), "X_zero_point"), data.draw(scale(), label="Y_scale"),
              optional(data, zero_point(dtype), "Y_zero_point")]
    attrs = {}
    if op == "QLinearLeakyRelu":
        alpha = data.draw(st.sampled_from([None, 0.01, 0.5, -0.25, 1.5]), label="alpha")
        attrs = {} if alpha is None else {"alpha": alpha}
    check_contrib(op, inputs, attrs, atol=1, peer_inputs=zero_points_given(inputs, dtype, (2, 4)),
                  expected=known_differences.expected_for(f"com.microsoft.{op}", 1, inputs, attrs))


@pytest.mark.parametrize("dtype", QUANT, ids=str)
@SETTINGS
@given(data=st.data())
def test_qlinear_concat(dtype, data):
    base = data.draw(shapes(min_rank=1, max_rank=4, max_side=3), label="shape")
    axis = data.draw(st.integers(-len(base), len(base) - 1), label="axis")
    count = data.draw(st.integers(1, 3), label="inputs")
    y_scale, y_zero = data.draw(scale(), label="Y_scale"), data.draw(zero_point(dtype), label="Y_zero_point")
    inputs = [y_scale, y_zero]
    for i in range(count):
        shape = list(base)
        shape[axis] = data.draw(st.integers(0, 3), label="axis dim")
        # Some inputs share Y's parameters (copied as they are), the others are requantized.
        same = data.draw(st.booleans(), label="Y's parameters")
        inputs += [data.draw(quantized(dtype, tuple(shape)), label="X"),
                   y_scale if same else data.draw(scale(), label="X_scale"),
                   y_zero if same else data.draw(zero_point(dtype), label="X_zero_point")]
    check_contrib("QLinearConcat", inputs, {"axis": axis}, atol=1)


@pytest.mark.parametrize("dtype", QUANT, ids=str)
@SETTINGS
@given(data=st.data())
def test_qlinear_where(dtype, data):
    shape_c, shape_x, shape_y = data.draw(broadcastable_shapes(3), label="shapes")
    inputs = [data.draw(arrays(np.bool_, shape_c), label="condition"),
              data.draw(quantized(dtype, shape_x), label="X"), data.draw(scale(), label="x_scale"),
              data.draw(zero_point(dtype), label="x_zero_point"),
              data.draw(quantized(dtype, shape_y), label="Y"), data.draw(scale(), label="y_scale"),
              data.draw(zero_point(dtype), label="y_zero_point"),
              data.draw(scale(), label="z_scale"), data.draw(zero_point(dtype), label="z_zero_point")]
    check_contrib("QLinearWhere", inputs, atol=1)


@pytest.mark.parametrize("dtype", QUANT, ids=str)
@SETTINGS
@given(data=st.data())
def test_qlinear_softmax(dtype, data):
    x = data.draw(quantized(dtype, shapes(min_rank=1, max_rank=4)), label="X")
    opset = data.draw(st.sampled_from([1, 11, 13]), label="opset")
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)), label="axis")
    attrs = {"opset": opset} if axis is None else {"opset": opset, "axis": axis}
    inputs = [x, data.draw(scale(), label="X_scale"), optional(data, zero_point(dtype), "x_zero_point"),
              # onnxruntime's kernel fixes the output's parameters: scale 1/256 and zero point 0 (uint8) or -128
              np.array(1 / 256, np.float32), np.array(0 if dtype == np.uint8 else -128, dtype)]
    check_contrib("QLinearSoftmax", inputs, attrs, atol=1, peer_inputs=zero_points_given(inputs, dtype, (2,)))


def pool_inputs(data, dtype, x):
    """X with its parameters and the output's. onnxruntime's fixed-point pool kernels refuse x_scale / y_scale
    from 256 up ("parameter out of computation range"), so the peer bounds the ratio: y_scale is x_scale times
    2^-7 .. 2^12."""
    x_scale = data.draw(scale(), label="x_scale")
    y_scale = np.float32(x_scale * data.draw(st.floats(2.0 ** -7, 2.0 ** 12), label="y_scale / x_scale"))
    return [x, x_scale, data.draw(zero_point(dtype), label="x_zero_point"), np.array(y_scale, np.float32),
            data.draw(zero_point(dtype), label="y_zero_point")]


@pytest.mark.parametrize("dtype", QUANT, ids=str)
@SETTINGS
@given(data=st.data())
def test_qlinear_global_average_pool(dtype, data):
    x = data.draw(quantized(dtype, shapes(min_rank=3, max_rank=5, min_side=1, max_side=3)), label="X")
    attrs = {"channels_last": data.draw(st.integers(0, 1), label="channels_last")}
    check_contrib("QLinearGlobalAveragePool", pool_inputs(data, dtype, x), attrs, atol=1)


@pytest.mark.parametrize("dtype", QUANT, ids=str)
@SETTINGS
@given(data=st.data())
def test_qlinear_average_pool(dtype, data):
    rank = data.draw(st.integers(1, 2), label="spatial rank")
    kernel = [data.draw(st.integers(1, 3), label="kernel") for _ in range(rank)]
    strides = [data.draw(st.integers(1, 2), label="stride") for _ in range(rank)]
    # Pads below the kernel (the schema's AveragePool rule); each spatial dim at least the kernel less its pads.
    pads = [data.draw(st.integers(0, kernel[i % rank] - 1), label="pad") for i in range(2 * rank)]
    spatial = [data.draw(st.integers(max(1, kernel[i] - pads[i] - pads[i + rank]), 4), label="spatial")
               for i in range(rank)]
    channels_last = data.draw(st.integers(0, 1), label="channels_last")
    batch, channels = data.draw(st.integers(1, 2), label="N"), data.draw(st.integers(1, 3), label="C")
    shape = (batch, *spatial, channels) if channels_last else (batch, channels, *spatial)
    x = data.draw(quantized(dtype, shape), label="X")
    attrs = {"kernel_shape": kernel, "strides": strides, "pads": pads, "channels_last": channels_last,
             "count_include_pad": data.draw(st.integers(0, 1), label="count_include_pad"),
             "ceil_mode": data.draw(st.integers(0, 1), label="ceil_mode")}
    check_contrib("QLinearAveragePool", pool_inputs(data, dtype, x), attrs, atol=1)


# ---- QuantizeLinear, DequantizeLinear ---------------------------------------------------------------------------

QUANTIZED_TYPES = [np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16)]  # int4 / uint4: numpy has no
# arrays of them to feed


def per_axis(data, x, dtype, scale_type, zero_type):
    """(scale, zero point, attrs): per tensor (scalars) or per `axis` (1-D of x's dim there)."""
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)) if x.ndim else st.none(), label="axis")
    shape = () if axis is None else (x.shape[axis],)
    scales = data.draw(arrays(scale_type, shape, st.floats(2.0 ** -8, 8.0, width=16)), label="scale")
    zeros = data.draw(st.one_of(st.none(), quantized(zero_type, shape)), label="zero point")
    return scales, zeros, ({} if axis is None else {"axis": axis})


@pytest.mark.parametrize("zero_type", QUANTIZED_TYPES, ids=str)
@pytest.mark.parametrize("dtype", [F32, F16], ids=str)
@SETTINGS
@given(data=st.data())
def test_quantize_linear(dtype, zero_type, data):
    # No NaN: the schema's saturate(round(x / scale) + zero_point) has no value for it; infinities saturate.
    # Values up to 6e4 (float16's range) reach both ends of every type.
    values = st.one_of(st.floats(-6e4, 6e4, width=16 if dtype == F16 else 32), st.sampled_from([np.inf, -np.inf]))
    x = data.draw(arrays(dtype, shapes(max_rank=3), values), label="x")
    scales, zeros, attrs = per_axis(data, x, dtype, dtype, zero_type)
    if zeros is None and zero_type != np.uint8:
        zeros = np.zeros(scales.shape, zero_type)  # the output type comes from the zero point (uint8 without)
    if dtype == F16:
        # Outstanding (issue 25; ep/cpu/quantize/quantize.cpp is outside this suite's files, reported): nxrt rounds
        # a float16 x / scale to float16 before rounding it to an integer (as the ONNX reference does for
        # ai.onnx QuantizeLinear), so 6580 / 3 = 2193.33 gives 2194; the contrib spec's value, and onnxruntime's
        # (it divides in float32), is 2193. Cases where that rounding changes the result are left out.
        shape = [1] * x.ndim
        if "axis" in attrs:
            shape[attrs["axis"]] = -1
        exact = x.astype(np.float32) / scales.astype(np.float32).reshape(shape)
        with np.errstate(all="ignore"):
            assume(np.array_equal(np.rint(exact), np.rint(exact.astype(np.float16).astype(np.float32))))
    # x / scale in float32, rounded half to even in both: exact.
    check_contrib("QuantizeLinear", [x, scales, zeros], attrs)


@pytest.mark.parametrize("quantized_type", QUANTIZED_TYPES + [np.dtype(np.int32)], ids=str)
@pytest.mark.parametrize("dtype", [F32, F16], ids=str)
@SETTINGS
@given(data=st.data())
def test_dequantize_linear(dtype, quantized_type, data):
    x = data.draw(quantized(quantized_type, shapes(max_rank=3)), label="x")
    scales, zeros, attrs = per_axis(data, x, quantized_type, dtype, quantized_type)
    if quantized_type == np.int32 and zeros is not None:
        zeros = np.zeros_like(zeros)  # an int32 zero point is 0 (ONNX DequantizeLinear's rule)
    # (x - zero_point) * scale: one rounding in float32 (float16: of the float32 product, then once to float16).
    check_contrib("DequantizeLinear", [x, scales, zeros], attrs, rtol=1e-3 if dtype == F16 else 1e-7)


# ---- integer matrix products with a float result ---------------------------------------------------------------

def column_parameters(data, dtype, n, values, label):
    """A per-tensor (scalar) or per-column ([N]) parameter."""
    return data.draw(st.one_of(arrays(dtype, (), values), arrays(dtype, (n,), values)), label=label)


def float_atol(exact_terms, count, unit=2.0 ** -23):
    """Float rounding of a sum of `count` scaled terms whose magnitudes sum to `exact_terms` (NaN / inf as 0)."""
    return (count + 4) * unit * np.where(np.isfinite(exact_terms), exact_terms, 0.0)


def positive_scales():
    return st.floats(2.0 ** -10, 4.0, width=16)


def peer_or_spec(op, a_type, b_type, inputs, attrs, spec):
    """onnxruntime (None) but where it is wrong (known_differences/) or has no kernel: int8 A with uint8 B, which
    the schema and nxrt take; there the formula (contrib_spec.py)."""
    different = known_differences.expected_for(f"com.microsoft.{op}", 1, inputs, attrs)
    if different is not None or not (a_type == np.int8 and b_type == np.uint8):
        return different
    return lambda inputs, attrs: spec(op, inputs, attrs)


@pytest.mark.parametrize("scale_type", [F32, F16], ids=str)
@pytest.mark.parametrize("b_type", QUANT, ids=str)
@pytest.mark.parametrize("a_type", QUANT, ids=str)
@SETTINGS
@given(data=st.data())
def test_matmul_integer_to_float(a_type, b_type, scale_type, data):
    m, k, n = (data.draw(st.integers(0, 4), label=name) for name in "mkn")
    batch = data.draw(shapes(max_rank=1, max_side=2), label="batch")
    a = data.draw(quantized(a_type, batch + (m, k)), label="A")
    b = data.draw(quantized(b_type, (k, n)), label="B")
    a_scale = data.draw(arrays(scale_type, (), positive_scales()), label="a_scale")
    b_scale = column_parameters(data, scale_type, n, positive_scales(), "b_scale")
    a_zero = optional(data, quantized(a_type, ()), "a_zero_point")
    b_zero = optional(data, quantized(b_type, b_scale.shape), "b_zero_point")
    bias = optional(data, arrays(scale_type, (n,), st.floats(-100, 100, width=16)), "bias")
    inputs = [a, b, a_scale, b_scale, a_zero, b_zero, bias]
    # The integer sums are exact in both; the scaling (a_scale * b_scale * sum) and the bias add round in float32
    # (float16 outputs: once more to float16, rtol 1e-3).
    da = np.abs(a.astype(np.float64) - (0 if a_zero is None else float(a_zero)))
    db = np.abs(b.astype(np.float64) - (0 if b_zero is None else b_zero.astype(np.float64)))
    terms = float(a_scale) * (da @ db) * b_scale.astype(np.float64) + (0 if bias is None else np.abs(bias))
    check_contrib("MatMulIntegerToFloat", inputs, rtol=1e-3 if scale_type == F16 else 0.0,
                  atol=float_atol(terms, 4),
                  expected=peer_or_spec("MatMulIntegerToFloat", a_type, b_type, inputs, {},
                                        contrib_spec.matmul_integer_to_float))


@pytest.mark.parametrize("b_type", QUANT, ids=str)
@SETTINGS
@given(data=st.data())
def test_dynamic_quantize_matmul(b_type, data):
    m, k, n = (data.draw(st.integers(0, 4), label=name) for name in "mkn")
    # Finite A: its uint8 quantization takes the range of A (with 0), which NaN or infinities leave undefined.
    a = data.draw(arrays(F32, (m, k), st.floats(-100, 100, width=32)), label="A")
    b = data.draw(quantized(b_type, (k, n)), label="B")
    b_scale = column_parameters(data, F32, n, positive_scales(), "b_scale")
    b_zero = optional(data, quantized(b_type, b_scale.shape), "b_zero_point")
    bias = optional(data, arrays(F32, (n,), st.floats(-100, 100, width=32)), "bias")
    inputs = [a, b, b_scale, b_zero, bias]
    # A is quantized to uint8 as DynamicQuantizeLinear does (scale = range / 255), in float32 in both; a value of
    # A within float rounding of a half-way point may land on either neighbour: one step (the A scale) times
    # |B - zero point| * b_scale per term, plus the float rounding of the scaling.
    a_step = (max(0.0, float(a.max(initial=0))) - min(0.0, float(a.min(initial=0)))) / 255
    db = np.abs(b.astype(np.float64) - (0 if b_zero is None else b_zero.astype(np.float64)))
    terms = (np.abs(a.astype(np.float64)) + a_step) @ db * b_scale.astype(np.float64)
    step = np.ones((m, 1)) @ (a_step * db.sum(axis=0, keepdims=True)) * b_scale.astype(np.float64)
    check_contrib("DynamicQuantizeMatMul", inputs, atol=step + float_atol(terms, k) +
                  (0 if bias is None else float_atol(np.abs(bias), 1)),
                  expected=known_differences.expected_for("com.microsoft.DynamicQuantizeMatMul", 1, inputs, {}))


@pytest.mark.parametrize("b_type", QUANT, ids=str)
@pytest.mark.parametrize("a_type", QUANT, ids=str)
@SETTINGS
@given(data=st.data())
def test_qgemm(a_type, b_type, data):
    m, k, n = (data.draw(st.integers(1, 4), label=name) for name in "mkn")
    trans_a, trans_b = (data.draw(st.integers(0, 1), label=name) for name in ("transA", "transB"))
    a = data.draw(quantized(a_type, (k, m) if trans_a else (m, k)), label="A")
    b = data.draw(quantized(b_type, (n, k) if trans_b else (k, n)), label="B")
    a_scale = data.draw(arrays(F32, (), positive_scales()), label="a_scale")
    b_scale = column_parameters(data, F32, n, positive_scales(), "b_scale")
    b_zero = data.draw(quantized(b_type, b_scale.shape), label="b_zero_point")
    c = optional(data, arrays(np.int32, data.draw(st.sampled_from([(), (n,), (m, 1), (m, n)]), label="C shape"),
                              st.integers(-2 ** 20, 2 ** 20)), "C")
    alpha = data.draw(st.sampled_from([1.0, 0.5, -2.0]), label="alpha")
    inputs = [a, a_scale, data.draw(quantized(a_type, ()), label="a_zero_point"), b, b_scale, b_zero, c]
    quantized_output = data.draw(st.booleans(), label="quantized Y")
    if quantized_output:
        # A quantized Y of A's type: onnxruntime's CPU kernels pair them (the schema lets them differ).
        inputs += [data.draw(arrays(F32, (), positive_scales()), label="y_scale"),
                   data.draw(quantized(a_type, ()), label="y_zero_point")]
    # Exact int32 sums; alpha * a_scale * b_scale * sum in float32: relative float rounding for a float Y, one
    # quantization step for a quantized one (a value within float rounding of a half-way point).
    acc = np.abs((a.T if trans_a else a).astype(np.float64) - float(inputs[2])) @ \
        np.abs((b.T if trans_b else b).astype(np.float64) - b_zero.astype(np.float64))
    acc = acc + (0 if c is None else np.abs(c.astype(np.float64)))
    terms = abs(alpha) * float(a_scale) * acc * b_scale.astype(np.float64)
    attrs = {"transA": trans_a, "transB": trans_b, "alpha": alpha}
    check_contrib("QGemm", inputs, attrs, atol=1 if quantized_output else float_atol(terms, 4),
                  expected=peer_or_spec("QGemm", a_type, b_type, inputs, attrs, contrib_spec.qgemm))


# ---- block-quantized weights ----------------------------------------------------------------------------------

@pytest.mark.parametrize("bits", [4, 8, 2])
@pytest.mark.parametrize("dtype", [F32, F16], ids=str)  # onnxruntime's CPU kernel: float, float16 (schema: also
@SETTINGS                                               # bfloat16, which nxrt runs)
@given(data=st.data())
def test_matmul_nbits(dtype, bits, data):
    block = data.draw(st.sampled_from([16, 32]), label="block_size")
    k, n = data.draw(st.integers(1, 2 * block + 3), label="K"), data.draw(st.integers(1, 4), label="N")
    blocks = -(-k // block)
    level = data.draw(st.sampled_from([0, 1, 4]), label="accuracy_level")
    # accuracy_level 4 quantizes A to int8 per block from its largest magnitude: finite A there.
    values = st.floats(-10, 10, width=16) if level == 4 else contrib_spec.dot_elements(dtype)
    a = data.draw(arrays(dtype, data.draw(shapes(max_rank=2, max_side=3), label="batch") + (k,), values), label="A")
    b = data.draw(arrays(np.uint8, (n, blocks, block * bits // 8), st.integers(0, 255)), label="B")
    scales = data.draw(arrays(dtype, (n, blocks), st.floats(-1, 1, width=16)), label="scales")
    zero_form = data.draw(st.sampled_from(["none", "packed", "unpacked"]), label="zero_points")
    zeros = None
    if zero_form == "packed":
        zeros = data.draw(arrays(np.uint8, (n, -(-blocks * bits // 8)), st.integers(0, 255)), label="packed zeros")
    elif zero_form == "unpacked":
        zeros = data.draw(arrays(dtype, (n, blocks), st.integers(0, 2 ** bits - 1).map(float)), label="zeros")
    bias = optional(data, arrays(dtype, (n,), st.floats(-10, 10, width=16)), "bias")
    inputs = [a, b, scales, zeros, None, bias]
    attrs = {"K": k, "N": n, "bits": bits, "block_size": block, "accuracy_level": level}
    # Tolerance: the float rounding of K products in float32 (float16: each product and partial sum may round
    # in float16, 2^-10), plus at accuracy_level 4 one int8 step of A's block quantization (its largest
    # magnitude / 127) per term where the two runtimes' float scales put a value on either side of a half-way point.
    weights = np.abs(contrib_spec.nbits_weights(inputs, attrs))
    finite_a = np.where(np.isfinite(a.astype(np.float64)), np.abs(a.astype(np.float64)), 0)
    terms = finite_a @ weights.T + (0 if bias is None else np.abs(bias.astype(np.float64)))
    unit = 2.0 ** -10 if dtype == F16 else 2.0 ** -23
    atol = (k + 4) * unit * terms
    if level == 4:
        padded = np.pad(finite_a, [(0, 0)] * (a.ndim - 1) + [(0, blocks * block - k)])
        largest = padded.reshape(a.shape[:-1] + (blocks, block)).max(axis=-1, initial=0)  # [..., blocks]
        block_weights = np.pad(weights, [(0, 0), (0, blocks * block - k)]).reshape(n, blocks, block).sum(axis=-1)
        atol = atol + (largest / 127) @ block_weights.T
    # onnxruntime's CPU kernel has no 8-bit weights with float zero points (the schema has): the formula there.
    no_peer = bits == 8 and zeros is not None and zeros.dtype != np.uint8
    check_contrib("MatMulNBits", inputs, attrs, rtol=1e-3 if dtype == F16 else 0.0, atol=atol,
                  expected=(lambda i, a: contrib_spec.matmul_nbits("MatMulNBits", i, a)) if no_peer else None)


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("index_type", [np.int64, np.int32], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("dtype", [F32, F16], ids=str)  # uint8 data; int4 / uint4 data: numpy has no such arrays
@SETTINGS
@given(data=st.data())
def test_gather_block_quantized(dtype, index_type, bits, data):
    block = data.draw(st.sampled_from([16, 32]), label="block_size")
    rows, cols = data.draw(st.integers(1, 4), label="rows"), data.draw(st.integers(1, 2, ), label="blocks") * block
    middle = data.draw(st.sampled_from([(), (2,)]), label="middle dims")  # rank 2 or 3; gather 0, quantize last
    per_byte = 8 // bits
    blocks = cols // block
    data_shape = (rows, *middle, cols // per_byte)
    quant = data.draw(arrays(np.uint8, data_shape, st.integers(0, 255)), label="data")
    scales = data.draw(arrays(dtype, (rows, *middle, blocks), st.floats(-4, 4, width=16)), label="scales")
    zeros = optional(data, arrays(np.uint8, (rows, *middle, -(-blocks // per_byte)), st.integers(0, 255)),
                     "zero_points")
    # Indices in [-rows, rows): onnxruntime refuses others (the schema now gives zeros for them; nxrt does).
    indices = data.draw(arrays(index_type, shapes(max_rank=2, max_side=3), st.integers(-rows, rows - 1)),
                        label="indices")
    attrs = {"bits": bits, "block_size": block, "gather_axis": 0, "quantize_axis": len(data_shape) - 1}
    # (q - zero_point) * scale: one float32 rounding (float16: once more).
    check_contrib("GatherBlockQuantized", [quant, indices, scales, zeros], attrs,
                  rtol=1e-3 if dtype == F16 else 1e-7)


COVERED = {f"com.microsoft.{op}" for op in (
    "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearConcat", "QLinearWhere",
    "QLinearSoftmax", "QLinearGlobalAveragePool", "QLinearAveragePool", "QuantizeLinear", "DequantizeLinear",
    "MatMulIntegerToFloat", "DynamicQuantizeMatMul", "QGemm", "MatMulNBits", "GatherBlockQuantized")}
