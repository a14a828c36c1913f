"""More of onnxruntime's Python surface, each case against onnxruntime's own behaviour: the C-level names scripts
import from ``onnxruntime.capi`` (OrtValueVector, the C-level run_with_ort_values, is_dlpack_uint8_tensor,
check_and_normalize_provider_args), provider assignment info of fused nodes, raw byte records fed to string inputs,
read-only SparseTensor views, and the optimized-model copy with its external initializers file."""

import os
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import nxrt
from nxrt.capi import _pybind_state as C
from nxrt.capi.onnxruntime_inference_collection import check_and_normalize_provider_args

ort = pytest.importorskip("onnxruntime")
from onnxruntime.capi import _pybind_state as ORT_C  # noqa: E402
from onnxruntime.capi.onnxruntime_inference_collection import (  # noqa: E402
    check_and_normalize_provider_args as ort_check_and_normalize)


def add_mul_add_model():
    nodes = [helper.make_node("Add", ["x", "x"], ["a"], name="add_0"),
             helper.make_node("Mul", ["a", "x"], ["m"], name="mul_0"),
             helper.make_node("Add", ["m", "x"], ["y"], name="add_1")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_c_level_names_import_from_the_extension_module_path():
    from nxrt.capi.onnxruntime_pybind11_state import Fail, OrtValueVector, RunOptions, SessionOptions

    assert Fail is nxrt.capi.onnxruntime_pybind11_state.Fail and RunOptions is nxrt.RunOptions
    assert SessionOptions is nxrt.SessionOptions and OrtValueVector is C.OrtValueVector
    assert isinstance(C.get_default_session_options(), nxrt.SessionOptions)
    assert C.OrtValue is nxrt.OrtValue and hasattr(C.OrtValue, "from_dlpack")


def test_c_level_run_with_ort_values_returns_an_ortvaluevector():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    results = []
    for runtime, pybind in ((nxrt, C), (ort, ORT_C)):
        session = runtime.InferenceSession(add_mul_add_model(), providers=["CPUExecutionProvider"])
        value = runtime.OrtValue.ortvalue_from_numpy(x)
        vector = session._sess.run_with_ort_values({"x": value._get_c_value()}, ["y"], pybind.RunOptions())
        assert isinstance(vector, pybind.OrtValueVector) and len(vector) == 1
        results.append(vector[0].numpy())
    np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float32, np.int64])
def test_dlpack_capsules_of_the_c_level_value(dtype):
    x = np.arange(6).astype(dtype)
    value = nxrt.OrtValue.ortvalue_from_numpy(x)
    # onnxruntime's CPU wheel builds without the DLPack functions of its C-level module (its own test of them
    # fails there): the uint8 test follows the DLPack dtype.
    assert C.is_dlpack_uint8_tensor(value._ortvalue.to_dlpack()) == (dtype == np.uint8)
    again = C.OrtValue.from_dlpack(value._ortvalue.__dlpack__(), False)
    assert again.data_ptr() == value._ortvalue.data_ptr()
    assert value._ortvalue.__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("providers,options", [
    (None, None), (["a"], None), (["a", "b"], None), ([("a", {1: 2}), "b"], None), (["a", "b"], [{1: 2}, {}]),
    (["a", "b", "a"], [{"x": 1}, {}, {"y": 2}]), (["d", "a"], None),
    (3, None), ([3], None), (["a"], 3), (["a"], ["not dict"]), (["a", "b"], [{}])])
def test_check_and_normalize_provider_args_as_onnxruntime(providers, options):
    outcomes = []
    for check in (check_and_normalize_provider_args, ort_check_and_normalize):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                outcomes.append((check(providers, options, ["a", "b", "c"]), len(caught)))
            except ValueError:
                outcomes.append(("ValueError", len(caught)))
    assert outcomes[0] == outcomes[1]


def test_assignment_info_lists_the_nodes_of_a_fused_chain():
    ids = []
    for runtime in (nxrt, ort):
        options = runtime.SessionOptions()
        options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
        session = runtime.InferenceSession(add_mul_add_model(), options, providers=["CPUExecutionProvider"])
        subgraphs = session.get_provider_graph_assignment_info()
        assert all(s.ep_name == "CPUExecutionProvider" and len(s.get_nodes()) == 1 for s in subgraphs)
        ids.append(sorted(f"{n.domain}:{n.op_type}/{n.name}" for s in subgraphs for n in s.get_nodes()))
    assert ids[0] == ids[1] == [":Add/add_0", ":Add/add_1", ":Mul/mul_0"]


