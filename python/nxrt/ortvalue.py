"""OrtValue: onnxruntime's value wrapper, backed by nxrt.Value (on the CPU, or on the test device)."""

import numpy as np

from nxrt._nxrt import Value, _raise_status

__all__ = ["OrtValue", "OrtValueVector", "is_dlpack_uint8_tensor"]


_DEVICES = ("cpu", "test_device")


def _device(device_type):
    """'cpu', or 'test_device' (memory of the test-only TestDeviceExecutionProvider); other devices are EPFail."""
    device = str(device_type).lower()
    if device not in _DEVICES:
        _raise_status(11, f"nxrt has no '{device_type}' device; only 'cpu' (and the test provider's "
                          f"'test_device') values can be created")
    return device


class _CapsuleProducer:
    """Presents a bare DLPack capsule as a producer: its device is read from the DLManagedTensor the capsule holds
    (DLTensor: data pointer, then DLDevice {int32 device_type, int32 device_id})."""

    __slots__ = ("_capsule",)

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        import ctypes

        # Prototypes of our own: setting argtypes on ctypes.pythonapi's shared function objects would change them
        # for every other user in the process.
        get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
        get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
            ("PyCapsule_GetPointer", ctypes.pythonapi))
        pointer = get_pointer(self._capsule, get_name(self._capsule))
        device = (ctypes.c_int32 * 2).from_address(pointer + ctypes.sizeof(ctypes.c_void_p))
        return int(device[0]), int(device[1])


class OrtValue:
    """A tensor value. `ortvalue_from_numpy` wraps the array without copying it (the OrtValue keeps it alive), or
    copies it into test-device memory when `device_type` is "test_device"; numpy() then copies it back.

    run_with_ort_values also returns OrtValues for a model's non-tensor outputs (sequences, maps, sequences of
    maps, empty optionals), as onnxruntime does: is_tensor() is False, data_type() names the type, the tensor
    accessors raise RuntimeError, and such an OrtValue feeds the same value back to run_with_ort_values."""

    __slots__ = ("_value", "_object", "_type")

    def __init__(self, value, numpy_obj=None):
        if not isinstance(value, Value):
            raise TypeError("OrtValue wraps an nxrt.Value; use OrtValue.ortvalue_from_numpy()")
        self._value = value
        self._object = None
        self._type = None

    @classmethod
    def _of_object(cls, obj, type_string):
        """A non-tensor value: `obj` as run() returns it (list, dict, list of dicts or None) of type `type_string`."""
        value = cls.__new__(cls)
        value._value, value._object, value._type = None, obj, type_string
        return value

    def _tensor(self):
        if self._value is None:
            raise RuntimeError(f"the OrtValue holds a {self._type}, not a tensor")
        return self._value

    def _feed(self):
        """What run() takes for this value."""
        if self.is_sparse_tensor():
            raise TypeError("nxrt's sessions take dense inputs: feed SparseTensor.to_dense() instead of a sparse "
                            "OrtValue")
        return self._value if self._value is not None else self._object

    @staticmethod
    def ort_value_from_sparse_tensor(sparse_tensor):
        from nxrt.sparse_tensor import SparseTensor

        if not isinstance(sparse_tensor, SparseTensor):
            raise TypeError("ort_value_from_sparse_tensor takes a SparseTensor")
        return OrtValue._of_object(sparse_tensor, sparse_tensor.data_type())

    def as_sparse_tensor(self):
        if not self.is_sparse_tensor():
            raise RuntimeError("the OrtValue does not hold a SparseTensor")
        return self._object

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0, vendor_id=-1):
        return OrtValue(Value.from_object(numpy_obj, device=_device(device_type)))

    @staticmethod
    def ortvalue_from_numpy_with_onnx_type(data, onnx_element_type):
        value = Value.from_object(data)
        if value.element_type != int(onnx_element_type):
            value = Value.from_object(np.asarray(data).view(_numpy_dtype(onnx_element_type)))
        return OrtValue(value)

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type="cpu", device_id=0, vendor_id=-1):
        return OrtValue(Value.empty(list(shape), element_type, _device(device_type)))

    @staticmethod
    def from_dlpack(data, is_bool_tensor=False):
        """A DLPack producer (an object with __dlpack__) or, as onnxruntime accepts, a DLPack capsule itself."""
        if type(data).__name__ == "PyCapsule":
            data = _CapsuleProducer(data)
        value = Value.from_object(data)
        return OrtValue(value)

    @property
    def _ortvalue(self):
        """onnxruntime's Python OrtValue wraps a C-level one here; nxrt's OrtValue is both (same methods)."""
        return self

    def _get_c_value(self):
        return self

    def data_ptr(self):
        return self._tensor().data_ptr()

    def device_name(self):
        return self._value.device if self._value is not None else "cpu"

    def shape(self):
        return list(self._tensor().shape)

    def data_type(self):
        return self._value.data_type if self._value is not None else self._type

    def element_type(self):
        return self._tensor().element_type

    def has_value(self):
        return self._value is not None or self._object is not None

    def is_tensor(self):
        return self._value is not None

    def is_sparse_tensor(self):
        return self._value is None and str(self._type).startswith("sparse_tensor(")

    def is_tensor_sequence(self):
        return self._value is None and str(self._type).startswith("seq(tensor(")

    def tensor_size_in_bytes(self):
        return self._tensor().nbytes

    def __array__(self, dtype=None, copy=None):
        """np.asarray(ortvalue): the tensor's values (a copy, as numpy() makes)."""
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def numpy(self):
        return self._tensor().numpy()

    def update_inplace(self, np_arr):
        self._tensor().copy_from(Value.from_object(np_arr))

    def to_dlpack(self):
        return self._tensor().__dlpack__()

    def __dlpack__(self, **kwargs):
        return self._tensor().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._tensor().__dlpack_device__()

    def __repr__(self):
        return f"OrtValue({self._value!r})" if self._value is not None else f"OrtValue({self._type}: {self._object!r})"


