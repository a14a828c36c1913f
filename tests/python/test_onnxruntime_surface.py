"""Pieces of onnxruntime's Python surface that scripts written for it use (issue: nxrt as a drop-in): feeds given
as Python lists typed by the input, np.asarray of an OrtValue, OrtValue.from_dlpack of a bare capsule, the
``onnxruntime.capi._pybind_state`` import path through a plain alias, and the logging / telemetry / seed calls."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from onnx import TensorProto, helper

import nxrt

ort = pytest.importorskip("onnxruntime")


def identity_model(element_type):
    graph = helper.make_graph([helper.make_node("Identity", ["a"], ["b"])], "g",
                              [helper.make_tensor_value_info("a", element_type, [None])],
                              [helper.make_tensor_value_info("b", element_type, [None])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.parametrize("element_type,feed", [(TensorProto.FLOAT, [1.0, 2.5]), (TensorProto.INT64, [3, -4]),
                                               (TensorProto.BOOL, [True, False]), (TensorProto.DOUBLE, [0.5]),
                                               (TensorProto.STRING, ["a", "bc"]), (TensorProto.INT32, [7])])
def test_python_lists_are_fed_as_the_input_type(element_type, feed):
    model = identity_model(element_type)
    got = nxrt.InferenceSession(model).run(None, {"a": feed})[0]
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"a": feed})[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_numpy_reads_an_ortvalue_and_from_dlpack_takes_a_capsule():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    value = nxrt.OrtValue.ortvalue_from_numpy(x)
    np.testing.assert_array_equal(np.asarray(value), x)
    assert np.asarray(value, dtype=np.float64).dtype == np.float64
    again = nxrt.OrtValue.from_dlpack(value.__dlpack__())
    assert again.shape() == [2, 3]
    np.testing.assert_array_equal(again.numpy(), x)


def test_a_plain_alias_imports_capi_pybind_state():
    code = textwrap.dedent("""
        import sys
        import nxrt
        sys.modules["onnxruntime"] = nxrt
        import onnxruntime
        from onnxruntime.capi._pybind_state import Fail, InvalidArgument, SessionOptions, get_available_providers
        from onnxruntime.capi.onnxruntime_pybind11_state import Fail as Fail2
        assert Fail is Fail2 and SessionOptions is nxrt.SessionOptions
        assert "CPUExecutionProvider" in get_available_providers()
        try:  # an error nxrt raises is caught through the aliased module's class
            onnxruntime.InferenceSession(b"not a model")
        except onnxruntime.capi.onnxruntime_pybind11_state.InvalidProtobuf:
            pass
        onnxruntime.disable_telemetry_events()
        onnxruntime.enable_telemetry_events()
        onnxruntime.set_seed(7)
        onnxruntime.set_default_logger_callback(lambda *args: None)
        print("ok")
    """)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "ok"


def mul_model():
    graph = helper.make_graph([helper.make_node("Mul", ["X", "X"], ["Y"])], "g",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_run_async_calls_back_with_results_or_the_error_and_releases_the_feeds():
    import gc
    import threading
    import weakref

    done, seen = threading.Event(), {}

    def callback(results, data, err):
        seen.update(results=results, data=data, err=err, thread=threading.current_thread().name)
        done.set()

    session = nxrt.InferenceSession(mul_model())
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)
    alive = weakref.ref(x)
    session.run_async(["Y"], {"X": x}, callback, "user data", nxrt.RunOptions())
    del x, session  # the run keeps what it needs until the callback returns
    gc.collect()
    assert done.wait(10)
    assert seen["err"] == "" and seen["data"] == "user data" and seen["thread"] != threading.main_thread().name
    np.testing.assert_allclose(seen["results"][0], [[1, 4], [9, 16], [25, 36]])
    for _ in range(200):
        if alive() is None:
            break
        gc.collect()
        threading.Event().wait(0.01)
    assert alive() is None

    done.clear()
    session = nxrt.InferenceSession(mul_model())
    session.run_async(None, {"X": np.zeros((3, 2), np.int64)}, callback, None)
    assert done.wait(10)
    assert seen["results"] == [] and "Unexpected input data type" in seen["err"]
    with pytest.raises(ValueError, match="Required inputs"):  # checked before the run starts, as onnxruntime does
        session.run_async(None, {}, callback, None)


def test_memory_infos_devices_and_arena_settings_read_as_onnxruntimes():
    model = mul_model()
    theirs = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    ours = nxrt.InferenceSession(model)
    for got, want in [(ours.get_input_memory_infos(), theirs.get_input_memory_infos()),
                      (ours.get_output_memory_infos(), theirs.get_output_memory_infos())]:
        assert len(got) == len(want) == 1
        for field in ("name", "device_id", "device_vendor_id"):
            assert getattr(got[0], field) == getattr(want[0], field)
        for field in ("mem_type", "allocator_type", "device_mem_type"):
            assert getattr(got[0], field).name == getattr(want[0], field).name
    for enum_name in ("OrtMemType", "OrtAllocatorType", "OrtDeviceMemoryType", "OrtMemoryInfoDeviceType",
                      "OrtDeviceVendorId"):
        assert set(getattr(nxrt, enum_name).__members__) == set(getattr(ort, enum_name).__members__), enum_name
    info = nxrt.OrtMemoryInfo("Cpu", nxrt.OrtAllocatorType.ORT_DEVICE_ALLOCATOR, 0, nxrt.OrtMemType.DEFAULT)
    assert (info.name, info.device_id, info.allocator_type.name) == ("Cpu", 0, "ORT_DEVICE_ALLOCATOR")
    v2 = nxrt.OrtMemoryInfo.create_v2("Cpu", nxrt.OrtMemoryInfoDeviceType.CPU, 0, 0, nxrt.OrtDeviceMemoryType.DEFAULT,
                                      0, nxrt.OrtAllocatorType.ORT_DEVICE_ALLOCATOR)
    want = ort.OrtMemoryInfo.create_v2("Cpu", ort.OrtMemoryInfoDeviceType.CPU, 0, 0, ort.OrtDeviceMemoryType.DEFAULT,
                                       0, ort.OrtAllocatorType.ORT_DEVICE_ALLOCATOR)
    assert (v2.name, v2.device_vendor_id, v2.device_mem_type.name) == (want.name, want.device_vendor_id,
                                                                       want.device_mem_type.name)
    for kind, device_id in [("cpu", 0), ("cuda", 1)]:
        got, want = nxrt.OrtDevice.make(kind, device_id), ort.OrtDevice.make(kind, device_id)
        assert (got.device_type(), got.device_id(), got.device_mem_type()) == (
            want.device_type(), want.device_id(), want.device_mem_type())
    cfg, want = nxrt.OrtArenaCfg(0, -1, -1, -1), ort.OrtArenaCfg(0, -1, -1, -1)
    assert (cfg.max_mem, cfg.arena_extend_strategy, cfg.initial_chunk_size_bytes, cfg.max_dead_bytes_per_chunk) == (
        want.max_mem, want.arena_extend_strategy, want.initial_chunk_size_bytes, want.max_dead_bytes_per_chunk)
    assert nxrt.OrtArenaCfg({"max_mem": 16, "arena_extend_strategy": 1}).max_mem == 16
    with pytest.raises(RuntimeError, match="Invalid OrtArenaCfg option: bogus"):
        nxrt.OrtArenaCfg({"bogus": 1})
    nxrt.create_and_register_allocator(info, cfg)  # accepted; nxrt's sessions use their own run arena


def scaled_model(tmp_path=None):
    """Y = X * W with W a [2] float initializer; with tmp_path, W's data lies in an external file 'w.bin'."""
    from onnx import numpy_helper

    weight = numpy_helper.from_array(np.array([0.5, 2.0], np.float32), "W")
    graph = helper.make_graph([helper.make_node("Mul", ["X", "W"], ["Y"])], "g",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    if tmp_path is None:
        return model.SerializeToString()
    import onnx
    from onnx.external_data_helper import convert_model_to_external_data

    convert_model_to_external_data(model, all_tensors_to_one_file=True, location="w.bin", size_threshold=0)
    path = tmp_path / "scaled.onnx"
    onnx.save_model(model, path)
    return str(path)


def test_add_initializer_replaces_the_models_weight_and_supplies_missing_external_data(tmp_path):
    import gc

    x = np.array([1.0, 1.0], np.float32)
    for runtime in (nxrt, ort):
        options = runtime.SessionOptions()
        weight = runtime.OrtValue.ortvalue_from_numpy(np.array([3.0, 4.0], np.float32))
        options.add_initializer("W", weight)
        session = runtime.InferenceSession(scaled_model(), options, providers=["CPUExecutionProvider"])
        np.testing.assert_array_equal(session.run(None, {"X": x})[0], [3.0, 4.0])
    del weight
    gc.collect()  # the session keeps the value it was given alive
    np.testing.assert_array_equal(session.run(None, {"X": x})[0], [3.0, 4.0])

    path = scaled_model(tmp_path)
    (tmp_path / "w.bin").unlink()  # the weights arrive through the options instead
    options = nxrt.SessionOptions()
    options.add_external_initializers(["W"], [nxrt.OrtValue.ortvalue_from_numpy(np.array([-1.0, 5.0], np.float32))])
    np.testing.assert_array_equal(nxrt.InferenceSession(path, options).run(None, {"X": x})[0], [-1.0, 5.0])
    with pytest.raises(Exception):
        nxrt.InferenceSession(path)  # without them the missing file is an error

    for name, value, message in [("W", np.zeros(3, np.float32), "declares float \\[2\\]"),
                                 ("W", np.zeros(2, np.float64), "declares float \\[2\\]"),
                                 ("V", np.zeros(2, np.float32), "'V' given in the session options is not an")]:
        options = nxrt.SessionOptions()
        options.add_initializer(name, nxrt.OrtValue.ortvalue_from_numpy(value))
        with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match=message):
            nxrt.InferenceSession(scaled_model(), options)
    with pytest.raises(TypeError):
        nxrt.SessionOptions().add_initializer("W", np.zeros(2, np.float32))


