"""Quantized MatMul and quantization ops on random shapes and every int8/uint8 mix, against exact answers:
MatMulInteger against numpy integer arithmetic, QLinearMatMul, QuantizeLinear and DynamicQuantizeLinear against
onnx.reference (which rounds in float32 exactly as the spec writes it) and against the float64 value before
rounding. nxrt must equal these exactly. onnxruntime is a peer, not an oracle: it is checked against the same
answers (allowing either neighbour at a rounding tie, since its kernels multiply in float32), except for the
cases in KNOWN_ONNXRUNTIME_WRONG, where its answer depends on the CPU and is not asserted."""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import nxrt
from helpers import assert_requantized_equal, model_bytes

# onnxruntime answers that are wrong on some CPU tiers, keyed by (op, A dtype, B dtype). MLAS's x86 integer GEMM
# multiplies uint8 activations by int8 weights with vpmaddubsw, which adds each pair of products into a saturating
# int16 (255 * 127 * 2 > 32767), on AVX2 and on AVX-512 without VNNI; AVX-512 VNNI (vpdpbusd) accumulates in
# int32 and is right. ConvInteger, on the same kernels, was wrong on an AVX2 CI machine for int8 x uint8 and
# uint8 x int8 (see test_conv_pool_vs_ort.py). int8 x int8 is listed too: which kernel MLAS picks for it depends
# on the tier and version. uint8 x uint8 uses a non-saturating kernel and is asserted.
_U8S8_SATURATES = ("MLAS u8s8 kernel (vpmaddubsw) saturates pairs of products to int16 on AVX2 / AVX-512 "
                   "without VNNI; right on AVX-512 VNNI")
_S8S8_MAY_SATURATE = ("may be computed by the saturating u8s8 kernel (int8 activations shifted to uint8) on some "
                      "tiers and versions; right on the AVX2 CI machine and on AVX-512 VNNI")
KNOWN_ONNXRUNTIME_WRONG = {
    (op, a, b): reason
    for op in ("MatMulInteger", "QLinearMatMul")
    for a, b, reason in (("uint8", "int8", _U8S8_SATURATES), ("int8", "uint8", _U8S8_SATURATES),
                         ("int8", "int8", _S8S8_MAY_SATURATE))
}

INT8_MIXES = [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.uint8), (np.int8, np.int8)]
SEEDS = range(6)


def onnx_type(dtype):
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def one_node_model(op, feeds, output_types, opset=21):
    """`feeds` is an ordered {input name: array}; `output_types` maps output names to numpy dtypes."""
    inputs = [helper.make_tensor_value_info(name, onnx_type(v.dtype), list(v.shape)) for name, v in feeds.items()]
    outputs = [helper.make_tensor_value_info(name, onnx_type(t), None) for name, t in output_types.items()]
    node = helper.make_node(op, list(feeds), list(output_types))
    return model_bytes([node], inputs, outputs, opset=opset)


def run_nxrt(model, feeds):
    return nxrt.InferenceSession(model).run(None, feeds)


def run_reference(model, feeds):
    return ReferenceEvaluator(model).run(None, feeds)


def run_onnxruntime_if_implemented(model, feeds):
    """onnxruntime's outputs, or None where it has no kernel for the type mix (nxrt is still checked)."""
    try:
        session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    except onnxruntime.capi.onnxruntime_pybind11_state.NotImplemented:
        return None
    return session.run(None, feeds)


def onnxruntime_answer_is_asserted(op, a, b):
    return (op, a.dtype.name, b.dtype.name) not in KNOWN_ONNXRUNTIME_WRONG


