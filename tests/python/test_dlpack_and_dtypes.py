"""Zero-copy inputs and outputs, DLPack in both directions, and every supported element type."""

import gc
import sys

import numpy as np
import pytest
from onnx import TensorProto

import helpers
import nxrt



def require_ml_dtypes():
    return pytest.importorskip("ml_dtypes", reason="needs ml_dtypes (requirements/test.txt)")


def require_torch():
    return pytest.importorskip("torch", reason="needs torch (requirements/heavy.txt)")


def identity(elem_type, dims=("N",)):
    return nxrt.InferenceSession(helpers.identity_model(elem_type, dims))


def test_ortvalue_from_numpy_is_zero_copy_both_ways():
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    value = nxrt.OrtValue.ortvalue_from_numpy(array)
    assert value.data_ptr() == array.ctypes.data
    view = value.numpy()
    assert view.ctypes.data == array.ctypes.data
    array[0, 0] = 42
    assert view[0, 0] == 42


def test_value_keeps_wrapped_array_alive():
    value = nxrt.asvalue(np.arange(1000, dtype=np.int64))
    gc.collect()
    assert value.numpy().sum() == sum(range(1000))


def test_run_outputs_are_not_copied():
    session = nxrt.load(nxrt.builtin_model("simple_add"))
    value = session.run_with_values(np.ones(4, np.float32), np.ones(4, np.float32))
    first = value.numpy()
    assert first.ctypes.data == value.data_ptr() == value.numpy().ctypes.data
    assert np.from_dlpack(value).ctypes.data == value.data_ptr()
    out = session.run(None, {"x": np.ones(4, np.float32), "y": np.ones(4, np.float32)})[0]
    assert out.flags.writeable and out.flags.c_contiguous and out.base is not None


def test_bound_output_buffers_receive_every_run():
    """Outputs bound to caller memory get each run's result there (the engine writes computed outputs in place), the
    returned OrtValues show that memory, and a result of another shape is an error naming the output."""
    session = nxrt.InferenceSession(helpers.two_output_model())
    sums = np.zeros((2, 3), np.float32)
    rels = np.zeros((2, 3), np.float32)
    binding = session.io_binding()
    binding.bind_output("sum", "cpu", 0, np.float32, [2, 3], sums.ctypes.data)
    binding.bind_output("rel", "cpu", 0, np.float32, [2, 3], rels.ctypes.data)
    for step in range(3):
        x = np.arange(6, dtype=np.float32).reshape(2, 3) * (step + 1)
        y = np.full((2, 3), 4.0, np.float32)
        binding.bind_cpu_input("x", x)
        binding.bind_cpu_input("y", y)
        session.run_with_iobinding(binding)
        np.testing.assert_array_equal(sums, x + y)
        np.testing.assert_array_equal(rels, np.maximum(x - y, 0))
        outputs = binding.get_outputs()
        assert outputs[0].data_ptr() == sums.ctypes.data and outputs[1].data_ptr() == rels.ctypes.data
    binding.bind_cpu_input("x", np.ones((3, 3), np.float32))
    binding.bind_cpu_input("y", np.ones((3, 3), np.float32))
    with pytest.raises(Exception, match="sum"):
        session.run_with_iobinding(binding)


def test_inputs_are_wrapped_not_copied():
    """An identity output is a copy (the engine never returns caller memory), but a bound input is not."""
    array = np.arange(5, dtype=np.float32)
    session = identity(TensorProto.FLOAT)
    binding = session.io_binding()
    binding.bind_cpu_input("x", array)
    assert binding._inputs["x"].data_ptr() == array.ctypes.data
    binding.bind_output("y")
    session.run_with_iobinding(binding)
    result = binding.copy_outputs_to_cpu()[0]
    np.testing.assert_array_equal(result, array)
    assert result.ctypes.data != array.ctypes.data


def test_non_contiguous_and_byteswapped_inputs_are_copied():
    session = identity(TensorProto.FLOAT, ("A", "B"))
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(session.run(None, {"x": base.T})[0], base.T)
    np.testing.assert_array_equal(session.run(None, {"x": base[:, ::2]})[0], base[:, ::2])
    swapped = base.astype(">f4")
    np.testing.assert_array_equal(session.run(None, {"x": swapped})[0], base)
    value = nxrt.asvalue(base.T)
    assert value.data_ptr() != base.ctypes.data


def test_array_likes_and_lists_are_accepted():
    session = identity(TensorProto.INT64)
    np.testing.assert_array_equal(session.run(None, {"x": [1, 2, 3]})[0], np.array([1, 2, 3]))

    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return np.array([4, 5], dtype=np.int64)

    np.testing.assert_array_equal(session.run(None, {"x": ArrayLike()})[0], [4, 5])


def test_unsupported_dtype_raises_type_error_with_advice():
    session = identity(TensorProto.FLOAT)
    with pytest.raises(TypeError, match=r"complex256|datetime64.*astype"):
        session.run(None, {"x": np.array(["2020-01-01"], dtype="datetime64[D]")})
    with pytest.raises(TypeError, match="astype"):
        nxrt.asvalue(np.array([1], dtype="timedelta64[s]"))


