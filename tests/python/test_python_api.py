"""nxrt's friendly API, error mapping, options and GIL release."""

import gc
import os
import sys
import threading
import time

import numpy as np
import pytest

import helpers
import nxrt
from nxrt.capi.onnxruntime_pybind11_state import EPFail, InvalidArgument, InvalidProtobuf, NoSuchFile

X = np.array([1, -2, 3, 4.5], np.float32)
Y = np.array([0.5, 1, -1, 2], np.float32)


@pytest.fixture(scope="module")
def simple_add_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "simple_add.onnx"
    path.write_bytes(nxrt.builtin_model("simple_add"))
    return path


def test_load_and_call_forms(simple_add_path):
    session = nxrt.load(simple_add_path)
    expected = 2 * X + Y
    np.testing.assert_array_equal(session(X, Y), expected)
    np.testing.assert_array_equal(session(x=X, y=Y), expected)
    np.testing.assert_array_equal(session(X, y=Y), expected)
    np.testing.assert_array_equal(session({"x": X, "y": Y}), expected)
    assert session.input_names == ("x", "y")
    assert session.output_names == ("z",)
    with pytest.raises(TypeError, match="takes 2 inputs"):
        session(X, Y, Y)
    with pytest.raises(TypeError, match="both by position and by keyword"):
        session(X, x=X, y=Y)


def test_load_rejects_unavailable_devices(simple_add_path):
    assert nxrt.load(simple_add_path, device="cpu")(X, Y).shape == (4,)
    with pytest.raises(EPFail, match="device 'cuda'"):
        nxrt.load(simple_add_path, device="cuda")
    with pytest.raises(EPFail, match="CUDAExecutionProvider"):
        nxrt.load(simple_add_path, providers=["CUDAExecutionProvider"])


def test_outputs_container():
    session = nxrt.load(helpers.two_output_model())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((2, 3), np.float32)
    outputs = session(x, y)
    assert isinstance(outputs, nxrt.Outputs)
    assert len(outputs) == 3 and outputs.keys() == ["sum", "prod", "rel"]
    np.testing.assert_array_equal(outputs[0], x + y)
    np.testing.assert_array_equal(outputs["prod"], x * y)
    np.testing.assert_array_equal(outputs.rel, np.maximum(x - y, 0))
    total, product, relu = outputs
    np.testing.assert_array_equal(total, outputs.sum)
    assert [name for name, _ in outputs.items()] == ["sum", "prod", "rel"]
    assert len(outputs.values()) == 3 and "rel" in outputs
    with pytest.raises(KeyError):
        outputs["missing"]
    with pytest.raises(AttributeError):
        outputs.missing


def test_bind_outputs_filters():
    session = nxrt.load(helpers.two_output_model())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((2, 3), np.float32)
    only_rel = session.bind_outputs("rel")
    np.testing.assert_array_equal(only_rel(x, y), np.maximum(x - y, 0))
    both = session.bind_outputs("prod", "sum")
    assert both.output_names == ("prod", "sum")
    result = both(x=x, y=y)
    np.testing.assert_array_equal(result.prod, x * y)
    np.testing.assert_array_equal(result[1], x + y)
    value = only_rel.run_with_values(x, y)
    assert isinstance(value, nxrt.Value)
    with pytest.raises(KeyError):
        session.bind_outputs("nope")


def test_run_with_values_returns_values(simple_add_path):
    session = nxrt.load(simple_add_path)
    value = session.run_with_values(X, Y)
    assert isinstance(value, nxrt.Value)
    assert value.shape == (4,) and value.dtype == np.float32 and value.data_type == "tensor(float)"
    assert value.element_type == 1 and value.device == "cpu" and value.nbytes == 16
    np.testing.assert_array_equal(value.numpy(), 2 * X + Y)
    several = nxrt.load(helpers.two_output_model()).run_with_values(np.ones((1, 3), np.float32),
                                                                    np.ones((1, 3), np.float32))
    assert all(isinstance(v, nxrt.Value) for v in several)


