"""Differential tests for LayerNormalization, BatchNormalization, InstanceNormalization and GroupNormalization on
random shapes and attributes: float32 against onnxruntime, float64 against a numpy reference (computed in
float64 from the same formulas as the ONNX spec)."""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

import nxrt

SEEDS = range(6)
NP_TO_ONNX = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE}


def make_model(op, inputs, attrs, opset, n_outputs=1, output_types=None):
    """One-node model; `inputs` is a list of (name, array)."""
    graph_inputs = [helper.make_tensor_value_info(name, NP_TO_ONNX[a.dtype.type], a.shape) for name, a in inputs]
    out_names = [f"out{i}" for i in range(n_outputs)]
    types = output_types or [NP_TO_ONNX[inputs[0][1].dtype.type]] * n_outputs
    graph_outputs = [helper.make_tensor_value_info(name, t, None) for name, t in zip(out_names, types)]
    node = helper.make_node(op, [name for name, _ in inputs], out_names, **attrs)
    graph = helper.make_graph([node], "g", graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model.SerializeToString()


def run_nxrt(model, feeds):
    session = nxrt.InferenceSession(model, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def run_ort(model, feeds):
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def random_shape(rng, min_rank, max_rank):
    rank = int(rng.integers(min_rank, max_rank + 1))
    return tuple(int(d) for d in rng.integers(1, 6, size=rank))


# ---- numpy references (float64) -------------------------------------------------------------------------------

def layer_norm_ref(x, scale, bias, axis, eps):
    axes = tuple(range(axis, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    inv = 1 / np.sqrt(var + eps)
    y = (x - mean) * inv * scale
    if bias is not None:
        y = y + bias
    return y, mean, inv


def batch_norm_ref(x, scale, bias, mean, var, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(shape) + bias.reshape(shape)


def group_norm_ref(x, scale, bias, groups, eps, per_channel):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    mean = g.mean(axis=2, keepdims=True)
    var = ((g - mean) ** 2).mean(axis=2, keepdims=True)
    normalized = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    if not per_channel:
        scale = np.repeat(scale, c // groups)
        bias = np.repeat(bias, c // groups)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return normalized * scale.reshape(shape) + bias.reshape(shape)


# ---- LayerNormalization ---------------------------------------------------------------------------------------

def layer_norm_case(seed, dtype):
    rng = np.random.default_rng(seed)
    shape = random_shape(rng, 1, 4)
    axis = int(rng.integers(-len(shape), len(shape)))
    positive = axis % len(shape)
    eps = float(rng.choice([1e-5, 1e-3]))
    x = rng.standard_normal(shape).astype(dtype)
    scale = rng.standard_normal(shape[positive:]).astype(dtype)
    bias = rng.standard_normal(shape[positive:]).astype(dtype) if seed % 2 == 0 else None
    inputs = [("X", x), ("Scale", scale)] + ([("B", bias)] if bias is not None else [])
    attrs = {"axis": axis, "epsilon": eps}
    return inputs, attrs, positive, eps


@pytest.mark.parametrize("seed", SEEDS)
def test_layer_norm_f32_vs_ort(seed):
    inputs, attrs, _, _ = layer_norm_case(seed, np.float32)
    model = make_model("LayerNormalization", inputs, attrs, 17, 3, [TensorProto.FLOAT] * 3)
    feeds = dict(inputs)
    for got, want in zip(run_nxrt(model, feeds), run_ort(model, feeds)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("seed", SEEDS)
def test_layer_norm_f64_vs_numpy(seed):
    inputs, attrs, axis, eps = layer_norm_case(seed, np.float64)
    model = make_model("LayerNormalization", inputs, attrs, 17, 3,
                       [TensorProto.DOUBLE, TensorProto.FLOAT, TensorProto.FLOAT])
    feeds = dict(inputs)
    y, mean, inv = run_nxrt(model, feeds)
    want_y, want_mean, want_inv = layer_norm_ref(feeds["X"], feeds["Scale"], feeds.get("B"), axis, np.float32(eps))
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, want_y, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mean, want_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(inv, want_inv, rtol=1e-5, atol=1e-6)


# ---- BatchNormalization ---------------------------------------------------------------------------------------

def batch_norm_case(seed, dtype):
    rng = np.random.default_rng(100 + seed)
    shape = random_shape(rng, 2, 5)
    c = shape[1]
    x = rng.standard_normal(shape).astype(dtype)
    scale = rng.standard_normal(c).astype(dtype)
    bias = rng.standard_normal(c).astype(dtype)
    mean = rng.standard_normal(c).astype(dtype)
    var = rng.uniform(0.1, 2.0, c).astype(dtype)
    eps = float(rng.choice([1e-5, 1e-2]))
    return [("X", x), ("scale", scale), ("B", bias), ("mean", mean), ("var", var)], {"epsilon": eps}, eps


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("opset", [9, 15])
def test_batch_norm_f32_vs_ort(seed, opset):
    inputs, attrs, _ = batch_norm_case(seed, np.float32)
    model = make_model("BatchNormalization", inputs, attrs, opset)
    feeds = dict(inputs)
    np.testing.assert_allclose(run_nxrt(model, feeds)[0], run_ort(model, feeds)[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("seed", SEEDS)
def test_batch_norm_f64_vs_numpy(seed):
    inputs, attrs, eps = batch_norm_case(seed, np.float64)
    model = make_model("BatchNormalization", inputs, attrs, 15)
    feeds = dict(inputs)
    want = batch_norm_ref(feeds["X"], feeds["scale"], feeds["B"], feeds["mean"], feeds["var"], np.float32(eps))
    np.testing.assert_allclose(run_nxrt(model, feeds)[0], want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_batch_norm_training_f64_vs_numpy(seed):
    inputs, attrs, eps = batch_norm_case(seed, np.float64)
    attrs = dict(attrs, training_mode=1, momentum=0.8)
    model = make_model("BatchNormalization", inputs, attrs, 15, 3)
    feeds = dict(inputs)
    y, running_mean, running_var = run_nxrt(model, feeds)
    x = feeds["X"]
    axes = (0,) + tuple(range(2, x.ndim))
    batch_mean, batch_var = x.mean(axis=axes), x.var(axis=axes)
    want = batch_norm_ref(x, feeds["scale"], feeds["B"], batch_mean, batch_var, np.float32(eps))
    momentum = np.float32(0.8)
    np.testing.assert_allclose(y, want, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(running_mean, feeds["mean"] * momentum + batch_mean * (1 - momentum), rtol=1e-12)
    np.testing.assert_allclose(running_var, feeds["var"] * momentum + batch_var * (1 - momentum), rtol=1e-12)


# ---- InstanceNormalization / GroupNormalization ---------------------------------------------------------------

def channel_case(seed, dtype, groups_of):
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(1, 4))
    groups = int(rng.integers(1, 4))
    c = groups * int(rng.integers(1, 4))
    spatial = random_shape(rng, 1, 3)
    x = (rng.standard_normal((n, c) + spatial) * 3 + 1).astype(dtype)
    params = groups_of(c, groups)
    scale = rng.standard_normal(params).astype(dtype)
    bias = rng.standard_normal(params).astype(dtype)
    eps = float(rng.choice([1e-5, 1e-2]))
    return x, scale, bias, groups, eps


@pytest.mark.parametrize("seed", SEEDS)
def test_instance_norm_f32_vs_ort(seed):
    x, scale, bias, _, eps = channel_case(seed, np.float32, lambda c, g: c)
    inputs = [("input", x), ("scale", scale), ("B", bias)]
    model = make_model("InstanceNormalization", inputs, {"epsilon": eps}, 6)
    feeds = dict(inputs)
    np.testing.assert_allclose(run_nxrt(model, feeds)[0], run_ort(model, feeds)[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
def test_instance_norm_f64_vs_numpy(seed):
    x, scale, bias, _, eps = channel_case(seed, np.float64, lambda c, g: c)
    inputs = [("input", x), ("scale", scale), ("B", bias)]
    model = make_model("InstanceNormalization", inputs, {"epsilon": eps}, 6)
    want = group_norm_ref(x, scale, bias, x.shape[1], np.float32(eps), True)
    np.testing.assert_allclose(run_nxrt(model, dict(inputs))[0], want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("opset", [18, 21])
def test_group_norm_f32_vs_ort(seed, opset):
    x, scale, bias, groups, eps = channel_case(seed, np.float32, lambda c, g: c if opset >= 21 else g)
    inputs = [("X", x), ("scale", scale), ("bias", bias)]
    model = make_model("GroupNormalization", inputs, {"epsilon": eps, "num_groups": groups}, opset)
    feeds = dict(inputs)
    try:
        want = run_ort(model, feeds)[0]
    except Exception as error:  # noqa: BLE001 - ORT builds without this opset
        pytest.skip(f"onnxruntime cannot run GroupNormalization({opset}): {error}")
    np.testing.assert_allclose(run_nxrt(model, feeds)[0], want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("opset", [18, 21])
def test_group_norm_f64_vs_numpy(seed, opset):
    per_channel = opset >= 21
    x, scale, bias, groups, eps = channel_case(seed, np.float64, lambda c, g: c if per_channel else g)
    inputs = [("X", x), ("scale", scale), ("bias", bias)]
    model = make_model("GroupNormalization", inputs, {"epsilon": eps, "num_groups": groups}, opset)
    want = group_norm_ref(x, scale, bias, groups, np.float32(eps), per_channel)
    np.testing.assert_allclose(run_nxrt(model, dict(inputs))[0], want, rtol=1e-10, atol=1e-12)


def test_layer_norm_rejects_bad_scale():
    x = np.ones((2, 3), np.float32)
    scale = np.ones((2,), np.float32)
    model = make_model("LayerNormalization", [("X", x), ("Scale", scale)], {}, 17)
    with pytest.raises(Exception):
        run_nxrt(model, {"X": x, "Scale": scale})


# ---- SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss (the loss family has no differential file of its own) --

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("op", ["SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"])
def test_losses_f32_vs_ort(seed, op):
    rng = np.random.default_rng(300 + seed)
    n, c = int(rng.integers(1, 5)), int(rng.integers(2, 6))
    spatial = random_shape(rng, 0, 2)
    scores = rng.standard_normal((n, c) + spatial).astype(np.float32)
    labels = rng.integers(0, c, size=(n,) + spatial).astype(np.int64)
    attrs = {"reduction": ["none", "sum", "mean"][seed % 3]}
    if seed % 2 == 0:
        attrs["ignore_index"] = int(labels.flat[0])
    inputs = [("scores", scores), ("labels", labels)]
    if seed % 3 != 1:
        inputs.append(("weights", rng.uniform(0.1, 2.0, c).astype(np.float32)))
    graph_inputs = [helper.make_tensor_value_info(name, TensorProto.INT64 if a.dtype == np.int64 else TensorProto.FLOAT,
                                                  a.shape) for name, a in inputs]
    n_outputs = 2 if op == "SoftmaxCrossEntropyLoss" else 1
    outputs = [helper.make_tensor_value_info(f"out{i}", TensorProto.FLOAT, None) for i in range(n_outputs)]
    node = helper.make_node(op, [name for name, _ in inputs], [o.name for o in outputs], **attrs)
    model = helper.make_model(helper.make_graph([node], "g", graph_inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 10
    feeds = dict(inputs)
    data = model.SerializeToString()
    for got, want in zip(run_nxrt(data, feeds), run_ort(data, feeds)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