@pytest.mark.parametrize("versioned", [True, False])
def test_dlpack_capsules_versioned_and_not(versioned):
    value = nxrt.asvalue(np.arange(6, dtype=np.float32).reshape(2, 3), copy=True)
    capsule = value.__dlpack__(max_version=(1, 0)) if versioned else value.__dlpack__()
    import ctypes

    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype = ctypes.c_char_p
    name.argtypes = [ctypes.py_object]
    assert name(capsule) == (b"dltensor_versioned" if versioned else b"dltensor")
    assert value.__dlpack_device__() == (1, 0)
    older = value.__dlpack__(max_version=(0, 8))
    assert name(older) == b"dltensor"


def test_dlpack_consumer_keeps_buffer_alive():
    session = nxrt.load(nxrt.builtin_model("simple_add"))
    value = session.run_with_values(np.full(4, 2, np.float32), np.ones(4, np.float32))
    pointer = value.data_ptr()
    array = np.from_dlpack(value)
    del value
    gc.collect()
    assert array.ctypes.data == pointer
    np.testing.assert_array_equal(array, np.full(4, 5, np.float32))
    unconsumed = nxrt.asvalue(np.ones(3, np.float32), copy=True).__dlpack__()
    del unconsumed  # the capsule destructor releases the export


def test_dlpack_producer_input_is_zero_copy():
    class Producer:
        """Exposes only DLPack (no __array__), like a framework tensor."""

        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    array = np.arange(8, dtype=np.int32)
    value = nxrt.asvalue(Producer(array))
    assert value.data_ptr() == array.ctypes.data
    strided = nxrt.asvalue(Producer(array[::2]))
    assert strided.data_ptr() != array.ctypes.data
    np.testing.assert_array_equal(strided.numpy(), array[::2])


@pytest.mark.parametrize("dtype,elem", [(np.bool_, TensorProto.BOOL), (np.int8, TensorProto.INT8),
                                        (np.uint8, TensorProto.UINT8), (np.int16, TensorProto.INT16),
                                        (np.uint16, TensorProto.UINT16), (np.int32, TensorProto.INT32),
                                        (np.uint32, TensorProto.UINT32), (np.int64, TensorProto.INT64),
                                        (np.uint64, TensorProto.UINT64), (np.float16, TensorProto.FLOAT16),
                                        (np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE)])
def test_every_numeric_dtype_round_trips(dtype, elem):
    data = (np.arange(7) % 4).astype(dtype)
    out = identity(elem).run(None, {"x": data})[0]
    assert out.dtype == data.dtype
    np.testing.assert_array_equal(out, data)
    value = nxrt.asvalue(data)
    assert value.element_type == elem and value.dtype == data.dtype
    np.testing.assert_array_equal(np.from_dlpack(value), data)


def test_bfloat16_uses_ml_dtypes():
    ml_dtypes = require_ml_dtypes()
    data = np.array([1.5, -2.0, 0.25], dtype=ml_dtypes.bfloat16)
    session = identity(TensorProto.BFLOAT16)
    assert session.get_inputs()[0].type == "tensor(bfloat16)"
    out = session.run(None, {"x": data})[0]
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.astype(np.float32), data.astype(np.float32))
    assert nxrt.asvalue(data).element_type == TensorProto.BFLOAT16


def test_float8_uses_ml_dtypes():
    ml_dtypes = require_ml_dtypes()
    data = np.array([1.0, -0.5, 2.0], dtype=ml_dtypes.float8_e4m3fn)
    out = identity(TensorProto.FLOAT8E4M3FN).run(None, {"x": data})[0]
    assert out.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(out.astype(np.float32), [1.0, -0.5, 2.0])


def test_string_tensors_in_and_out():
    session = identity(TensorProto.STRING)
    for data in (np.array(["a", "héllo", ""]), np.array([b"x", b"yz"]), np.array(["p", "q"], dtype=object)):
        out = session.run(None, {"x": data})[0]
        assert out.dtype == object
        expected = [item.decode() if isinstance(item, bytes) else item for item in data.tolist()]
        assert out.tolist() == expected
    value = nxrt.asvalue(np.array([["a", "b"], ["c", "d"]]))
    assert value.shape == (2, 2) and value.data_type == "tensor(string)"
    with pytest.raises(BufferError):
        value.__dlpack__()


def test_torch_cpu_tensors_are_zero_copy():
    torch = require_torch()
    tensor = torch.arange(6, dtype=torch.float32)
    value = nxrt.asvalue(tensor)
    assert value.data_ptr() == tensor.data_ptr()
    back = torch.from_dlpack(value)
    assert back.data_ptr() == value.data_ptr()


def test_torch_session_outputs_and_bound_inputs_are_zero_copy():
    torch = require_torch()
    session = nxrt.load(nxrt.builtin_model("simple_add"))
    x = torch.ones(4, dtype=torch.float32)
    y = torch.full((4,), 3.0, dtype=torch.float32)
    value = session.run_with_values(x, y)
    out = torch.from_dlpack(value)
    assert out.data_ptr() == value.data_ptr()
    assert out.tolist() == [5.0, 5.0, 5.0, 5.0]
    binding = identity(TensorProto.FLOAT).io_binding()
    binding.bind_cpu_input("x", x)
    assert binding._inputs["x"].data_ptr() == x.data_ptr()