def test_free_dimension_override_by_denotation_fixes_the_marked_dims():
    """A dim marked DATA_BATCH (and left free) takes the size the options give; onnxruntime reports the same
    shapes."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", 3])
    x.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    for runtime in (nxrt, ort):
        options = runtime.SessionOptions()
        options.add_free_dimension_override_by_denotation("DATA_BATCH", 5)
        session = runtime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        assert session.get_inputs()[0].shape == [5, 3], runtime.__name__
        with pytest.raises(Exception, match="dimension|dim"):
            session.run(None, {"X": np.zeros((2, 3), np.float32)})
        assert session.run(None, {"X": np.ones((5, 3), np.float32)})[0].shape == (5, 3)
    assert nxrt.InferenceSession(model).get_inputs()[0].shape == ["n", 3]  # untouched without the override


def model_with_ort_config(config_text):
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["X"], ["Y"])], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])]), opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(model, {"ort_config": config_text})
    return model.SerializeToString()


def test_session_options_load_from_the_models_ort_config_when_asked(tmp_path, monkeypatch):
    """With ORT_LOAD_CONFIG_FROM_MODEL=1 (onnxruntime's switch) or the session config entry
    session.load_model_config_from_model = 1 (which onnxruntime 1.32's Python sessions ignore; nxrt honours it as
    named), the model's "ort_config" JSON sets the session options the engine reads (here profiling, which
    end_profiling shows) and get_session_options() reports them, as onnxruntime's does."""
    import os

    config = ('{"session_options": {"intra_op_num_threads": 2, "inter_op_num_threads": 5, "execution_mode": 0, '
              '"graph_optimization_level": 1, "enable_profiling": 1, "something_else": "ignored"}}')
    model = model_with_ort_config(config)
    monkeypatch.chdir(tmp_path)  # onnxruntime writes the profile under its default prefix there
    monkeypatch.setenv("ORT_LOAD_CONFIG_FROM_MODEL", "1")
    for runtime in (nxrt, ort):
        options = runtime.SessionOptions()
        session = runtime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        got = session.get_session_options()
        assert (got.intra_op_num_threads, got.inter_op_num_threads, int(got.graph_optimization_level)) == (2, 5, 1)
        np.testing.assert_array_equal(session.run(None, {"X": np.array([-1, 2], np.float32)})[0], [0, 2])
        profile = session.end_profiling()
        assert profile, f"{runtime.__name__} did not profile"
        os.remove(profile)
    monkeypatch.delenv("ORT_LOAD_CONFIG_FROM_MODEL")
    assert not nxrt.InferenceSession(model).end_profiling()  # neither switch: the JSON is not read
    options = nxrt.SessionOptions()
    options.add_session_config_entry("session.load_model_config_from_model", "1")
    profiled = nxrt.InferenceSession(model, options)
    profiled.run(None, {"X": np.zeros(2, np.float32)})
    os.remove(profiled.end_profiling())
    for bad, message in [("{not json", "cannot be parsed"), ('{"session_options": {"intra_op_num_threads": "2"}}',
                                                             "must be an integer")]:
        with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match=message):
            nxrt.InferenceSession(model_with_ort_config(bad), options)