def full_range(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def matmul_operands(rng, a_type, b_type):
    """A [batch.., M, K] and B [K, N] or [batch.., K, N] (broadcast batch), values over the full type range so
    that pairs of products exceed int16."""
    m, n = (int(v) for v in rng.integers(1, 9, 2))
    k = int(rng.integers(16, 65))
    batch = [int(rng.integers(1, 4))] if rng.random() < 0.5 else []
    b_batch = batch if batch and rng.random() < 0.5 else []
    return full_range(rng, a_type, batch + [m, k]), full_range(rng, b_type, b_batch + [k, n])


def exact_integer_product(a, a_zero, b, b_zero):
    """(A - a_zero) @ (B - b_zero) in int64, wrapped to int32 as the spec's int32 accumulation does."""
    product = np.matmul(a.astype(np.int64) - a_zero.astype(np.int64), b.astype(np.int64) - b_zero.astype(np.int64))
    return product.astype(np.int32)


@pytest.mark.parametrize("a_type,b_type", INT8_MIXES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("seed", SEEDS)
def test_matmul_integer(seed, a_type, b_type):
    rng = np.random.default_rng(seed)
    a, b = matmul_operands(rng, a_type, b_type)
    a_zero = np.array(rng.integers(0, 6), a_type)
    per_column = b.ndim == 2 and seed % 2 == 0
    b_zero = rng.integers(0, 6, [b.shape[-1]] if per_column else []).astype(b_type)
    feeds = {"A": a, "B": b, "a_zero_point": a_zero, "b_zero_point": b_zero}
    model = one_node_model("MatMulInteger", feeds, {"Y": np.int32})
    exact = exact_integer_product(a, a_zero, b, b_zero)
    (got,) = run_nxrt(model, feeds)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, exact)
    onnxruntime_outputs = run_onnxruntime_if_implemented(model, feeds)
    if onnxruntime_outputs is not None and onnxruntime_answer_is_asserted("MatMulInteger", a, b):
        np.testing.assert_array_equal(onnxruntime_outputs[0], exact, err_msg="onnxruntime MatMulInteger")


@pytest.mark.parametrize("a_type,b_type", INT8_MIXES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("seed", SEEDS)
def test_qlinear_matmul(seed, a_type, b_type):
    rng = np.random.default_rng(100 + seed)
    a, b = matmul_operands(rng, a_type, b_type)
    y_type = a_type
    per_column = b.ndim == 2 and seed % 2 == 0
    columns = [b.shape[-1]] if per_column else []
    feeds = {
        "a": a, "a_scale": np.array(rng.uniform(0.01, 0.1), np.float32),
        "a_zero_point": np.array(rng.integers(0, 6), a_type),
        "b": b, "b_scale": rng.uniform(0.001, 0.01, columns).astype(np.float32),
        "b_zero_point": rng.integers(0, 6, columns).astype(b_type),
        "y_scale": np.array(rng.uniform(0.5, 2.0), np.float32), "y_zero_point": np.array(rng.integers(0, 9), y_type),
    }
    model = one_node_model("QLinearMatMul", feeds, {"y": y_type})
    (got,) = run_nxrt(model, feeds)
    assert got.dtype == y_type
    np.testing.assert_array_equal(got, run_reference(model, feeds)[0])
    accumulator = exact_integer_product(a, feeds["a_zero_point"], b, feeds["b_zero_point"])
    multiplier = feeds["a_scale"] * feeds["b_scale"] / feeds["y_scale"]  # float32, as the spec computes it
    real = accumulator.astype(np.float64) * multiplier.astype(np.float64) + float(feeds["y_zero_point"])
    assert_requantized_equal(got, real, err_msg="nxrt QLinearMatMul")
    onnxruntime_outputs = run_onnxruntime_if_implemented(model, feeds)
    if onnxruntime_outputs is not None and onnxruntime_answer_is_asserted("QLinearMatMul", a, b):
        assert_requantized_equal(onnxruntime_outputs[0], real, err_msg="onnxruntime QLinearMatMul")


@pytest.mark.parametrize("y_type", [np.uint8, np.int8, np.uint16, np.int16])
@pytest.mark.parametrize("seed", SEEDS)
def test_quantize_linear(seed, y_type):
    rng = np.random.default_rng(200 + seed)
    shape = [int(d) for d in rng.integers(1, 7, 3)]
    per_axis = seed % 2 == 1
    scale = rng.uniform(0.01, 0.2, [shape[1]] if per_axis else []).astype(np.float32)
    info = np.iinfo(y_type)
    zero = rng.integers(max(info.min, -20), min(info.max, 20) + 1, scale.shape).astype(y_type)
    # Inputs reach past both ends of the type's range, so saturation is covered.
    span = float(np.max(scale)) * (info.max - info.min) * 0.7
    x = rng.uniform(-span, span, shape).astype(np.float32)
    x.flat[::7] = (rng.integers(-100, 100, x.flat[::7].shape) + 0.5) * float(np.min(scale))  # near ties
    feeds = {"x": x, "y_scale": scale, "y_zero_point": zero}
    model = one_node_model("QuantizeLinear", feeds, {"y": y_type})
    (got,) = run_nxrt(model, feeds)
    assert got.dtype == y_type
    np.testing.assert_array_equal(got, run_reference(model, feeds)[0])
    broadcast = (lambda v: v.reshape(1, -1, 1)) if per_axis else (lambda v: v)
    real = x.astype(np.float64) / broadcast(scale).astype(np.float64) + broadcast(zero).astype(np.float64)
    assert_requantized_equal(got, real, err_msg="nxrt QuantizeLinear")
    onnxruntime_outputs = run_onnxruntime_if_implemented(model, feeds)
    if onnxruntime_outputs is not None:
        assert_requantized_equal(onnxruntime_outputs[0], real, err_msg="onnxruntime QuantizeLinear")


@pytest.mark.parametrize("seed", range(12))
def test_dynamic_quantize_linear(seed):
    rng = np.random.default_rng(300 + seed)
    shape = [int(d) for d in rng.integers(1, 9, 2)]
    low, high = sorted(rng.uniform(-8, 8, 2))
    if seed % 4 == 0:  # all positive, then all negative: the range is widened to include 0
        low, high = sorted(abs(rng.uniform(-8, 8, 2)))
    elif seed % 4 == 1:
        low, high = sorted(-abs(rng.uniform(-8, 8, 2)))
    x = rng.uniform(low, high, shape).astype(np.float32)
    feeds = {"x": x}
    model = one_node_model("DynamicQuantizeLinear", feeds, {"y": np.uint8, "y_scale": np.float32,
                                                             "y_zero_point": np.uint8})
    got = run_nxrt(model, feeds)
    for name, g, want in zip(("y", "y_scale", "y_zero_point"), got, run_reference(model, feeds)):
        assert g.dtype == want.dtype and g.shape == want.shape, name
        np.testing.assert_array_equal(g, want, err_msg=f"nxrt {name}")
    # The spec's float32 formulas: scale exact; zero point and y exact up to the tie rule.
    x_max, x_min = np.maximum(np.float32(0), x.max()), np.minimum(np.float32(0), x.min())
    scale = np.float32(x_max - x_min) / np.float32(255) if x_max != x_min else np.float32(1)
    real_zero = np.clip(-np.float64(x_min) / np.float64(scale), 0, 255)
    onnxruntime_outputs = run_onnxruntime_if_implemented(model, feeds)
    assert onnxruntime_outputs is not None, "onnxruntime implements DynamicQuantizeLinear"
    for runtime, (y, y_scale, y_zero) in (("nxrt", got), ("onnxruntime", onnxruntime_outputs)):
        assert y_scale == scale, f"{runtime} scale {y_scale!r}, exact {scale!r}"
        assert_requantized_equal(np.asarray(y_zero), real_zero, err_msg=f"{runtime} zero point")
        real_y = x.astype(np.float64) / np.float64(scale) + float(y_zero)
        assert_requantized_equal(y, real_y, err_msg=f"{runtime} y")
