"""ai.onnx.ml CategoryMapper against onnxruntime (same process): both directions, defaults, repeated keys."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import nxrt

ort = pytest.importorskip("onnxruntime")


def mapper(input_type, output_type, **attrs):
    node = helper.make_node("CategoryMapper", ["X"], ["Y"], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", input_type, None)],
                              [helper.make_tensor_value_info("Y", output_type, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)],
                             ir_version=8).SerializeToString()


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("direction", ["strings to ints", "ints to strings"])
def test_category_mapper_matches_onnxruntime(seed, direction):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 12))
    words = [f"w{int(v)}" for v in rng.integers(0, 15, size=count)]  # repeats on purpose: the last pair wins
    ints = [int(v) for v in rng.integers(-5, 20, size=count)]
    attrs = {"cats_strings": words, "cats_int64s": ints}
    if seed % 2:
        attrs.update(default_string="none", default_int64=-99)
    shape = [(7,), (2, 3), (1, 4, 2)][seed % 3]
    if direction == "strings to ints":
        model = mapper(TensorProto.STRING, TensorProto.INT64, **attrs)
        x = np.array([f"w{int(v)}" for v in rng.integers(0, 20, size=int(np.prod(shape)))], dtype=object).reshape(shape)
    else:
        model = mapper(TensorProto.INT64, TensorProto.STRING, **attrs)
        x = rng.integers(-6, 22, size=shape).astype(np.int64)
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    got = nxrt.InferenceSession(model).run(None, {"X": x})[0]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_category_mapper_refuses_lists_of_different_lengths():
    model = mapper(TensorProto.STRING, TensorProto.INT64, cats_strings=["a", "b"], cats_int64s=[1])
    with pytest.raises(Exception, match="CategoryMapper.*differ in length"):
        nxrt.InferenceSession(model)