def test_error_strings_and_codes(simple_add_path, tmp_path):
    session = nxrt.InferenceSession(str(simple_add_path))
    with pytest.raises(InvalidArgument) as info:
        session.run(None, {"x": X.astype(np.int64), "y": Y})
    assert str(info.value) == ("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Unexpected input data type. "
                               "Actual: (tensor(int64)) , expected: (tensor(float))")
    with pytest.raises(NoSuchFile, match=r"^\[ONNXRuntimeError\] : 3 : NO_SUCHFILE : "):
        nxrt.InferenceSession(str(tmp_path / "absent.onnx"))
    with pytest.raises(InvalidProtobuf, match=r"^\[ONNXRuntimeError\] : 7 : INVALID_PROTOBUF : "):
        nxrt.InferenceSession(b"\xff\xff\xff\xff not a model")
    with pytest.raises(TypeError, match="Unable to load from type"):
        nxrt.InferenceSession(3.5)


def test_session_accepts_pathlike_and_bytes(simple_add_path):
    for source in (simple_add_path, os.fspath(simple_add_path), simple_add_path.read_bytes()):
        assert nxrt.InferenceSession(source).run(["z"], {"x": X, "y": Y})[0].tolist() == (2 * X + Y).tolist()


def test_session_reads_model_bytes_in_place_and_keeps_them_alive():
    # The MLP's initializers live in the bytes: the session holds the bytes object and releases it when it goes.
    model = nxrt.builtin_model("mlp")
    refs_without_session = sys.getrefcount(model)
    session = nxrt.InferenceSession(model)
    assert sys.getrefcount(model) > refs_without_session
    del session
    gc.collect()
    assert sys.getrefcount(model) == refs_without_session

    session = nxrt.InferenceSession(model)
    name = session.get_inputs()[0].name
    shape = [d if isinstance(d, int) else 3 for d in session.get_inputs()[0].shape]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    expected = session.run(None, {name: x})[0]
    del model
    gc.collect()
    np.testing.assert_array_equal(session.run(None, {name: x})[0], expected)
    np.testing.assert_array_equal(nxrt.InferenceSession(nxrt.builtin_model("mlp")).run(None, {name: x})[0], expected)


def test_free_dimension_override_and_optimized_model_path(simple_add_path, tmp_path):
    options = nxrt.SessionOptions()
    options.add_free_dimension_override_by_name("B", 4)
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    session = nxrt.InferenceSession(simple_add_path, options)
    assert session.get_inputs()[0].shape == [4]
    assert (tmp_path / "optimized.onnx").read_bytes() == simple_add_path.read_bytes()
    with pytest.raises(InvalidArgument, match="Got invalid dimensions for input: x"):
        session.run(None, {"x": np.ones(3, np.float32), "y": np.ones(4, np.float32)})
    with pytest.raises(RuntimeError, match="SessionOptions does not have configuration with key: absent"):
        options.get_session_config_entry("absent")  # onnxruntime's class and text
    with pytest.raises(RuntimeError, match="RunOptions does not have configuration with key: absent"):
        nxrt.RunOptions().get_run_config_entry("absent")


UNAVAILABLE_KNOWN_PROVIDERS = [name for name in nxrt.get_all_providers() if name not in nxrt.get_available_providers()]


@pytest.mark.parametrize("provider", UNAVAILABLE_KNOWN_PROVIDERS)
def test_unavailable_provider_raises_ep_fail_naming_it(simple_add_path, provider):
    with pytest.raises(EPFail) as info:
        nxrt.InferenceSession(simple_add_path, providers=[provider])
    message = str(info.value)
    assert message.startswith("[ONNXRuntimeError] : 11 : EP_FAIL : "), message
    assert provider in message and "available: CPUExecutionProvider" in message