def test_provider_graph_assignment_info_lists_each_node_with_its_provider():
    model = mul_model()
    for runtime in (nxrt, ort):
        session = runtime.InferenceSession(model, providers=["CPUExecutionProvider"])
        with pytest.raises(Exception, match="session.record_ep_graph_assignment_info"):
            session.get_provider_graph_assignment_info()
    listed = {}
    for runtime in (nxrt, ort):
        options = runtime.SessionOptions()
        options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
        session = runtime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        listed[runtime.__name__] = [(sub.ep_name, [(n.op_type, n.domain) for n in sub.get_nodes()])
                                    for sub in session.get_provider_graph_assignment_info()]
    assert listed["nxrt"] == listed["onnxruntime"] == [("CPUExecutionProvider", [("Mul", "")])]


def test_sparse_tensors_read_as_onnxruntimes():
    """SparseTensor in COO (linear and coordinate indices) and CSR form, its views and OrtValue wrapping, against
    onnxruntime's; nxrt's to_dense() and its refusal of sparse feeds."""
    cases = [("coo", [3, 3], np.array([1.0, 2.0], np.float32), (np.array([0, 4], np.int64),)),
             ("coo", [2, 3], np.array([5, 7], np.int64), (np.array([[0, 1], [1, 2]], np.int64),)),
             ("coo", [4], np.array(["a", "bc"]), (np.array([1, 3], np.int64),)),
             ("csr", [2, 3], np.array([1.5, -2.0, 3.0], np.float64),
              (np.array([0, 2, 1], np.int64), np.array([0, 2, 3], np.int64)))]
    for form, shape, values, indices in cases:
        built = {}
        for runtime in (nxrt, ort):
            make = (runtime.SparseTensor.sparse_coo_from_numpy if form == "coo"
                    else runtime.SparseTensor.sparse_csr_from_numpy)
            sparse = make(shape, values, *indices, runtime.OrtDevice.make("cpu", 0))
            view = sparse.as_coo_view() if form == "coo" else sparse.as_csrc_view()
            ortvalue = runtime.OrtValue.ort_value_from_sparse_tensor(sparse)
            built[runtime.__name__] = (sparse.format().name, sparse.dense_shape(), sparse.data_type(),
                                       sparse.device_name(), list(sparse.values()),
                                       [list(np.ravel(a)) for a in ((view.indices(),) if form == "coo"
                                                                    else (view.inner(), view.outer()))],
                                       ortvalue.is_sparse_tensor(), ortvalue.is_tensor(), ortvalue.data_type(),
                                       list(ortvalue.as_sparse_tensor().values()))
            with pytest.raises(RuntimeError):
                sparse.as_csrc_view() if form == "coo" else sparse.as_coo_view()
        assert built["nxrt"] == built["onnxruntime"], (form, shape)
    dense = nxrt.SparseTensor.sparse_csr_from_numpy(*cases[3][1:3], *cases[3][3], None).to_dense()
    np.testing.assert_array_equal(dense, [[1.5, 0, -2.0], [0, 3.0, 0]])
    coords = nxrt.SparseTensor.sparse_coo_from_numpy(*cases[1][1:3], *cases[1][3], None).to_dense()
    np.testing.assert_array_equal(coords, [[0, 5, 0], [0, 0, 7]])
    with pytest.raises(ValueError, match="outside the dense shape"):
        nxrt.SparseTensor.sparse_coo_from_numpy([2, 2], np.ones(1, np.float32), np.array([4], np.int64))
    session = nxrt.InferenceSession(mul_model())
    sparse = nxrt.SparseTensor.sparse_coo_from_numpy([3, 2], np.ones(1, np.float32), np.array([0], np.int64))
    with pytest.raises(TypeError, match="to_dense"):
        session.run_with_ort_values(None, {"X": nxrt.OrtValue.ort_value_from_sparse_tensor(sparse)})


