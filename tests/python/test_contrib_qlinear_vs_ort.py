"""Differential tests for the com.microsoft quantized forms of default-domain ops (QLinearConcat, QLinearWhere,
QLinearSoftmax, QLinearGlobalAveragePool, QGemm) and com.microsoft FusedMatMul, against onnxruntime and an exact
float64 reference, on random shapes, attributes and quantization parameters. Quantized results must be the
exact value rounded half to even (either neighbour within float rounding of a tie); onnxruntime, which computes
some of them through other float orderings or lookup tables, is allowed one step."""

import numpy as np
import onnxruntime
import pytest

import helpers
import nxrt

MS = "com.microsoft"


def params(rng, dtype):
    info = np.iinfo(dtype)
    scale = np.array(rng.uniform(0.005, 0.1), np.float32)
    zero = np.array(rng.integers(info.min // 2, info.max // 2 + 1), dtype)
    return scale, zero


def codes(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def dequantize(q, scale, zero):
    return (q.astype(np.float64) - float(zero)) * float(scale)


def assert_within_one(got, theirs, what):
    assert got.shape == theirs.shape, (got.shape, theirs.shape)
    assert np.abs(got.astype(np.int32) - theirs.astype(np.int32)).max(initial=0) <= 1, f"{what} vs onnxruntime"


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("seed", range(8))
def test_qlinear_concat(seed, dtype):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    base = [int(d) for d in rng.integers(1, 4, size=rank)]
    axis = int(rng.integers(-rank, rank))
    y_scale, y_zero = params(rng, dtype)
    feeds = [("y_scale", y_scale), ("y_zero", y_zero)]
    parts = []
    for i in range(int(rng.integers(1, 4))):
        shape = list(base)
        shape[axis] = int(rng.integers(0 if i else 1, 4))
        x = codes(rng, dtype, shape)
        scale, zero = (y_scale, y_zero) if i == 1 else params(rng, dtype)  # input 1 copies
        feeds += [(f"x{i}", x), (f"x{i}_scale", scale), (f"x{i}_zero", zero)]
        parts.append(dequantize(x, scale, zero) / float(y_scale) + float(y_zero))
    model = helpers.one_node_model("QLinearConcat", feeds, (True,), {"axis": axis}, MS)
    (got,) = helpers.run_feeds(nxrt, model, feeds)
    helpers.assert_requantized_equal(got, np.concatenate(parts, axis=axis), err_msg="QLinearConcat vs exact")
    (theirs,) = helpers.run_feeds(onnxruntime, model, feeds)
    assert_within_one(got, theirs, "QLinearConcat")


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("seed", range(8))
def test_qlinear_where(seed, dtype):
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 4))))
    def broadcastable():
        return tuple(1 if rng.random() < 0.4 else d for d in shape)[int(rng.integers(0, len(shape))):]
    condition = rng.random(broadcastable()) < 0.5
    x, y = codes(rng, dtype, broadcastable()), codes(rng, dtype, shape if seed % 2 else broadcastable())
    (x_scale, x_zero), (y_scale, y_zero), (z_scale, z_zero) = (params(rng, dtype) for _ in range(3))
    if seed % 3 == 0:
        z_scale, z_zero = x_scale, x_zero
    feeds = [("c", condition), ("x", x), ("x_scale", x_scale), ("x_zero", x_zero), ("y", y), ("y_scale", y_scale),
             ("y_zero", y_zero), ("z_scale", z_scale), ("z_zero", z_zero)]
    model = helpers.one_node_model("QLinearWhere", feeds, (True,), {}, MS)
    (got,) = helpers.run_feeds(nxrt, model, feeds)
    real = np.where(condition, dequantize(x, x_scale, x_zero), dequantize(y, y_scale, y_zero)) / float(z_scale)
    helpers.assert_requantized_equal(got, real + float(z_zero), err_msg="QLinearWhere vs exact")
    (theirs,) = helpers.run_feeds(onnxruntime, model, feeds)
    assert_within_one(got, theirs, "QLinearWhere")


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("seed", range(10))
def test_qlinear_softmax(seed, dtype):
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(1, 6, size=int(rng.integers(1, 4))))
    rank = len(shape)
    opset = [12, 13][seed % 2]
    attrs = {"opset": opset}
    axis = -1  # the default at every opset
    if seed % 3:
        axis = int(rng.integers(-rank, rank))
        attrs["axis"] = axis
    x = codes(rng, dtype, shape)
    x_scale, x_zero = params(rng, dtype)
    y_scale = np.array(1.0 / 256.0 if dtype == np.uint8 else 1.0 / 128.0, np.float32)  # the scale a quantizer picks
    y_zero = np.array(0 if dtype == np.uint8 else -128, dtype)
    feeds = [("x", x), ("x_scale", x_scale), ("x_zero", x_zero), ("y_scale", y_scale), ("y_zero", y_zero)]
    model = helpers.one_node_model("QLinearSoftmax", feeds, (True,), attrs, MS)
    (got,) = helpers.run_feeds(nxrt, model, feeds)
    v = dequantize(x, x_scale, x_zero)
    a = axis % rank
    if opset < 13:
        rows = v.reshape(int(np.prod(shape[:a], dtype=np.int64)), -1)
        e = np.exp(rows - rows.max(axis=1, keepdims=True))
        soft = (e / e.sum(axis=1, keepdims=True)).reshape(shape)
    else:
        e = np.exp(v - v.max(axis=a, keepdims=True))
        soft = e / e.sum(axis=a, keepdims=True)
    # The float32 exponentials may move a value across a rounding boundary: one step from the exact result.
    real = soft / float(y_scale) + float(y_zero)
    info = np.iinfo(dtype)
    assert np.abs(got.astype(np.float64) - np.clip(np.rint(real), info.min, info.max)).max() <= 1, "vs exact"
    (theirs,) = helpers.run_feeds(onnxruntime, model, feeds)
    assert_within_one(got, theirs, f"QLinearSoftmax opset {opset} axis {axis}")