def test_byte_records_feed_a_string_input_and_each_input_has_an_ep_device_entry():
    graph = helper.make_graph([helper.make_node("Identity", ["s"], ["t"])], "g",
                              [helper.make_tensor_value_info("s", TensorProto.STRING, [2, 2])],
                              [helper.make_tensor_value_info("t", TensorProto.STRING, [2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    x = np.array([b"must", b"have", b"same", b"size"], dtype=np.void).reshape(2, 2)
    got, want = (runtime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"s": x})[0]
                 for runtime in (nxrt, ort))
    np.testing.assert_array_equal(got, want)
    assert got.dtype == object and got[1, 0] == "same"
    session = nxrt.InferenceSession(model)
    assert len(session.get_input_epdevices()) == len(ort.InferenceSession(model).get_input_epdevices()) == 1


def test_sparse_tensor_views_are_read_only_as_in_onnxruntime():
    values, indices = np.array([1.0, 2.0, 3.0], np.float32), np.array([3, 5, 15], np.int64)
    for runtime in (nxrt, ort):
        device = runtime.OrtDevice.make("cpu", 0)
        coo = runtime.SparseTensor.sparse_coo_from_numpy([9, 9], values, indices, device)
        assert not coo.values().flags.writeable and not coo.as_coo_view().indices().flags.writeable
        csr = runtime.SparseTensor.sparse_csr_from_numpy([2, 3], values, np.array([0, 2, 1], np.int64),
                                                         np.array([0, 2, 3], np.int64), device)
        view = csr.as_csrc_view()
        assert not view.inner().flags.writeable and not view.outer().flags.writeable
        np.testing.assert_array_equal(coo.values(), values)
    writable = values.copy()
    nxrt.SparseTensor.sparse_coo_from_numpy([9, 9], writable, indices).values()
    writable[0] = 5.0  # the caller's own array stays writable


def weighted_model_file(directory, external):
    """A MatMul by a 16 x 8 float weight and an Add of a 2-element bias (8 bytes): the weight in `external` beside
    the model when given."""
    weight = numpy_helper.from_array(np.arange(128, dtype=np.float32).reshape(16, 8) / 7, "w")
    bias = numpy_helper.from_array(np.array([0.5, -1.0] * 4, np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], [weight, bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = os.path.join(directory, "weighted.onnx")
    if external:
        from onnx.external_data_helper import convert_model_to_external_data
        convert_model_to_external_data(model, location=external, size_threshold=64)
    import onnx
    onnx.save_model(model, path)
    return path


@pytest.mark.parametrize("source_external", [None, "source_weights.bin"])
@pytest.mark.parametrize("data_file,min_size", [(None, None), ("copy_weights.bin", "100"), ("all.bin", "1")])
def test_optimized_model_copy_places_initializers_as_configured(tmp_path, source_external, data_file, min_size):
    source = tmp_path / "source"
    source.mkdir()
    model = weighted_model_file(str(source), source_external)
    target = tmp_path / "copy" / "optimized.onnx"
    target.parent.mkdir()
    options = nxrt.SessionOptions()
    options.optimized_model_filepath = str(target)
    if data_file:
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", data_file)
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", min_size)
    nxrt.InferenceSession(model, options)
    import onnx
    copy = onnx.load(str(target), load_external_data=False)
    stored = {t.name: t.data_location == TensorProto.EXTERNAL for t in copy.graph.initializer}
    if data_file:
        assert (target.parent / data_file).is_file()
        assert stored == {"w": True, "b": min_size == "1"}  # w: 512 bytes, b: 32 bytes
    else:
        assert stored == {"w": False, "b": False}  # nothing points back at the source's files
    for name in os.listdir(source):
        os.remove(source / name)  # the copy stands on its own
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)
    want = x @ (np.arange(128, dtype=np.float32).reshape(16, 8) / 7) + np.array([0.5, -1.0] * 4, np.float32)
    for runtime in (nxrt, ort):
        got = runtime.InferenceSession(str(target), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        np.testing.assert_allclose(got, want, rtol=1e-6)
