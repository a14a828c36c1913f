"""The same checks run against onnxruntime and nxrt (`import nxrt as ort`); results, NodeArg fields, metadata
and exception types must be identical. Results are also checked against numpy: the models here compute exactly
(data movement, single IEEE operations), and onnxruntime is a peer, not an oracle."""

import threading
import warnings

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto

import helpers
import nxrt

RUNTIMES = {"onnxruntime": onnxruntime, "nxrt": nxrt}


def both(check):
    """Runs `check(ort)` on both runtimes and asserts the returned observations are equal."""
    observed = {name: check(module) for name, module in RUNTIMES.items()}
    a, b = observed["onnxruntime"], observed["nxrt"]
    assert _normalise(a) == _normalise(b), f"onnxruntime: {a}\nnxrt: {b}"
    return observed["nxrt"]


def _normalise(value):
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tolist())
    if isinstance(value, (list, tuple)):
        return [_normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    return value


def assert_arrays_equal(actual, expected):
    """Same count, dtypes, shapes and values."""
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, a.shape, e.dtype, e.shape)
        np.testing.assert_array_equal(a, e)


def error_of(fn):
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - the class name is what we compare
        return type(error).__name__
    return None


@pytest.fixture(scope="module")
def simple_add(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "simple_add.onnx"
    path.write_bytes(nxrt.builtin_model("simple_add"))
    return str(path)


X = np.array([1, -2, 3, 4.5], np.float32)
Y = np.array([0.5, 1, -1, 2], np.float32)


def test_run_results_match(simple_add):
    def check(ort):
        session = ort.InferenceSession(simple_add, providers=["CPUExecutionProvider"])
        return [session.run(None, {"x": X, "y": Y}), session.run(["z"], {"x": X, "y": Y}),
                session.run([], {"y": Y, "x": X})]

    results = both(check)
    np.testing.assert_array_equal(results[0][0], 2 * X + Y)


def test_node_args_and_metadata_match():
    def check(ort):
        session = ort.InferenceSession(helpers.metadata_model(), providers=["CPUExecutionProvider"])
        meta = session.get_modelmeta()
        return {
            "inputs": [(a.name, a.type, a.shape) for a in session.get_inputs()],
            "outputs": [(a.name, a.type, a.shape) for a in session.get_outputs()],
            "overridable": [(a.name, a.type, a.shape) for a in session.get_overridable_initializers()],
            "meta": (meta.producer_name, meta.graph_name, meta.domain, meta.description, meta.graph_description,
                     meta.version, dict(meta.custom_metadata_map)),
            "providers": session.get_providers(),
            "provider_options_keys": list(session.get_provider_options()),
        }

    both(check)


def test_mixed_dims_and_overridable_initializers_match():
    def check(ort):
        mixed = ort.InferenceSession(helpers.mixed_dims_model(), providers=["CPUExecutionProvider"])
        over = ort.InferenceSession(helpers.overridable_initializer_model(), providers=["CPUExecutionProvider"])
        x = np.ones(3, np.float32)
        return {
            "mixed": [(a.name, a.type, a.shape) for a in mixed.get_inputs()],
            "over_inputs": [(a.name, a.type, a.shape) for a in over.get_inputs()],
            "over_inits": [(a.name, a.type, a.shape) for a in over.get_overridable_initializers()],
            "default_bias": over.run(None, {"x": x}),
            "overridden_bias": over.run(None, {"x": x, "bias": np.full(3, 10, np.float32)}),
        }

    observed = both(check)
    assert_arrays_equal(observed["default_bias"], [np.array([2, 3, 4], np.float32)])
    assert_arrays_equal(observed["overridden_bias"], [np.full(3, 11, np.float32)])


def test_multi_output_and_selected_outputs_match():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 2.5, np.float32)

    def check(ort):
        session = ort.InferenceSession(helpers.two_output_model(), providers=["CPUExecutionProvider"])
        return [session.run(None, {"x": x, "y": y}), session.run(["rel", "sum"], {"x": x, "y": y})]

    every, selected = both(check)
    assert_arrays_equal(every, [x + y, x * y, np.maximum(x - y, 0)])
    assert_arrays_equal(selected, [np.maximum(x - y, 0), x + y])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8, np.int16,
                                   np.uint16, np.uint32, np.uint64, np.bool_, np.float16])
def test_dtypes_match(dtype):
    elem_type = onnx_type(dtype)
    data = (np.arange(5) % 3).astype(dtype)

    def check(ort):
        session = ort.InferenceSession(helpers.identity_model(elem_type), providers=["CPUExecutionProvider"])
        return [session.get_inputs()[0].type, session.run(None, {"x": data})]

    _, outputs = both(check)
    assert_arrays_equal(outputs, [data])


