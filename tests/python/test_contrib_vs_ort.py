"""Differential tests for the com.microsoft activations and layer norms (Gelu, FastGelu, BiasGelu, QuickGelu,
BiasAdd, BiasSoftmax, SkipLayerNormalization, SkipSimplifiedLayerNormalization, EmbedLayerNormalization) and
the ONNX-domain SimplifiedLayerNormalization that ONNX Runtime registers, on random shapes and attributes:
against onnxruntime where its CPU provider has the op and type, else against a numpy reference in float64."""

import numpy as np
import onnxruntime
import pytest

import helpers
import nxrt

MS = "com.microsoft"
SEEDS = range(8)
TOLERANCE = {np.float16: 2e-2, np.float32: 2e-5, np.float64: 1e-10}


def make_model(op, feeds, outputs, attrs=None, domain=MS, constants=()):
    return helpers.one_node_model(op, feeds, outputs, attrs, domain, constants)


run = helpers.run_feeds


def assert_close(got, want, dtype, what):
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=tol, atol=tol,
                               err_msg=what)


def random_shape(rng, min_rank, max_rank, high=7):
    return tuple(int(d) for d in rng.integers(1, high, size=int(rng.integers(min_rank, max_rank + 1))))


def check_vs_ort(op, feeds, outputs=(True,), attrs=None, domain=MS, dtype=np.float32, constants=()):
    model = make_model(op, feeds, outputs, attrs, domain, constants)
    got = run(nxrt, model, feeds, constants)
    want = run(onnxruntime, model, feeds, constants)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{op} output {i}: {g.shape} vs {w.shape}"
        assert_close(g, w, dtype, f"{op} output {i} {attrs}")


# ---- activations ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("seed", SEEDS)
def test_gelu_and_bias_gelu(seed, dtype):
    rng = np.random.default_rng(seed)
    shape = random_shape(rng, 1, 4)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    bias = rng.standard_normal(shape[-1]).astype(dtype)
    check_vs_ort("Gelu", [("x", x)], dtype=dtype)
    check_vs_ort("BiasGelu", [("x", x), ("bias", bias)], dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("seed", SEEDS)
def test_fast_gelu(seed, dtype):
    rng = np.random.default_rng(seed)
    shape = random_shape(rng, 1, 4)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    bias = rng.standard_normal(shape[-1]).astype(dtype) if seed % 2 else None
    constants = ("bias",) if seed % 4 == 1 else ()
    feeds = [("x", x), ("bias", bias)]
    if dtype == np.float64:
        # onnxruntime's float64 FastGelu is off by up to 1e-7 relative (float constants): numpy reference.
        (got,) = run(nxrt, make_model("FastGelu", feeds, (True,), constants=constants), feeds, constants)
        u = x + (bias if bias is not None else 0)
        assert_close(got, 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u**3))), dtype, "FastGelu")
        return
    check_vs_ort("FastGelu", feeds, dtype=dtype, constants=constants)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("seed", SEEDS)