@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("seed", range(6))
def test_qlinear_global_average_pool(seed, dtype, channels_last):
    rng = np.random.default_rng(seed)
    spatial = tuple(int(d) for d in rng.integers(1, 7, size=int(rng.integers(1, 3))))
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 5))
    shape = (n,) + spatial + (c,) if channels_last else (n, c) + spatial
    x = codes(rng, dtype, shape)
    (x_scale, x_zero), (y_scale, y_zero) = params(rng, dtype), params(rng, dtype)
    feeds = [("x", x), ("x_scale", x_scale), ("x_zero", x_zero), ("y_scale", y_scale), ("y_zero", y_zero)]
    model = helpers.one_node_model("QLinearGlobalAveragePool", feeds, (True,), {"channels_last": channels_last}, MS)
    (got,) = helpers.run_feeds(nxrt, model, feeds)
    axes = tuple(range(1, 1 + len(spatial))) if channels_last else tuple(range(2, 2 + len(spatial)))
    real = dequantize(x, x_scale, x_zero).mean(axis=axes, keepdims=True) / float(y_scale) + float(y_zero)
    helpers.assert_requantized_equal(got, real, err_msg="QLinearGlobalAveragePool vs exact")
    (theirs,) = helpers.run_feeds(onnxruntime, model, feeds)
    assert_within_one(got, theirs, "QLinearGlobalAveragePool")


@pytest.mark.parametrize("output", ["float", "quantized"])
@pytest.mark.parametrize("seed", range(12))
def test_qgemm(seed, output):
    # onnxruntime's CPU QGemm takes uint8 A with uint8 or int8 B, or int8 A and B; a quantized Y has A's type.
    rng = np.random.default_rng(seed)
    a_type = [np.uint8, np.int8][seed % 2]
    b_type = np.int8 if a_type == np.int8 or seed % 4 == 0 else np.uint8
    m, k, n = (int(d) for d in rng.integers(1, 9, size=3))
    trans_a, trans_b = int(rng.integers(0, 2)), int(rng.integers(0, 2))
    alpha = float(rng.choice([1.0, 0.5, 2.0]))
    a = codes(rng, a_type, (k, m) if trans_a else (m, k))
    b = codes(rng, b_type, (n, k) if trans_b else (k, n))
    a_scale, a_zero = params(rng, a_type)
    per_column = seed % 3 == 0
    b_scale = np.array(rng.uniform(0.005, 0.05, size=n if per_column else ()), np.float32)
    b_zero = np.array(rng.integers(-5, 6, size=n if per_column else ()) + (128 if b_type == np.uint8 else 0),
                      b_type)
    c = np.array(rng.integers(-500, 500, size=[(m, n), (n,), (1, n), (m, 1), ()][seed % 5]), np.int32) \
        if seed % 4 else None
    y_scale, y_zero = (None, None)
    if output != "float":
        y_scale = np.array(rng.uniform(0.05, 0.5), np.float32)
        y_zero = np.array(rng.integers(-20, 21) + (128 if a_type == np.uint8 else 0), a_type)
    feeds = [("a", a), ("a_scale", a_scale), ("a_zero", a_zero), ("b", b), ("b_scale", b_scale),
             ("b_zero", b_zero), ("c", c), ("y_scale", y_scale), ("y_zero", y_zero)]
    attrs = {"transA": trans_a, "transB": trans_b, "alpha": alpha}
    constants = ("b", "b_scale", "b_zero") if seed % 2 else ()
    model = helpers.one_node_model("QGemm", feeds, (True,), attrs, MS, constants)
    (got,) = helpers.run_feeds(nxrt, model, feeds, constants)
    op_a = (a.T if trans_a else a).astype(np.int64) - int(a_zero)
    op_b = (b.T if trans_b else b).astype(np.int64) - b_zero.astype(np.int64)
    acc = op_a @ op_b + (c.astype(np.int64) if c is not None else 0)
    multiplier = np.float32(alpha) * a_scale * b_scale
    (theirs,) = helpers.run_feeds(onnxruntime, model, feeds, constants)
    # onnxruntime's uint8 x int8 products may saturate on this CPU (helpers.onnxruntime_saturates_u8s8).
    compare_peer = not (a_type == np.uint8 and b_type == np.int8 and helpers.onnxruntime_saturates_u8s8())
    if output == "float":
        want = acc * multiplier.astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        if compare_peer:
            np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=1e-5)
    else:
        real = acc * (multiplier / y_scale).astype(np.float64) + float(y_zero)
        helpers.assert_requantized_equal(got, real, err_msg="QGemm vs exact")
        if compare_peer:
            assert_within_one(got, theirs, "QGemm")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("seed", range(12))
