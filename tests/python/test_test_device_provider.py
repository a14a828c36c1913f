"""The test execution provider from Python: providers reach the engine, values live in test-device memory, IO
binding allocates outputs there, and nothing falls back silently (tests/cpp/session/test_device_provider_test.cpp
covers the engine side: placement, copies, streams)."""

import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import nxrt
from nxrt.capi.onnxruntime_pybind11_state import EPFail, InvalidArgument

TEST_DEVICE = "TestDeviceExecutionProvider"
CPU = "CPUExecutionProvider"
BIAS = np.array([1.0, -1.0, 0.5], np.float32)
X = np.array([[-3, 0, 1], [2, -0.25, 4]], np.float32)


def make_model(ops):
    """x [2,3] -> Add(x, bias) -> each op of `ops` in turn -> y, float32."""
    nodes = [helper.make_node("Add", ["x", "bias"], ["t0"], name="add")]
    for index, op in enumerate(ops):
        nodes.append(helper.make_node(op, [f"t{index}"], [f"t{index + 1}"], name=op.lower()))
    nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        nodes, "test_device", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor("bias", TensorProto.FLOAT, [3], BIAS.tolist())])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model.SerializeToString()


@pytest.fixture(scope="module")
def add_relu_sigmoid():
    """Add and Relu run on the test device, Sigmoid (no test-device kernel) on the CPU."""
    return make_model(["Relu", "Sigmoid"])


def expected(x):
    return 1.0 / (1.0 + np.exp(-np.maximum(x + BIAS, 0.0)))


def test_session_runs_on_the_test_device_and_the_cpu(add_relu_sigmoid):
    session = nxrt.InferenceSession(add_relu_sigmoid, providers=[TEST_DEVICE, CPU])
    assert session.get_providers() == [TEST_DEVICE, CPU]
    for _ in range(2):
        (y,) = session.run(None, {"x": X})
        np.testing.assert_allclose(y, expected(X), rtol=1e-6)
    assert set(session.get_provider_options()) == {TEST_DEVICE, CPU}


def test_the_cpu_is_appended_when_not_listed(add_relu_sigmoid):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # accepted by name, without a warning
        session = nxrt.InferenceSession(add_relu_sigmoid, providers=[TEST_DEVICE])
    assert session.get_providers() == [TEST_DEVICE, CPU]
    np.testing.assert_allclose(session(X), expected(X), rtol=1e-6)


def test_the_test_provider_is_accepted_but_not_advertised(add_relu_sigmoid):
    assert TEST_DEVICE not in nxrt.get_available_providers()
    assert TEST_DEVICE not in nxrt.get_all_providers()
    np.testing.assert_allclose(nxrt.load(add_relu_sigmoid, providers=[TEST_DEVICE])(X), expected(X), rtol=1e-6)


def test_set_providers_recreates_the_session(add_relu_sigmoid):
    session = nxrt.InferenceSession(add_relu_sigmoid, providers=[CPU])
    assert session.get_providers() == [CPU]
    session.set_providers([TEST_DEVICE, CPU])
    assert session.get_providers() == [TEST_DEVICE, CPU]
    np.testing.assert_allclose(session.run(None, {"x": X})[0], expected(X), rtol=1e-6)
    with pytest.raises(EPFail, match="CUDAExecutionProvider"):
        session.set_providers(["CUDAExecutionProvider"])
    assert session.get_providers() == [TEST_DEVICE, CPU]


def test_ortvalue_on_the_test_device():
    value = nxrt.OrtValue.ortvalue_from_numpy(X, "test_device", 0)
    assert value.device_name() == "test_device"
    assert value.shape() == [2, 3] and value.data_type() == "tensor(float)"
    host = value.numpy()
    np.testing.assert_array_equal(host, X)
    host[0, 0] = 100.0  # a copy: the device memory is unchanged
    np.testing.assert_array_equal(value.numpy(), X)
    value.update_inplace(X * 2)
    np.testing.assert_array_equal(value.numpy(), X * 2)
    assert "device=test_device" in repr(value)

    empty = nxrt.OrtValue.ortvalue_from_shape_and_type([2, 2], np.float32, "test_device")
    assert empty.device_name() == "test_device"
    np.testing.assert_array_equal(empty.numpy(), np.zeros((2, 2), np.float32))

    cpu = nxrt.OrtValue.ortvalue_from_numpy(X, "cpu", 0)
    assert cpu.device_name() == "cpu"
    with pytest.raises(EPFail, match="'cuda'"):
        nxrt.OrtValue.ortvalue_from_numpy(X, "cuda", 0)