def sparse_initializer_model(values, indices, dims, element_type=TensorProto.FLOAT):
    """Y = X + W, W a sparse initializer (GraphProto.sparse_initializer) of dense shape `dims`."""
    sparse = helper.make_sparse_tensor(helper.make_tensor("W", element_type, [len(values)], values),
                                       helper.make_tensor("W_indices", TensorProto.INT64, list(np.shape(indices)),
                                                          np.ravel(indices).tolist()), dims)
    graph = helper.make_graph([helper.make_node("Add", ["X", "W"], ["Y"])], "g",
                              [helper.make_tensor_value_info("X", element_type, dims)],
                              [helper.make_tensor_value_info("Y", element_type, dims)])
    graph.sparse_initializer.append(sparse)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_sparse_initializers_are_made_dense_as_onnxruntime_does():
    for values, indices, dims in [([1.5, -2.0], [1, 5], [2, 3]), ([4.0, 3.0, 7.0], [[0, 2], [1, 0], [1, 1]], [2, 3]),
                                  ([9.0], [0], [1])]:
        model = sparse_initializer_model(values, indices, dims)
        x = np.arange(np.prod(dims), dtype=np.float32).reshape(dims)
        want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
        np.testing.assert_array_equal(nxrt.InferenceSession(model).run(None, {"X": x})[0], want)
    for values, indices, message in [([1.0], [6], "outside the dense shape"), ([1.0, 2.0], [3, 3], "earlier one"),
                                     ([1.0, 2.0], [0], "int64 indices of shape")]:
        with pytest.raises(Exception, match=message):
            nxrt.InferenceSession(sparse_initializer_model(values, indices, [2, 3]))