def test_string_tensors_match():
    data = np.array(["a", "héllo", ""], dtype=object)

    def check(ort):
        session = ort.InferenceSession(helpers.identity_model(TensorProto.STRING), providers=["CPUExecutionProvider"])
        out = session.run(None, {"x": data})[0]
        return [session.get_inputs()[0].type, out.dtype.str, out.tolist()]

    both(check)


def onnx_type(dtype):
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def test_exception_types_match(simple_add, tmp_path):
    def check(ort):
        session = ort.InferenceSession(simple_add, providers=["CPUExecutionProvider"])
        state = ort.capi.onnxruntime_pybind11_state
        return {
            "missing": error_of(lambda: session.run(None, {"x": X})),
            "dtype": error_of(lambda: session.run(None, {"x": X.astype(np.float64), "y": Y})),
            "rank": error_of(lambda: session.run(None, {"x": X.reshape(2, 2), "y": Y})),
            "bad_output": error_of(lambda: session.run(["nope"], {"x": X, "y": Y})),
            "bad_input": error_of(lambda: session.run(None, {"x": X, "y": Y, "w": Y})),
            "no_file": error_of(lambda: ort.InferenceSession(str(tmp_path / "missing.onnx"))),
            "bad_type": error_of(lambda: ort.InferenceSession(42)),
            "classes": [issubclass(getattr(state, n), Exception) for n in
                        ("InvalidArgument", "Fail", "NoSuchFile", "InvalidProtobuf", "InvalidGraph",
                         "NotImplemented", "RuntimeException", "EPFail")],
        }

    observed = both(check)
    assert observed["missing"] == "ValueError"
    assert observed["dtype"] == "InvalidArgument"
    assert observed["no_file"] == "NoSuchFile"


def test_error_messages_match(simple_add):
    def check(ort):
        session = ort.InferenceSession(simple_add, providers=["CPUExecutionProvider"])
        messages = []
        for feed in ({"x": X}, {"x": X, "y": Y.astype(np.float64)}):
            try:
                session.run(None, feed)
            except Exception as error:  # noqa: BLE001
                messages.append(str(error))
        return messages

    messages = both(check)
    assert messages[0] == "Required inputs (['y']) are missing from input feed (['x'])."
    assert messages[1].startswith("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Unexpected input data type.")


def test_session_and_run_options_match(simple_add):
    def check(ort):
        options = ort.SessionOptions()
        defaults = (options.intra_op_num_threads, options.inter_op_num_threads, int(options.graph_optimization_level),
                    int(options.execution_mode), options.enable_mem_pattern, options.enable_cpu_mem_arena,
                    options.log_severity_level, options.optimized_model_filepath)
        options.intra_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.key", "value")
        entry = options.get_session_config_entry("session.key")
        options.add_free_dimension_override_by_name("B", 4)
        session = ort.InferenceSession(simple_add, options, providers=["CPUExecutionProvider"])
        shape = session.get_inputs()[0].shape
        wrong = error_of(lambda: session.run(None, {"x": np.ones(3, np.float32), "y": np.ones(3, np.float32)}))
        run_options = ort.RunOptions()
        run_defaults = (run_options.logid, run_options.terminate, run_options.log_severity_level)
        run_options.logid = "tagged"
        ok = session.run(None, {"x": X, "y": Y}, run_options)
        run_options.terminate = True
        terminated = error_of(lambda: session.run(None, {"x": X, "y": Y}, run_options))
        levels = [int(v) for v in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                                   ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)]
        return [defaults, entry, shape, wrong, run_defaults, ok, terminated, levels]

    both(check)


def test_ortvalue_api_matches():
    array = np.arange(6, dtype=np.float32).reshape(2, 3)

    def check(ort):
        value = ort.OrtValue.ortvalue_from_numpy(array)
        empty = ort.OrtValue.ortvalue_from_shape_and_type([2, 2], np.int64)
        return [value.shape(), value.data_type(), value.element_type(), value.device_name(), value.is_tensor(),
                value.has_value(), value.tensor_size_in_bytes(), value.numpy(), value.data_ptr() == array.ctypes.data,
                empty.shape(), empty.data_type(), empty.element_type()]

    both(check)


