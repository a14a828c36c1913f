"""The graph optimizer seen from Python: every benchmark model (bench/suite/models.py) and a few exporter-style
graphs give the same outputs with optimisation disabled (level 0), at the default level (99) and in onnxruntime.
Fusions only change rounding (folded BatchNormalization, fused epilogues); FusedElementwise matches exactly."""


import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import helpers
import nxrt


BENCH = helpers.load_bench_models()


def nxrt_run(model, feeds, level):
    options = nxrt.SessionOptions()
    options.graph_optimization_level = level
    session = nxrt.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def ort_run(model, feeds):
    return onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)


def assert_close(actual, expected, rtol, atol):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape and a.dtype == e.dtype
        scale = max(1.0, float(np.max(np.abs(e)))) if e.size else 1.0
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol * scale)


BENCH_CASES = [
    lambda: BENCH.simple_add(1000),
    lambda: BENCH.mlp(4, width=256),
    lambda: BENCH.small_cnn(1),
    lambda: BENCH.vit_encoder(layers=2),
    lambda: BENCH.gpt2_decoder(4, blocks=1),
    lambda: BENCH.weno_stencil(points=10_000),
    lambda: BENCH.gemm(64, np.float64),
]


@pytest.mark.parametrize("make_case", BENCH_CASES, ids=["add", "mlp", "cnn", "vit", "gpt2", "weno", "dgemm"])
def test_bench_models_same_at_every_level(make_case):
    case = make_case()
    plain = nxrt_run(case.model, case.feeds, nxrt.GraphOptimizationLevel.ORT_DISABLE_ALL)
    optimized = nxrt_run(case.model, case.feeds, nxrt.GraphOptimizationLevel.ORT_ENABLE_ALL)
    basic = nxrt_run(case.model, case.feeds, nxrt.GraphOptimizationLevel.ORT_ENABLE_BASIC)
    reference = ort_run(case.model, case.feeds)
    assert_close(optimized, plain, case.rtol, case.atol)
    assert_close(basic, plain, case.rtol, case.atol)
    assert_close(optimized, reference, case.rtol, case.atol)


def test_weno_fused_result_is_bit_identical():
    case = BENCH.weno_stencil(points=4097)
    plain = nxrt_run(case.model, case.feeds, nxrt.GraphOptimizationLevel.ORT_DISABLE_ALL)
    optimized = nxrt_run(case.model, case.feeds, nxrt.GraphOptimizationLevel.ORT_ENABLE_ALL)
    np.testing.assert_array_equal(optimized[0], plain[0])


def exporter_model(nodes, initializers, shape=(3, 64), opset=20):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))
    graph = helper.make_graph(nodes, "exporter", [x], [y],
                              initializer=[numpy_helper.from_array(np.asarray(v, np.float32), name=k)
                                           for k, v in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model.SerializeToString()


def gelu_erf_nodes():
    return [helper.make_node("Div", ["x", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
            helper.make_node("Add", ["e", "one"], ["p"]), helper.make_node("Mul", ["x", "p"], ["m"]),
            helper.make_node("Mul", ["m", "half"], ["y"])]


def gelu_tanh_nodes():
    return [helper.make_node("Pow", ["x", "three"], ["c"]), helper.make_node("Mul", ["c", "k0"], ["t"]),
            helper.make_node("Add", ["x", "t"], ["s"]), helper.make_node("Mul", ["s", "k1"], ["u"]),
            helper.make_node("Tanh", ["u"], ["th"]), helper.make_node("Add", ["th", "one"], ["p"]),
            helper.make_node("Mul", ["half", "x"], ["h"]), helper.make_node("Mul", ["h", "p"], ["y"])]


def layer_norm_nodes():
    return [helper.make_node("ReduceMean", ["x"], ["mean"], axes=[-1]), helper.make_node("Sub", ["x", "mean"], ["d"]),
            helper.make_node("Pow", ["d", "two"], ["sq"]), helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1]),
            helper.make_node("Add", ["var", "eps"], ["ve"]), helper.make_node("Sqrt", ["ve"], ["std"]),
            helper.make_node("Div", ["d", "std"], ["n"]), helper.make_node("Mul", ["n", "gamma"], ["g"]),
            helper.make_node("Add", ["g", "beta"], ["y"])]


EXPORTER_CASES = {
    "gelu_erf": (gelu_erf_nodes(), {"sqrt2": 1.4142135, "one": 1.0, "half": 0.5}, 20),
    "gelu_tanh": (gelu_tanh_nodes(), {"three": 3.0, "k0": 0.044715, "k1": 0.7978845608, "one": 1.0, "half": 0.5}, 20),
    "layer_norm": (layer_norm_nodes(), {"two": 2.0, "eps": 1e-5, "gamma": np.linspace(0.5, 1.5, 64),
                                        "beta": np.linspace(-0.1, 0.1, 64)}, 17),
}


@pytest.mark.parametrize("name", sorted(EXPORTER_CASES))
def test_exporter_patterns(name):
    nodes, initializers, opset = EXPORTER_CASES[name]
    model = exporter_model(nodes, initializers, opset=opset)
    feeds = {"x": np.random.default_rng(3).standard_normal((3, 64)).astype(np.float32)}
    plain = nxrt_run(model, feeds, nxrt.GraphOptimizationLevel.ORT_DISABLE_ALL)
    optimized = nxrt_run(model, feeds, nxrt.GraphOptimizationLevel.ORT_ENABLE_ALL)
    assert_close(optimized, plain, 1e-5, 1e-6)
    assert_close(optimized, ort_run(model, feeds), 1e-4, 1e-5)


def test_conv_batchnorm_folding_matches_onnxruntime():
    rng = np.random.default_rng(5)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])
    weights = {"W": rng.standard_normal((4, 3, 3, 3)), "B": rng.standard_normal(4), "scale": rng.uniform(0.5, 2, 4),
               "bias": rng.standard_normal(4), "mean": rng.standard_normal(4), "var": rng.uniform(0.5, 2, 4)}
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["b"]),
             helper.make_node("Relu", ["b"], ["y"])]
    graph = helper.make_graph(nodes, "conv_bn", [x], [y],
                              initializer=[numpy_helper.from_array(v.astype(np.float32), name=k)
                                           for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    model = model.SerializeToString()
    feeds = {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)}
    plain = nxrt_run(model, feeds, nxrt.GraphOptimizationLevel.ORT_DISABLE_ALL)
    optimized = nxrt_run(model, feeds, nxrt.GraphOptimizationLevel.ORT_ENABLE_ALL)
    assert_close(optimized, plain, 1e-5, 1e-5)
    assert_close(optimized, ort_run(model, feeds), 1e-4, 1e-5)