def test_constant_sparse_value_is_made_dense_as_onnxruntime_does():
    sparse = helper.make_sparse_tensor(helper.make_tensor("v", TensorProto.FLOAT, [2], [2.5, -1.0]),
                                       helper.make_tensor("i", TensorProto.INT64, [2], [0, 3]), [2, 2])
    graph = helper.make_graph([helper.make_node("Constant", [], ["C"], sparse_value=sparse),
                               helper.make_node("Add", ["X", "C"], ["Y"])], "g",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    x = np.ones((2, 2), np.float32)
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    got = nxrt.InferenceSession(model).run(None, {"X": x})[0]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, [[3.5, 1.0], [1.0, 0.0]])


def test_a_sparse_initializer_asking_for_a_huge_dense_tensor_is_refused():
    model = sparse_initializer_model([1.0], [0], [1 << 20, 1 << 20])  # 4 TiB dense from a few bytes
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="the dense tensor needs"):
        nxrt.InferenceSession(model)


def test_add_initializer_replaces_a_sparse_initializer_too():
    model = sparse_initializer_model([1.5, -2.0], [1, 5], [2, 3])
    options = nxrt.SessionOptions()
    options.add_initializer("W", nxrt.OrtValue.ortvalue_from_numpy(np.full((2, 3), 10.0, np.float32)))
    x = np.zeros((2, 3), np.float32)
    np.testing.assert_array_equal(nxrt.InferenceSession(model, options).run(None, {"X": x})[0], np.full((2, 3), 10.0))
    options = nxrt.SessionOptions()
    options.add_initializer("W", nxrt.OrtValue.ortvalue_from_numpy(np.zeros(6, np.float32)))
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="declares float \\[2,3\\]"):
        nxrt.InferenceSession(model, options)