def test_run_with_ort_values_and_iobinding_match(simple_add):
    def check(ort):
        session = ort.InferenceSession(simple_add, providers=["CPUExecutionProvider"])
        feeds = {"x": ort.OrtValue.ortvalue_from_numpy(X), "y": ort.OrtValue.ortvalue_from_numpy(Y)}
        outs = session.run_with_ort_values(["z"], feeds)
        binding = session.io_binding()
        binding.bind_cpu_input("x", X)
        binding.bind_ortvalue_input("y", feeds["y"])
        binding.bind_output("z")
        session.run_with_iobinding(binding)
        bound = binding.copy_outputs_to_cpu()
        target = ort.OrtValue.ortvalue_from_shape_and_type([4], np.float32)
        binding.clear_binding_outputs()
        binding.bind_ortvalue_output("z", target)
        session.run_with_iobinding(binding)
        out_buffer = np.zeros(4, np.float32)
        binding.clear_binding_outputs()
        binding.bind_output("z", "cpu", 0, np.float32, [4], out_buffer.ctypes.data)
        binding.clear_binding_inputs()
        binding.bind_input("x", "cpu", 0, np.float32, [4], X.ctypes.data)
        binding.bind_cpu_input("y", Y)
        session.run_with_iobinding(binding)
        return [[v.numpy() for v in outs], bound, target.numpy(), out_buffer,
                [v.numpy() for v in binding.get_outputs()]]

    outs, bound, target, out_buffer, last = both(check)
    assert_arrays_equal(outs + bound + [target, out_buffer] + last, [2 * X + Y] * 5)


def test_module_functions_match():
    def check(ort):
        return [ort.get_device(), "CPUExecutionProvider" in ort.get_available_providers(),
                isinstance(ort.get_version_string(), str)]

    both(check)


def test_unknown_provider_names_match(simple_add):
    """A name that is no provider at all: both warn and run on the CPU, and both raise RuntimeError without the
    fallback or from set_providers (after which onnxruntime's session is unusable, so it is not run again)."""
    def check(ort):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            session = ort.InferenceSession(simple_add, providers=["NoSuchExecutionProvider"])
            providers, outputs = session.get_providers(), session.run(None, {"x": X, "y": Y})
            without_fallback = error_of(lambda: ort.InferenceSession(simple_add, providers=["NoSuchExecutionProvider"],
                                                                     enable_fallback=0))
            reset = error_of(lambda: session.set_providers(["NoSuchExecutionProvider"]))
        warned = any("'NoSuchExecutionProvider' is not in available provider names" in str(w.message) for w in caught)
        return [providers, warned, without_fallback, reset, outputs]

    providers, warned, without_fallback, reset, outputs = both(check)
    assert providers == ["CPUExecutionProvider"] and warned
    assert without_fallback == reset == "RuntimeError"
    np.testing.assert_array_equal(outputs[0], 2 * X + Y)


def test_unavailable_known_provider_differs_deliberately(simple_add):
    """nxrt raises EPFail where onnxruntime warns and runs on the CPU (docs/python.md, Execution providers)."""
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.EPFail, match="CUDAExecutionProvider"):
        nxrt.InferenceSession(simple_add, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
        with pytest.warns(UserWarning, match="not in available provider names"):
            session = onnxruntime.InferenceSession(simple_add,
                                                   providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        assert session.get_providers() == ["CPUExecutionProvider"]


def test_terminate_from_another_thread_matches(simple_add):
    def check(ort):
        session = ort.InferenceSession(simple_add, providers=["CPUExecutionProvider"])
        options = ort.RunOptions()
        threading.Thread(target=lambda: setattr(options, "terminate", True)).start()
        import time

        time.sleep(0.05)
        return error_of(lambda: session.run(None, {"x": X, "y": Y}, options))

    assert both(check) == "Fail"


def test_sequence_inputs_and_outputs_match():
    """Sequences come back as lists of arrays and are accepted as lists; empty optionals come back as None."""
    from onnx import helper

    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    inputs = [helper.make_value_info("items", seq_type), helper.make_tensor_value_info("extra", TensorProto.FLOAT, [2])]
    outputs = [helper.make_value_info("more", seq_type),
               helper.make_tensor_value_info("count", TensorProto.INT64, []),
               helper.make_tensor_value_info("joined", TensorProto.FLOAT, None)]
    nodes = [
        helper.make_node("SequenceInsert", ["items", "extra"], ["more"]),
        helper.make_node("SequenceLength", ["more"], ["count"]),
        helper.make_node("ConcatFromSequence", ["more"], ["joined"], axis=0),
    ]
    model = helpers.model_bytes(nodes, inputs, outputs)
    feed = {"items": [np.ones(2, np.float32), np.arange(2, dtype=np.float32)], "extra": np.full(2, 7, np.float32)}
    more, count, joined = both(lambda ort: ort.InferenceSession(model).run(None, feed))
    assert isinstance(more, list)
    assert_arrays_equal(more, feed["items"] + [feed["extra"]])
    assert_arrays_equal([count], [np.array(3, np.int64)])
    assert_arrays_equal([joined], [np.concatenate(feed["items"] + [feed["extra"]])])
