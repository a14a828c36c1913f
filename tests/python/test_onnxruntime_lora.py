"""LoRA adapters as onnxruntime has them (AdapterFormat, LoraAdapter, RunOptions.add_active_adapter), each case
against onnxruntime: adapter files written by one runtime read by the other, runs with an active adapter feeding
its parameters in place of the overridable initializers of those names (declared with a free rank dim), and
malformed files refused with an error instead of a crash."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import nxrt

ort = pytest.importorskip("onnxruntime")

WEIGHT = np.arange(16, dtype=np.float32).reshape(4, 4) / 8


def lora_model():
    """y = x W + (x A) B, with A [4, rank] and B [rank, 4] overridable initializers of rank 0 (no adapter)."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4]),
              helper.make_tensor_value_info("lora_a", TensorProto.FLOAT, [4, "rank"]),
              helper.make_tensor_value_info("lora_b", TensorProto.FLOAT, ["rank", 4])]
    initializers = [numpy_helper.from_array(WEIGHT, "w"),
                    numpy_helper.from_array(np.zeros((4, 0), np.float32), "lora_a"),
                    numpy_helper.from_array(np.zeros((0, 4), np.float32), "lora_b")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["base"]), helper.make_node("MatMul", ["x", "lora_a"], ["xa"]),
             helper.make_node("MatMul", ["xa", "lora_b"], ["delta"]), helper.make_node("Add", ["base", "delta"], ["y"])]
    graph = helper.make_graph(nodes, "lora", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])],
                              initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def parameters(runtime, rank):
    a = (np.arange(4 * rank, dtype=np.float32).reshape(4, rank) + 1) / 4
    b = (np.arange(rank * 4, dtype=np.float32).reshape(rank, 4) - 3) / 5
    return {"lora_a": runtime.OrtValue.ortvalue_from_numpy(a), "lora_b": runtime.OrtValue.ortvalue_from_numpy(b)}


def export(runtime, path, params, adapter_version=3, model_version=5):
    adapter = runtime.AdapterFormat()
    adapter.set_adapter_version(adapter_version)
    adapter.set_model_version(model_version)
    adapter.set_parameters(params)
    adapter.export_adapter(str(path))


@pytest.mark.parametrize("writer,reader", [(nxrt, ort), (ort, nxrt), (nxrt, nxrt)],
                         ids=["nxrt-ort", "ort-nxrt", "nxrt"])
def test_adapter_files_read_back_in_either_runtime(tmp_path, writer, reader):
    params = parameters(writer, 2)
    params["steps"] = writer.OrtValue.ortvalue_from_numpy(np.array([[7, -8, 9]], np.int64))
    params["half"] = writer.OrtValue.ortvalue_from_numpy(np.array([1.5, -2.25], np.float16))
    export(writer, tmp_path / "a.onnx_adapter", params)
    read = reader.AdapterFormat.read_adapter(str(tmp_path / "a.onnx_adapter"))
    assert (read.get_adapter_version(), read.get_model_version()) == (3, 5)
    got = read.get_parameters()
    assert sorted(got) == sorted(params)
    for name, value in got.items():
        assert value.element_type() == params[name].element_type() and value.shape() == params[name].shape()
        np.testing.assert_array_equal(value.numpy(), params[name].numpy())


@pytest.mark.parametrize("rank", [1, 3])
def test_runs_with_an_active_adapter_match_onnxruntime(tmp_path, rank):
    export(ort, tmp_path / "a.onnx_adapter", parameters(ort, rank))
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    results = []
    for runtime in (nxrt, ort):
        adapter = runtime.LoraAdapter()
        adapter.Load(str(tmp_path / "a.onnx_adapter"))
        options = runtime.RunOptions()
        options.add_active_adapter(adapter)
        session = runtime.InferenceSession(lora_model(), providers=["CPUExecutionProvider"])
        assert [(i.name, i.shape) for i in session.get_overridable_initializers()] == [
            ("lora_a", [4, "rank"]), ("lora_b", ["rank", 4])]
        results.append((session.run(None, {"x": x}, options)[0], session.run(None, {"x": x})[0]))
    (with_adapter, base), (ort_with_adapter, ort_base) = results
    np.testing.assert_allclose(with_adapter, ort_with_adapter, rtol=1e-6)
    np.testing.assert_allclose(base, ort_base, rtol=1e-6)
    np.testing.assert_allclose(base, x @ WEIGHT, rtol=1e-6)
    assert not np.allclose(with_adapter, base)


def test_an_overridable_initializer_still_refuses_a_feed_its_declaration_excludes():
    session = nxrt.InferenceSession(lora_model())
    x = np.ones((4, 4), np.float32)
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="lora_a"):
        session.run(None, {"x": x, "lora_a": np.ones((5, 2), np.float32), "lora_b": np.ones((2, 4), np.float32)})


@pytest.mark.parametrize("damage", ["empty", "identifier", "truncated", "version"])
def test_malformed_adapter_files_are_refused(tmp_path, damage):
    path = tmp_path / "a.onnx_adapter"
    export(nxrt, path, parameters(nxrt, 2))
    data = bytearray(path.read_bytes())
    if damage == "empty":
        data = bytearray()
    elif damage == "identifier":
        data[4:8] = b"XXXX"
    elif damage == "truncated":
        data = data[:len(data) // 2]
    else:  # format_version, the root table's first field
        root = int.from_bytes(data[:4], "little")
        vtable = root - int.from_bytes(data[root:root + 4], "little", signed=True)
        field = root + int.from_bytes(data[vtable + 4:vtable + 6], "little")
        data[field:field + 4] = (7).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError):
        nxrt.AdapterFormat.read_adapter(str(path))
    adapter = nxrt.LoraAdapter()
    with pytest.raises(ValueError):
        adapter.Load(str(path))