class OrtValueVector(list):
    """A list of OrtValues, as onnxruntime's C-level run_with_ort_values returns them."""

    def push_back(self, value):
        if not isinstance(value, OrtValue):
            raise TypeError("OrtValueVector holds OrtValues")
        self.append(value)

    def reserve(self, count):
        """No effect (a Python list grows as needed)."""

    def shrink_to_fit(self):
        """No effect."""

    def element_type_at(self, index):
        return self[index].element_type()

    def dlpack_at(self, index):
        return self[index].to_dlpack()

    def bool_tensor_indices(self):
        return [i for i, value in enumerate(self) if value.is_tensor() and value.data_type() == "tensor(bool)"]

    def to_dlpacks(self, to_tensor=None):
        capsules = [value.to_dlpack() for value in self]
        return capsules if to_tensor is None else [to_tensor(capsule) for capsule in capsules]


def is_dlpack_uint8_tensor(capsule):
    """Whether a DLPack capsule holds a uint8 tensor (DLTensor's dtype {code, bits, lanes} after its data pointer,
    DLDevice and ndim: code 1 = unsigned, 8 bits)."""
    import ctypes

    get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
    get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi))
    name = get_name(capsule)
    if name not in (b"dltensor", b"used_dltensor"):
        raise TypeError(f"not a DLPack capsule (its name is {name!r})")
    pointer = get_pointer(capsule, name)
    offset = ctypes.sizeof(ctypes.c_void_p) + 8 + 4  # data, DLDevice {int32, int32}, int32 ndim
    code, bits = (ctypes.c_uint8 * 2).from_address(pointer + offset)
    return code == 1 and bits == 8


def _numpy_dtype(element_type):
    from nxrt._nxrt import numpy_dtype

    return numpy_dtype(int(element_type))