@pytest.mark.parametrize("providers,provider_options", [
    (["CUDAExecutionProvider", "CPUExecutionProvider"], None),
    ([("CUDAExecutionProvider", {"device_id": 0}), "CPUExecutionProvider"], None),
    (["CPUExecutionProvider", "CUDAExecutionProvider"], [{}, {"device_id": "0"}]),
], ids=["names", "name_and_options_pairs", "parallel_options"])
def test_unavailable_provider_is_an_error_even_with_cpu_listed(simple_add_path, providers, provider_options):
    with pytest.raises(EPFail, match="CUDAExecutionProvider was requested"):
        nxrt.InferenceSession(simple_add_path, providers=providers, provider_options=provider_options)


def test_set_providers_with_an_unavailable_provider_raises_and_keeps_the_session(simple_add_path):
    session = nxrt.InferenceSession(simple_add_path, providers=["CPUExecutionProvider"])
    with pytest.raises(EPFail, match=r"^\[ONNXRuntimeError\] : 11 : EP_FAIL : CUDAExecutionProvider"):
        session.set_providers(["CUDAExecutionProvider"])
    assert session.get_providers() == ["CPUExecutionProvider"]
    np.testing.assert_array_equal(session.run(None, {"x": X, "y": Y})[0], 2 * X + Y)


def test_unknown_provider_name_follows_onnxruntime(simple_add_path):
    """A name that is no provider at all: a warning and the CPU, RuntimeError without fallback or from
    set_providers (test_parity_onnxruntime.py runs the same calls on onnxruntime)."""
    with pytest.warns(UserWarning, match="'NoSuchExecutionProvider' is not in available provider names"):
        session = nxrt.InferenceSession(simple_add_path, providers=["NoSuchExecutionProvider", "CPUExecutionProvider"])
    assert session.get_providers() == ["CPUExecutionProvider"]
    np.testing.assert_array_equal(session.run(None, {"x": X, "y": Y})[0], 2 * X + Y)
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="Unknown Provider Type: NoSuchExecutionProvider"):
        nxrt.InferenceSession(simple_add_path, providers=["NoSuchExecutionProvider"], enable_fallback=0)
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="Unknown Provider Type: CPU"):
        session.set_providers(["CPU"])


def test_provider_argument_checks_follow_onnxruntime(simple_add_path):
    with pytest.warns(UserWarning, match="Duplicate provider 'CPUExecutionProvider'"):
        session = nxrt.InferenceSession(simple_add_path, providers=["CPUExecutionProvider", "CPUExecutionProvider"])
    assert session.get_providers() == ["CPUExecutionProvider"]
    with pytest.raises(ValueError, match="same length"):
        nxrt.InferenceSession(simple_add_path, providers=["CPUExecutionProvider"], provider_options=[{}, {}])
    with pytest.raises(ValueError, match="should be a sequence"):
        nxrt.InferenceSession(simple_add_path, providers="CPUExecutionProvider")


def test_gil_is_released_during_runs():
    """Eight threads run a large MatMul; a Python thread keeps counting meanwhile, which needs the GIL."""
    from onnx import TensorProto, helper

    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [512, 512])
    out = helper.make_tensor_value_info("c", TensorProto.FLOAT, [512, 512])
    model = helpers.model_bytes([helper.make_node("MatMul", ["a", "a"], ["c"])], [a], [out])
    options = nxrt.SessionOptions()
    options.intra_op_num_threads = 1
    session = nxrt.InferenceSession(model, options)
    data = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    expected = data @ data
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.0005)

    counter = threading.Thread(target=count)
    counter.start()
    results = []

    def work():
        for _ in range(3):
            results.append(session.run(None, {"a": data})[0])

    workers = [threading.Thread(target=work) for _ in range(4)]
    start = len(ticks)
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    stop.set()
    counter.join()
    assert len(results) == 12
    for result in results:
        np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-3)
    assert len(ticks) - start > 5


def test_module_level_functions():
    assert nxrt.get_device() == "CPU"
    assert nxrt.get_available_providers() == ["CPUExecutionProvider"]
    assert nxrt.get_version_string() == nxrt.__version__
    assert int(nxrt.GraphOptimizationLevel.ORT_ENABLE_ALL) == 99
    assert nxrt.capi.onnxruntime_pybind11_state.NotImplemented.__name__ == "NotImplemented"