def test_quick_gelu(seed, dtype):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(random_shape(rng, 1, 4)) * 4).astype(dtype)
    attrs = {"alpha": float(rng.uniform(0.5, 2.5))} if seed % 2 else None
    if dtype == np.float64:
        (got,) = run(nxrt, make_model("QuickGelu", [("x", x)], (True,), attrs), [("x", x)])
        alpha = float(np.float32(attrs["alpha"] if attrs else 1.702))  # the attribute is a float32
        assert_close(got, x / (1 + np.exp(-alpha * x)), dtype, "QuickGelu")
        return
    check_vs_ort("QuickGelu", [("x", x)], attrs=attrs, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("seed", SEEDS)
def test_bias_add(seed, dtype):
    """ONNX Runtime has BiasAdd on CUDA only: numpy reference."""
    rng = np.random.default_rng(seed)
    b, s, c = (int(v) for v in rng.integers(1, 6, size=3))
    x, skip = (rng.standard_normal((b, s, c)).astype(dtype) for _ in range(2))
    bias = rng.standard_normal(c).astype(dtype)
    feeds = [("x", x), ("bias", bias), ("skip", skip)]
    (got,) = run(nxrt, make_model("BiasAdd", feeds, (True,)), feeds)
    want = x.astype(np.float64) + bias + skip
    assert_close(got, want, dtype, "BiasAdd")


def softmax(x, axis):
    axes = tuple(range(axis, x.ndim))
    e = np.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", SEEDS)
def test_bias_softmax(seed, dtype):
    """ONNX Runtime has BiasSoftmax on CUDA only: numpy reference, bias broadcast numpy-style."""
    rng = np.random.default_rng(seed)
    shape = random_shape(rng, 2, 4)
    bias_shape = tuple(1 if rng.random() < 0.4 else d for d in shape)[int(rng.integers(0, 2)):]
    x = rng.standard_normal(shape).astype(dtype)
    bias = rng.standard_normal(bias_shape).astype(dtype)
    axis = int(rng.integers(1, len(shape)))
    feeds = [("x", x), ("bias", bias)]
    attrs = {"axis": axis, "is_inner_broadcast": int(seed % 2)}
    (got,) = run(nxrt, make_model("BiasSoftmax", feeds, (True,), attrs), feeds)
    assert_close(got, softmax(x.astype(np.float64) + bias, axis), dtype, f"BiasSoftmax {attrs}")


def test_bias_softmax_requires_inner_broadcast():
    x = np.zeros((2, 3), np.float32)
    feeds = [("x", x), ("bias", x)]
    with pytest.raises(Exception, match="is_inner_broadcast"):
        nxrt.InferenceSession(make_model("BiasSoftmax", feeds, (True,)))


# ---- layer norms ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("simplified", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_skip_layer_norm(seed, simplified, dtype):
    rng = np.random.default_rng(seed)
    b, s, h = (int(v) for v in rng.integers(1, 6, size=3))
    h *= 8
    x = rng.standard_normal((b, s, h)).astype(dtype)
    skip_shape = [(b, s, h), (1, s, h), (s, h)][seed % 3]
    skip = rng.standard_normal(skip_shape).astype(dtype)
    gamma = rng.standard_normal(h).astype(dtype)
    beta = rng.standard_normal(h).astype(dtype) if seed % 2 else None
    bias = rng.standard_normal(h).astype(dtype) if seed % 4 < 2 else None
    attrs = {"epsilon": float(rng.choice([1e-12, 1e-5]))}
    outputs = (True, False, False, True) if seed % 2 else (True,)
    if simplified:
        feeds = [("x", x), ("skip", skip), ("gamma", gamma), ("bias", bias)]
        op = "SkipSimplifiedLayerNormalization"
    else:
        feeds = [("x", x), ("skip", skip), ("gamma", gamma), ("beta", beta), ("bias", bias)]
        op = "SkipLayerNormalization"
    check_vs_ort(op, feeds, outputs, attrs, dtype=dtype, constants=("gamma", "beta", "bias") if seed % 3 == 0 else ())


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("seed", SEEDS)
def test_simplified_layer_norm(seed, dtype):
    """ONNX Runtime registers SimplifiedLayerNormalization (RMS norm) in the ONNX domain; its CPU kernel has float
    and float16 (and double): output, and inv_std_var [.., 1] over the normalized dims."""
    rng = np.random.default_rng(seed)
    shape = random_shape(rng, 2, 4)
    axis = -1 if seed % 2 else int(rng.integers(1, len(shape)))
    x = rng.standard_normal(shape).astype(dtype)
    scale = rng.standard_normal(shape[axis:] if axis > 0 else shape[-1:]).astype(dtype)
    outputs = (True, True) if seed % 3 == 0 else (True,)
    attrs = {"axis": axis, "epsilon": 1e-5}
    feeds = [("x", x), ("scale", scale)]
    if dtype == np.float64:
        (got, *_) = run(nxrt, make_model("SimplifiedLayerNormalization", feeds, outputs, attrs, domain=""), feeds)
        axes = tuple(range(axis % x.ndim, x.ndim))
        want = x / np.sqrt((x.astype(np.float64) ** 2).mean(axis=axes, keepdims=True) + 1e-5) * scale
        assert_close(got, want, dtype, "SimplifiedLayerNormalization")
        return
    check_vs_ort("SimplifiedLayerNormalization", feeds, outputs, attrs, domain="", dtype=dtype)


@pytest.mark.parametrize("seed", SEEDS)
def test_embed_layer_norm(seed):
    rng = np.random.default_rng(seed)
    b, s = (int(v) for v in rng.integers(1, 5, size=2))
    h, vocab, positions, segments = 16, 11, s + int(rng.integers(0, 4)), 3
    ids = rng.integers(0, vocab, size=(b, s)).astype(np.int32)
    segment_ids = rng.integers(0, segments, size=(b, s)).astype(np.int32) if seed % 2 else None
    word = rng.standard_normal((vocab, h)).astype(np.float32)
    position = rng.standard_normal((positions, h)).astype(np.float32)
    segment = rng.standard_normal((segments, h)).astype(np.float32) if seed % 2 else None
    gamma, beta = (rng.standard_normal(h).astype(np.float32) for _ in range(2))
    mask = (rng.random((b, s)) < 0.7).astype(np.int32) if seed % 4 < 2 else None
    position_ids = None
    if seed % 3 == 1:
        position_ids = rng.integers(0, positions, size=(1 if seed % 2 else b, s)).astype(np.int32)
    feeds = [("ids", ids), ("segment_ids", segment_ids), ("word", word), ("position", position),
             ("segment", segment), ("gamma", gamma), ("beta", beta), ("mask", mask), ("position_ids", position_ids)]
    outputs = (True, True, True) if seed % 2 else (True, True)
    check_vs_ort("EmbedLayerNormalization", feeds, outputs, {"epsilon": 1e-5},
                 constants=("word", "position", "segment", "gamma", "beta") if seed % 3 == 0 else ())


def test_embed_layer_norm_rejects_an_id_outside_the_table():
    ids = np.array([[0, 11]], np.int32)
    word = np.zeros((11, 4), np.float32)
    position = np.zeros((2, 4), np.float32)
    gamma = beta = np.ones(4, np.float32)
    feeds = [("ids", ids), ("segment_ids", None), ("word", word), ("position", position), ("segment", None),
             ("gamma", gamma), ("beta", beta)]
    session = nxrt.InferenceSession(make_model("EmbedLayerNormalization", feeds, (True, True)))
    with pytest.raises(Exception, match="11"):
        session.run(None, {k: v for k, v in feeds if v is not None})


# ---- com.microsoft forms of ONNX ops, and Inverse -------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_ms_trilu_range_and_inverse(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 4, 5)).astype(np.float32)
    k = np.array(int(rng.integers(-3, 4)), np.int64)
    check_vs_ort("Trilu", [("x", x), ("k", k if seed % 2 else None)], attrs={"upper": int(seed % 3 == 0)})
    start, limit = (np.array(v, np.int32) for v in sorted(rng.integers(-20, 20, size=2)))
    delta = np.array(int(rng.integers(1, 4)), np.int32) if seed % 2 else None
    feeds = [("start", start), ("limit", limit), ("delta", delta)]
    model = make_model("Range", feeds, (True,))
    np.testing.assert_array_equal(run(nxrt, model, feeds)[0], run(onnxruntime, model, feeds)[0])
    for dtype in (np.float32, np.float64):
        m = rng.standard_normal((3, 4, 4)).astype(dtype) + 4 * np.eye(4, dtype=dtype)
        check_vs_ort("Inverse", [("m", m)])  # float32's tolerance for both: the elimination orders differ


@pytest.mark.parametrize("seed", range(6))
def test_ms_quantize_dequantize_linear(seed):
    rng = np.random.default_rng(seed)
    qtype = [np.uint8, np.int8, np.uint16, np.int16][seed % 4]
    info = np.iinfo(qtype)
    x = (rng.standard_normal((3, 4)) * 50).astype(np.float32)
    per_axis = seed % 2 == 1
    scale = rng.uniform(0.1, 1.0, size=4 if per_axis else ()).astype(np.float32)
    zero = rng.integers(info.min // 4, info.max // 4 + 1, size=4 if per_axis else ()).astype(qtype)
    attrs = {"axis": 1} if per_axis else {}
    feeds = [("x", x), ("scale", scale), ("zero", zero)]
    model = make_model("QuantizeLinear", feeds, (True,), attrs)
    (q,) = run(nxrt, model, feeds)
    np.testing.assert_array_equal(q, run(onnxruntime, model, feeds)[0])
    feeds = [("q", q), ("scale", scale), ("zero", zero)]
    model = make_model("DequantizeLinear", feeds, (True,), attrs)
    np.testing.assert_array_equal(run(nxrt, model, feeds)[0], run(onnxruntime, model, feeds)[0])
