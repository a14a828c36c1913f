"""Differential tests for the com.microsoft block-quantized weight ops, MatMulNBits and GatherBlockQuantized,
against onnxruntime on random shapes, bit widths, block sizes and zero-point forms, and against a numpy
dequantization reference."""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

import helpers
import nxrt

MS = "com.microsoft"


def pack_codes(codes, bits):
    """Packs the last axis of `codes` (ints below 2^bits) low bits first, 8 / bits codes per byte."""
    per_byte = 8 // bits
    padded = np.zeros(codes.shape[:-1] + (-(-codes.shape[-1] // per_byte) * per_byte,), np.uint8)
    padded[..., :codes.shape[-1]] = codes
    grouped = padded.reshape(codes.shape[:-1] + (-1, per_byte)).astype(np.uint32)
    shifts = np.arange(per_byte, dtype=np.uint32) * bits
    return (grouped << shifts).sum(axis=-1).astype(np.uint8)


def nbits_case(seed, dtype):
    rng = np.random.default_rng(seed)
    bits = [4, 8, 2][seed % 3]
    block = int(rng.choice([16, 32, 64]))
    k = int(rng.integers(1, 3 * block + 1))
    n = int(rng.integers(1, 40))
    k_blocks = -(-k // block)
    codes = rng.integers(0, 1 << bits, size=(n, k_blocks * block))
    codes[:, k:] = 0
    b = pack_codes(codes.reshape(n, k_blocks, block), bits)
    scales = (rng.uniform(0.01, 0.1, size=(n, k_blocks))).astype(dtype)
    zero_form = ["none", "packed", "float"][seed % 3 if seed % 4 else 1]
    zero = None
    zero_values = np.full((n, k_blocks), 1 << (bits - 1), np.float64)
    if zero_form == "packed":
        zero_codes = rng.integers(0, 1 << bits, size=(n, k_blocks))
        zero = pack_codes(zero_codes, bits)
        zero_values = zero_codes.astype(np.float64)
    elif zero_form == "float":
        zero = rng.uniform(0, (1 << bits) - 1, size=(n, k_blocks)).astype(dtype)
        zero_values = zero.astype(np.float64)
    rows = tuple(int(d) for d in rng.integers(1, 4, size=int(rng.integers(1, 3))))
    a = rng.standard_normal(rows + (k,)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype) if seed % 2 else None
    attrs = {"K": k, "N": n, "bits": bits, "block_size": block}
    feeds = [("a", a), ("b", b), ("scales", scales), ("zero_points", zero), ("g_idx", None), ("bias", bias)]
    weights = (codes[:, :k] - np.repeat(zero_values, block, axis=1)[:, :k]) * np.repeat(scales.astype(np.float64),
                                                                                          block, axis=1)[:, :k]
    want = a.astype(np.float64) @ weights.T + (bias if bias is not None else 0)
    return feeds, attrs, want


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("seed", range(24))
def test_matmul_nbits(seed, dtype):
    feeds, attrs, want = nbits_case(seed, dtype)
    constants = ("b", "scales", "zero_points") if seed % 5 else ()
    model = helpers.one_node_model("MatMulNBits", feeds, (True,), attrs, MS, constants)
    (got,) = helpers.run_feeds(nxrt, model, feeds, constants)
    (theirs,) = helpers.run_feeds(onnxruntime, model, feeds, constants)
    tol = 1e-4 if dtype == np.float32 else 3e-2
    scale = 1 + np.abs(want)
    assert got.shape == theirs.shape == want.shape
    np.testing.assert_array_less(np.abs(got - want) / scale, tol, err_msg=f"vs numpy {attrs}")
    np.testing.assert_array_less(np.abs(got.astype(np.float64) - theirs) / scale, tol, err_msg=f"vs ort {attrs}")


def constant_weights_case(rng, bits, block, n_high, a_dtype):
    """Random MatMulNBits weights of `bits` bits for a random K (half a block to three blocks) and N (below n_high):
    codes [N, padded K] (zero past K), zero-point codes [N, k_blocks], scales of A's type (smaller for more bits)."""
    k = int(rng.integers(block // 2, 3 * block))
    n = int(rng.integers(1, n_high))
    k_blocks = -(-k // block)
    codes = rng.integers(0, 1 << bits, size=(n, k_blocks * block))
    codes[:, k:] = 0
    zero_codes = rng.integers(0, 1 << bits, size=(n, k_blocks))
    scales = rng.uniform(0.01, 0.1, size=(n, k_blocks)).astype(a_dtype) / (1 << (bits - 4))
    return k, n, k_blocks, codes, zero_codes, scales


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("rows", [1, 3, 6, 33, 70])
@pytest.mark.parametrize("seed", range(4))
def test_matmul_nbits_constant_weights_at_any_row_count(seed, rows, bits):
    # Constant 4-bit weights with blocks of 32 or more and constant 8-bit weights take the packed paths: in-register
    # dequantization up to 32 rows of A, chunks dequantized into the float GEMM beyond.
    rng = np.random.default_rng(100 + seed)
    block = [32, 64, 128, 32][seed] if bits == 4 else [16, 32, 64, 256][seed]
    k, n, k_blocks, codes, zero_codes, scales = constant_weights_case(rng, bits, block, 70, np.float32)
    a = rng.standard_normal((rows, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32) if seed % 2 else None
    zero = pack_codes(zero_codes, bits) if seed < 2 else None
    zero_values = zero_codes if zero is not None else np.full((n, k_blocks), 1 << (bits - 1))
    feeds = [("a", a), ("b", pack_codes(codes.reshape(n, k_blocks, block), bits)), ("scales", scales),
             ("zero_points", zero), ("g_idx", None), ("bias", bias)]
    constants = ("b", "scales", "zero_points")
    attrs = {"K": k, "N": n, "bits": bits, "block_size": block}
    model = helpers.one_node_model("MatMulNBits", feeds, (True,), attrs, MS, constants)
    (got,) = helpers.run_feeds(nxrt, model, feeds, constants)
    (theirs,) = helpers.run_feeds(onnxruntime, model, feeds, constants)
    weights = ((codes - np.repeat(zero_values, block, axis=1)) * np.repeat(scales.astype(np.float64), block,
                                                                            axis=1))[:, :k]
    want = a.astype(np.float64) @ weights.T + (bias if bias is not None else 0)
    scale = 1 + np.abs(want)
    np.testing.assert_array_less(np.abs(got - want) / scale, 1e-5, err_msg=f"vs numpy {attrs}")
    np.testing.assert_array_less(np.abs(got - theirs) / scale, 1e-5, err_msg=f"vs ort {attrs}")


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("rows", [1, 4, 7, 40])
@pytest.mark.parametrize("seed", range(4))
def test_matmul_nbits_accuracy_level_4(seed, rows, dtype, bits):
    # accuracy_level 4: A is quantized to int8 per block, as onnxruntime does. Against numpy's float product the
    # int8 rounding of A bounds the error (half a step of the block's largest |a| / 127 per element); against
    # onnxruntime, which quantizes A the same way, only the float summation order differs.
    rng = np.random.default_rng(200 + seed)
    block = [16, 32, 64, 128][seed]
    k, n, k_blocks, codes, zero_codes, scales = constant_weights_case(rng, bits, block, 50, dtype)
    a = rng.standard_normal((rows, k)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype) if seed % 2 else None
    zero = pack_codes(zero_codes, bits) if seed < 2 else None
    zero_values = zero_codes if zero is not None else np.full((n, k_blocks), 1 << (bits - 1))
    feeds = [("a", a), ("b", pack_codes(codes.reshape(n, k_blocks, block), bits)), ("scales", scales),
             ("zero_points", zero), ("g_idx", None), ("bias", bias)]
    constants = ("b", "scales", "zero_points")
    attrs = {"K": k, "N": n, "bits": bits, "block_size": block, "accuracy_level": 4}
    model = helpers.one_node_model("MatMulNBits", feeds, (True,), attrs, MS, constants)
    (got,) = helpers.run_feeds(nxrt, model, feeds, constants)
    (theirs,) = helpers.run_feeds(onnxruntime, model, feeds, constants)
    weights = ((codes - np.repeat(zero_values, block, axis=1)) * np.repeat(scales.astype(np.float64), block,
                                                                            axis=1))[:, :k]
    want = a.astype(np.float64) @ weights.T + (bias if bias is not None else 0)
    # |error| <= sum_k |w| * step / 2 with step = max|a| / 127 per block (plus float rounding).
    bound = np.abs(weights).sum(axis=1) * np.abs(a.astype(np.float64)).max() / 254 + 1e-4 * (1 + np.abs(want))
    if dtype == np.float16:
        bound = bound + 2e-2 * (1 + np.abs(want))
    assert np.all(np.abs(got - want) <= bound), f"vs numpy {attrs}"
    close = 1e-4 * (1 + np.abs(want)) + (2e-2 * (1 + np.abs(want)) if dtype == np.float16 else 0)
    assert np.all(np.abs(got.astype(np.float64) - theirs) <= close), f"vs ort {attrs}"


def test_matmul_nbits_omitted_projection_gives_the_bias():
    a = np.ones((2, 32), np.float32)
    bias = np.arange(5, dtype=np.float32)
    feeds = [("a", a), ("b", np.zeros((5, 0, 16), np.uint8)), ("scales", np.zeros((0,), np.float32)),
             ("zero_points", None), ("g_idx", None), ("bias", bias)]
    model = helpers.one_node_model("MatMulNBits", feeds, (True,), {"K": 32, "N": 5, "bits": 4, "block_size": 32}, MS)
    (got,) = helpers.run_feeds(nxrt, model, feeds)
    np.testing.assert_array_equal(got, np.tile(bias, (2, 1)))


def gather_model(data_tensor, indices, scales, zero_tensor, attrs):
    inits = [data_tensor, onnx.numpy_helper.from_array(scales, "scales")]
    names = ["data", "indices", "scales"]
    if zero_tensor is not None:
        inits.append(zero_tensor)
        names.append("zero_points")
    node = helper.make_node("GatherBlockQuantized", names, ["y"], domain=MS, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("indices", TensorProto.INT64, indices.shape)],
                              [onnx.ValueInfoProto(name="y")], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(MS, 1)])
    model.ir_version = 10
    return model.SerializeToString()


@pytest.mark.parametrize("seed", range(24))
def test_gather_block_quantized(seed):
    rng = np.random.default_rng(seed)
    form = ["uint8", "int4", "uint4"][seed % 3]
    bits = int(rng.choice([4, 8])) if form == "uint8" else 4
    block = int(rng.choice([16, 32]))
    rows, cols = int(rng.integers(2, 9)), int(rng.integers(1, 4)) * block
    if form != "uint8" and seed % 2:
        cols += 5  # a last block shorter than block_size
    gather_axis, quantize_axis = (0, 1) if form == "uint8" or seed % 4 < 2 else (1, 0)
    low, high = (-8, 8) if form == "int4" else (0, 1 << bits)
    codes = rng.integers(low, high, size=(rows, cols))
    scale_shape = [rows, cols]
    scale_shape[quantize_axis] = -(-scale_shape[quantize_axis] // block)
    scales = rng.uniform(0.01, 0.2, size=scale_shape).astype(np.float32)
    zero_codes = rng.integers(low, high, size=scale_shape) if seed % 2 == 0 else None
    if form == "uint8":
        data = onnx.numpy_helper.from_array(pack_codes(codes, bits), "data")
        zero = None
        if zero_codes is not None:
            zero = onnx.numpy_helper.from_array(pack_codes(zero_codes, bits), "zero_points")
        default_zero = 1 << (bits - 1)
    else:
        kind = TensorProto.INT4 if form == "int4" else TensorProto.UINT4
        data = helper.make_tensor("data", kind, [rows, cols], codes.flatten().tolist())
        zero = helper.make_tensor("zero_points", kind, scale_shape, zero_codes.flatten().tolist()) \
            if zero_codes is not None else None
        default_zero = 0
    axis_len = [rows, cols][gather_axis]
    indices = rng.integers(-axis_len, axis_len, size=(int(rng.integers(1, 4)), 2)).astype(np.int64)
    attrs = {"gather_axis": gather_axis, "quantize_axis": quantize_axis, "block_size": block, "bits": bits}
    model = gather_model(data, indices, scales, zero, attrs)
    (got,) = nxrt.InferenceSession(model).run(None, {"indices": indices})
    (theirs,) = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"indices": indices})
    zero_full = default_zero if zero_codes is None else np.repeat(zero_codes, block, axis=quantize_axis)[:rows, :cols]
    dequantized = (codes - zero_full) * np.repeat(scales, block, axis=quantize_axis)[:rows, :cols]
    want = np.take(dequantized, indices, axis=gather_axis)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"{form} {attrs}")
    np.testing.assert_allclose(got, theirs, rtol=1e-6, atol=1e-6, err_msg=f"{form} {attrs} vs onnxruntime")


# ---- QLinear elementwise ------------------------------------------------------------------------------------

def qlinear_params(rng, dtype):
    info = np.iinfo(dtype)
    scale = np.array(rng.uniform(0.005, 0.1), np.float32)
    zero = np.array(rng.integers(info.min // 2, info.max // 2 + 1), dtype)
    return scale, zero


def dequantize(q, scale, zero):
    return (q.astype(np.float64) - float(zero)) * float(scale)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("seed", range(8))
def test_qlinear_binary(seed, op, dtype):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    shape = tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 4))))
    b_shape = tuple(1 if rng.random() < 0.4 else d for d in shape)[int(rng.integers(0, len(shape))):]
    a = rng.integers(info.min, info.max + 1, size=shape).astype(dtype)
    b = rng.integers(info.min, info.max + 1, size=b_shape).astype(dtype)
    (a_scale, a_zero), (b_scale, b_zero), (c_scale, c_zero) = (qlinear_params(rng, dtype) for _ in range(3))
    if op == "QLinearMul":
        c_scale = np.array(float(a_scale) * float(b_scale) * 40, np.float32)
    feeds = [("a", a), ("a_scale", a_scale), ("a_zero", a_zero if seed % 3 else None), ("b", b),
             ("b_scale", b_scale), ("b_zero", b_zero), ("c_scale", c_scale), ("c_zero", c_zero)]
    model = helpers.one_node_model(op, feeds, (True,), {}, MS)
    (got,) = helpers.run_feeds(nxrt, model, feeds)
    va = dequantize(a, a_scale, a_zero if seed % 3 else 0)
    vb = dequantize(b, b_scale, b_zero)
    real = (va * vb if op == "QLinearMul" else va + vb) / float(c_scale) + float(c_zero)
    helpers.assert_requantized_equal(got, real, err_msg=f"{op} vs exact")
    if seed % 3:  # onnxruntime's type inference fails on an omitted A_zero_point
        (theirs,) = helpers.run_feeds(onnxruntime, model, feeds)
        assert np.abs(got.astype(np.int32) - theirs.astype(np.int32)).max() <= 1, f"{op} vs onnxruntime"


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu"])
@pytest.mark.parametrize("seed", range(6))
def test_qlinear_unary(seed, op, dtype):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    x = np.arange(info.min, info.max + 1).astype(dtype).reshape(16, 16)  # every code
    (x_scale, x_zero), (y_scale, y_zero) = (qlinear_params(rng, dtype) for _ in range(2))
    if op == "QLinearSigmoid":
        y_scale = np.array(1.0 / 250, np.float32)
    attrs = {"alpha": float(rng.uniform(0.01, 0.3))} if op == "QLinearLeakyRelu" and seed % 2 else {}
    feeds = [("x", x), ("x_scale", x_scale), ("x_zero", x_zero), ("y_scale", y_scale), ("y_zero", y_zero)]
    model = helpers.one_node_model(op, feeds, (True,), attrs, MS)
    (got,) = helpers.run_feeds(nxrt, model, feeds)
    (theirs,) = helpers.run_feeds(onnxruntime, model, feeds)
    v = dequantize(x, x_scale, x_zero)
    alpha = float(np.float32(attrs.get("alpha", 0.01)))
    f = 1 / (1 + np.exp(-v)) if op == "QLinearSigmoid" else np.where(v >= 0, v, alpha * v)
    helpers.assert_requantized_equal(got, f / float(y_scale) + float(y_zero), err_msg=f"{op} vs exact")
    assert np.abs(got.astype(np.int32) - theirs.astype(np.int32)).max() <= 1, f"{op} vs onnxruntime"


# ---- integer products with a float result -------------------------------------------------------------------

@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_integer_matmul_to_float(seed, dynamic):
    rng = np.random.default_rng(seed)
    a_type, b_type = (np.uint8, np.int8)[seed % 2], (np.uint8, np.int8)[(seed // 2) % 2]
    m, k, n = (int(v) for v in rng.integers(1, 40, size=3))
    batch = (int(rng.integers(1, 4)),) if seed % 3 == 2 else ()
    info_b = np.iinfo(b_type)
    b = rng.integers(info_b.min, info_b.max + 1, size=(k, n)).astype(b_type)
    per_column = seed % 4 >= 2
    b_scale = rng.uniform(0.001, 0.05, size=n if per_column else ()).astype(np.float32)
    b_zero = rng.integers(info_b.min // 4, info_b.max // 4 + 1, size=n if per_column else ()).astype(b_type)
    bias = rng.standard_normal(n).astype(np.float32) if seed % 2 else None
    if dynamic:
        a = (rng.standard_normal(batch + (m, k)) * 3).astype(np.float32)
        feeds = [("a", a), ("b", b), ("b_scale", b_scale), ("b_zero", b_zero), ("bias", bias)]
        op = "DynamicQuantizeMatMul"
    else:
        info_a = np.iinfo(a_type)
        a = rng.integers(info_a.min, info_a.max + 1, size=batch + (m, k)).astype(a_type)
        a_scale = np.array(rng.uniform(0.001, 0.05), np.float32)
        a_zero = np.array(rng.integers(info_a.min // 4, info_a.max // 4 + 1), a_type)
        feeds = [("a", a), ("b", b), ("a_scale", a_scale), ("b_scale", b_scale), ("a_zero", a_zero),
                 ("b_zero", b_zero), ("bias", bias)]
        op = "MatMulIntegerToFloat"
    constants = ("b", "b_scale", "b_zero") if seed % 3 == 0 else ()
    model = helpers.one_node_model(op, feeds, (True,), {}, MS, constants)
    (got,) = helpers.run_feeds(nxrt, model, feeds, constants)
    if dynamic:  # A quantized as DynamicQuantizeLinear does: uint8, the range widened to hold 0
        low, high = np.minimum(np.float32(0), a.min()), np.maximum(np.float32(0), a.max())
        a_scale = (high - low) / np.float32(255)
        a_zero = np.clip(np.round(-low / a_scale), 0, 255) if a_scale else np.float32(0)
        a = np.clip(np.round(a / a_scale) + a_zero, 0, 255) if a_scale else np.zeros_like(a)
    exact = ((a.astype(np.float64) - float(a_zero)) @ (b.astype(np.float64) - b_zero.astype(np.float64))
             * float(a_scale) * b_scale.astype(np.float64) + (bias if bias is not None else 0))
    np.testing.assert_allclose(got, exact, rtol=1e-5, atol=1e-4, err_msg=f"{op} vs exact")
    if dynamic or not (a_type == np.int8 and b_type == np.uint8):  # onnxruntime has no int8 x uint8 kernel
        (theirs,) = helpers.run_feeds(onnxruntime, model, feeds, constants)
        assert got.shape == theirs.shape
        if b_type == np.int8 and (dynamic or a_type == np.uint8) and helpers.onnxruntime_saturates_u8s8():
            return  # checked against the exact result above
        np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=1e-5, err_msg=f"{op} vs onnxruntime")