def test_test_device_values_are_not_exported_as_host_memory():
    value = nxrt.OrtValue.ortvalue_from_numpy(X, "test_device", 0)
    with pytest.raises(BufferError, match="test_device"):
        value.__dlpack__()
    with pytest.raises(BufferError, match="test_device"):
        value.to_dlpack()
    assert value.__dlpack_device__()[0] != 1  # not kDLCPU
    with pytest.raises(BufferError):
        np.from_dlpack(value)
    np.testing.assert_array_equal(np.asarray(value._value), X)  # __array__ copies to the host
    with pytest.raises(InvalidArgument, match="string"):
        nxrt.OrtValue.ortvalue_from_numpy(np.array(["a"], object), "test_device", 0)


def test_device_feeds(add_relu_sigmoid):
    session = nxrt.InferenceSession(add_relu_sigmoid, providers=[TEST_DEVICE, CPU])
    value = nxrt.OrtValue.ortvalue_from_numpy(X, "test_device", 0)
    (out,) = session.run_with_ort_values(["y"], {"x": value})
    assert out.device_name() == "cpu"
    np.testing.assert_allclose(out.numpy(), expected(X), rtol=1e-6)

    binding = session.io_binding()
    binding.bind_ortvalue_input("x", value)
    binding.bind_output("y")
    session.run_with_iobinding(binding)
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], expected(X), rtol=1e-6)

    # A pointer into test-device memory, as onnxruntime code binds CUDA buffers.
    binding = session.io_binding()
    binding.bind_input("x", "test_device", 0, np.float32, [2, 3], value.data_ptr())
    binding.bind_output("y")
    session.run_with_iobinding(binding)
    np.testing.assert_allclose(binding.get_outputs()[0].numpy(), expected(X), rtol=1e-6)


def test_a_cpu_only_session_refuses_test_device_feeds(add_relu_sigmoid):
    session = nxrt.InferenceSession(add_relu_sigmoid, providers=[CPU])
    value = nxrt.OrtValue.ortvalue_from_numpy(X, "test_device", 0)
    with pytest.raises(InvalidArgument, match="TestDevice"):
        session.run_with_ort_values(["y"], {"x": value})


@pytest.mark.parametrize("ops", [["Relu"], ["Relu", "Sigmoid"]], ids=["device_last", "cpu_last"])
def test_output_bound_to_the_test_device(ops):
    session = nxrt.InferenceSession(make_model(ops), providers=[TEST_DEVICE, CPU])
    want = np.maximum(X + BIAS, 0.0) if ops == ["Relu"] else expected(X)
    for feed in (X, nxrt.OrtValue.ortvalue_from_numpy(X, "test_device", 0)):
        binding = session.io_binding()
        if isinstance(feed, nxrt.OrtValue):
            binding.bind_ortvalue_input("x", feed)
        else:
            binding.bind_cpu_input("x", feed)
        binding.bind_output("y", "test_device")
        session.run_with_iobinding(binding)
        (out,) = binding.get_outputs()
        assert out.device_name() == "test_device"
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], want, rtol=1e-6)
        with pytest.raises(BufferError):
            out.__dlpack__()


def test_output_bound_to_a_test_device_ortvalue(add_relu_sigmoid):
    session = nxrt.InferenceSession(add_relu_sigmoid, providers=[TEST_DEVICE, CPU])
    target = nxrt.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32, "test_device")
    binding = session.io_binding()
    binding.bind_cpu_input("x", X)
    binding.bind_ortvalue_output("y", target)
    session.run_with_iobinding(binding)
    np.testing.assert_allclose(target.numpy(), expected(X), rtol=1e-6)
    assert binding.get_outputs()[0].device_name() == "test_device"


def test_disable_cpu_ep_fallback(add_relu_sigmoid):
    options = nxrt.SessionOptions()
    options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    with pytest.raises(InvalidArgument) as info:
        nxrt.InferenceSession(add_relu_sigmoid, options, providers=[TEST_DEVICE, CPU])
    message = str(info.value)
    assert "Sigmoid node 'sigmoid'" in message and "session.disable_cpu_ep_fallback" in message, message

    # Every node has a test-device kernel: the session is created, and so runs entirely on the device.
    device_only = nxrt.InferenceSession(make_model(["Relu"]), options, providers=[TEST_DEVICE, CPU])
    np.testing.assert_allclose(device_only.run(None, {"x": X})[0], np.maximum(X + BIAS, 0.0), rtol=1e-6)

    options.add_session_config_entry("session.disable_cpu_ep_fallback", "0")
    nxrt.InferenceSession(add_relu_sigmoid, options, providers=[TEST_DEVICE, CPU])


def test_cuda_is_still_ep_fail(add_relu_sigmoid):
    with pytest.raises(EPFail, match="CUDAExecutionProvider was requested"):
        nxrt.InferenceSession(add_relu_sigmoid, providers=["CUDAExecutionProvider", TEST_DEVICE, CPU])
    with pytest.raises(EPFail, match="'cuda'"):
        nxrt.InferenceSession(add_relu_sigmoid).io_binding().bind_output("y", "cuda")