def test_fused_matmul(seed, dtype):
    rng = np.random.default_rng(seed)
    trans_a, trans_b = seed % 2, (seed // 2) % 2
    trans_batch_a, trans_batch_b = (seed // 4) % 2, (seed // 8) % 2 if seed < 8 else seed % 3 == 0
    rank = int(rng.integers(2, 5))
    batch = [int(d) for d in rng.integers(1, 4, size=rank - 2)]
    m, k, n = (int(d) for d in rng.integers(1, 6, size=3))

    def operand(rows, cols, trans, trans_batch):
        # The stored shape whose FusedMatMul view is batch + [rows, cols].
        view = batch + [rows, cols]
        perm = list(range(rank))
        if trans_batch and rank >= 3:
            perm = list(range(1, rank - 1)) + [0, rank - 1]
        if trans:
            perm[-2], perm[-1] = perm[-1], perm[-2]
        stored = [0] * rank
        for i, p in enumerate(perm):
            stored[p] = view[i]
        x = rng.standard_normal(stored).astype(dtype)
        return x, np.transpose(x, perm)

    a, a_view = operand(m, k, trans_a, trans_batch_a)
    b, b_view = operand(k, n, trans_b, trans_batch_b)
    alpha = float(rng.choice([1.0, 0.25, -1.5]))
    attrs = {"transA": trans_a, "transB": trans_b, "transBatchA": int(trans_batch_a),
             "transBatchB": int(trans_batch_b), "alpha": alpha}
    feeds = [("a", a), ("b", b)]
    model = helpers.one_node_model("FusedMatMul", feeds, (True,), attrs, MS)
    (got,) = helpers.run_feeds(nxrt, model, feeds)
    want = alpha * (a_view.astype(np.float64) @ b_view.astype(np.float64))
    tol = 2e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str(attrs))
    if dtype != np.float64:  # onnxruntime's CPU FusedMatMul has no double kernel
        (theirs,) = helpers.run_feeds(onnxruntime, model, feeds)
        np.testing.assert_allclose(got, theirs, rtol=tol, atol=tol, err_msg=f"{attrs} vs onnxruntime")


def window_averages(x, kernel, strides, pads, ceil_mode, count_include_pad):
    """Average pooling of NCHW float64 x as ONNX Runtime's QLinearAveragePool divides: by the input elements in the
    window, or with count_include_pad by the full kernel size (also for a ceil_mode window past the end pad)."""
    rank = len(kernel)
    spatial = x.shape[2:]
    out = []
    for d in range(rank):
        span = spatial[d] + pads[d] + pads[rank + d] - kernel[d]
        size = (-(-span // strides[d]) if ceil_mode else span // strides[d]) + 1
        if ceil_mode and (size - 1) * strides[d] >= spatial[d] + pads[d]:
            size -= 1
        out.append(size)
    y = np.zeros(x.shape[:2] + tuple(out))
    for index in np.ndindex(*out):
        window = tuple(slice(max(0, o * s - p), min(n, o * s - p + k))
                       for o, s, p, n, k in zip(index, strides, pads, spatial, kernel))
        part = x[(slice(None), slice(None)) + window]
        count = part[0, 0].size
        divisor = np.prod(kernel) if count_include_pad else count
        y[(slice(None), slice(None)) + index] = part.sum(axis=tuple(range(2, 2 + rank))) / divisor if count else 0
    return y


@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("seed", range(10))
def test_qlinear_average_pool(seed, dtype, channels_last):
    rng = np.random.default_rng(seed)
    spatial_rank = 1 + seed % 2
    spatial = [int(d) for d in rng.integers(3, 8, size=spatial_rank)]
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    kernel = [int(rng.integers(1, 4)) for _ in spatial]
    strides = [int(rng.integers(1, 3)) for _ in spatial]
    pads = [int(rng.integers(0, k)) for k in kernel] * 2
    attrs = {"kernel_shape": kernel, "strides": strides, "pads": pads, "count_include_pad": seed % 2,
             "ceil_mode": int(seed % 4 == 3), "channels_last": channels_last}
    x_nchw = codes(rng, dtype, [n, c] + spatial)
    x = np.moveaxis(x_nchw, 1, -1).copy() if channels_last else x_nchw
    (x_scale, x_zero), (y_scale, y_zero) = params(rng, dtype), params(rng, dtype)
    feeds = [("x", x), ("x_scale", x_scale), ("x_zero", x_zero), ("y_scale", y_scale), ("y_zero", y_zero)]
    model = helpers.one_node_model("QLinearAveragePool", feeds, (True,), attrs, MS)
    (got,) = helpers.run_feeds(nxrt, model, feeds)
    average = window_averages(dequantize(x_nchw, x_scale, x_zero), kernel, strides, pads, attrs["ceil_mode"],
                              attrs["count_include_pad"])
    real = average / float(y_scale) + float(y_zero)
    if channels_last:
        real = np.moveaxis(real, 1, -1)
    helpers.assert_requantized_equal(got, real, err_msg=f"QLinearAveragePool {attrs} vs exact")
    (theirs,) = helpers.run_feeds(onnxruntime, model, feeds)
    assert_within_one(got, theirs, f"QLinearAveragePool {attrs}")


@pytest.mark.parametrize("weight_type", [np.uint8, np.int8])
@pytest.mark.parametrize("seed", range(8))
def test_qattention(seed, weight_type):
    # Attention of the dequantized input and weight; onnxruntime's CPU kernel takes a uint8 input.
    rng = np.random.default_rng(seed)
    b, s, hidden, heads = int(rng.integers(1, 3)), int(rng.integers(1, 5)), 8, [1, 2, 4][seed % 3]
    head = hidden // heads
    x = codes(rng, np.uint8, (b, s, hidden))
    w = codes(rng, weight_type, (hidden, 3 * hidden))
    bias = rng.standard_normal(3 * hidden).astype(np.float32)
    x_scale, x_zero = params(rng, np.uint8)
    per_column = seed % 2 == 1
    w_scale = np.array(rng.uniform(0.005, 0.05, size=3 * hidden if per_column else ()), np.float32)
    w_zero = np.array(rng.integers(-3, 4, size=3 * hidden if per_column else ()) +
                      (128 if weight_type == np.uint8 else 0), weight_type)
    past_len = int(rng.integers(0, 3)) if seed % 4 >= 2 else 0
    past = rng.standard_normal((2, b, heads, past_len, head)).astype(np.float32) if past_len else None
    unidirectional = seed % 3 == 0
    feeds = [("x", x), ("w", w), ("bias", bias), ("x_scale", x_scale), ("w_scale", w_scale), ("mask", None),
             ("x_zero", x_zero), ("w_zero", w_zero), ("past", past)]
    constants = ("w", "w_scale", "w_zero") if seed % 2 == 0 else ()
    model = helpers.one_node_model("QAttention", feeds, (True, past is not None),
                                   {"num_heads": heads, "unidirectional": int(unidirectional)}, MS, constants)
    got = helpers.run_feeds(nxrt, model, feeds, constants)
    theirs = helpers.run_feeds(onnxruntime, model, feeds, constants)
    qkv = dequantize(x, x_scale, x_zero) @ ((w.astype(np.float64) - w_zero.astype(np.float64)) *
                                            w_scale.astype(np.float64)) + bias
    q, k, v = (qkv[..., i * hidden:(i + 1) * hidden].reshape(b, s, heads, head).transpose(0, 2, 1, 3)
               for i in range(3))
    if past is not None:
        k = np.concatenate([past[0], k], axis=2)
        v = np.concatenate([past[1], v], axis=2)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head)
    if unidirectional:
        t = k.shape[2]
        scores = np.where(np.arange(t)[None, :] > np.arange(s)[:, None] + past_len, -np.inf, scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    want = ((e / e.sum(axis=-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(b, s, hidden)
    np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-4)
    if past is not None:
        np.testing.assert_allclose(got[1], np.stack([k, v]), rtol=1e-4, atol=1e-4)
    # onnxruntime's uint8 x int8 products may saturate on this CPU (helpers.onnxruntime_saturates_u8s8).
    if weight_type == np.int8 and helpers.onnxruntime_saturates_u8s8():
        return
    np.testing.assert_allclose(got[0], theirs[0], rtol=1e-4, atol=1e-4)
    if past is not None:
        np.testing.assert_allclose(got[1], theirs[1], rtol=1e-4, atol=1e-4)
