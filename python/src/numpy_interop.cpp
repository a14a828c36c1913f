#include "numpy_interop.h"

#include <Python.h>
#define PY_ARRAY_UNIQUE_SYMBOL NXRT_NUMPY_ARRAY_API
#include <numpy/arrayobject.h>

#include <array>
#include <cstring>
#include <string>

#include "bytes_view.h"
#include "errors.h"

namespace nb = nanobind;

namespace nxrt::python {

namespace {

// dtypes provided by the optional ml_dtypes package, looked up on first need.
struct ExtraDtypes {
  bool loaded = false;
  std::array<PyArray_Descr*, kMaxDataTypeValue + 1> by_type{};  // borrowed for the process lifetime
};

ExtraDtypes& extra_dtypes() {
  static ExtraDtypes extra;
  if (extra.loaded) return extra;
  extra.loaded = true;
  PyObject* module = PyImport_ImportModule("ml_dtypes");
  if (!module) {
    PyErr_Clear();
    return extra;
  }
  const std::pair<const char*, DataType> names[] = {
      {"bfloat16", DataType::kBFloat16},          {"float8_e4m3fn", DataType::kFloat8E4M3FN},
      {"float8_e4m3fnuz", DataType::kFloat8E4M3FNUZ}, {"float8_e5m2", DataType::kFloat8E5M2},
      {"float8_e5m2fnuz", DataType::kFloat8E5M2FNUZ}, {"float8_e8m0fnu", DataType::kFloat8E8M0},
  };
  for (const auto& [name, type] : names) {
    PyObject* scalar_type = PyObject_GetAttrString(module, name);
    PyArray_Descr* descr = nullptr;
    if (scalar_type && PyArray_DescrConverter(scalar_type, &descr) && descr) {
      extra.by_type[static_cast<size_t>(type)] = descr;
    }
    PyErr_Clear();
    Py_XDECREF(scalar_type);
  }
  Py_DECREF(module);
  return extra;
}

DataType integer_type(bool is_signed, int bytes) {
  switch (bytes) {
    case 1: return is_signed ? DataType::kInt8 : DataType::kUInt8;
    case 2: return is_signed ? DataType::kInt16 : DataType::kUInt16;
    case 4: return is_signed ? DataType::kInt32 : DataType::kUInt32;
    case 8: return is_signed ? DataType::kInt64 : DataType::kUInt64;
    default: return DataType::kUndefined;
  }
}

// kUndefined when nxrt has no matching element type.
DataType data_type_of_descr(PyArray_Descr* descr) {
  const int elsize = static_cast<int>(PyDataType_ELSIZE(descr));
  switch (descr->kind) {
    case 'b': return DataType::kBool;
    case 'i': return integer_type(true, elsize);
    case 'u': return integer_type(false, elsize);
    case 'f':
      if (elsize == 2) return DataType::kFloat16;
      if (elsize == 4) return DataType::kFloat32;
      if (elsize == 8) return DataType::kFloat64;
      return DataType::kUndefined;
    case 'c':
      if (elsize == 8) return DataType::kComplex64;
      if (elsize == 16) return DataType::kComplex128;
      return DataType::kUndefined;
    case 'U':
    case 'S':
    case 'O': return DataType::kString;
    default: break;
  }
  const ExtraDtypes& extra = extra_dtypes();
  for (size_t type = 0; type < extra.by_type.size(); ++type) {
    if (extra.by_type[type] && extra.by_type[type]->type_num == descr->type_num) return static_cast<DataType>(type);
  }
  return DataType::kUndefined;
}

[[noreturn]] void throw_unsupported_dtype(PyArray_Descr* descr) {
  nb::object name = nb::steal(PyObject_Str(reinterpret_cast<PyObject*>(descr)));
  const std::string text = name.is_valid() ? nb::cast<std::string>(name) : std::string("?");
  throw nb::type_error(("nxrt does not support numpy dtype '" + text +
                        "'; cast the array first, e.g. x.astype(numpy.float32), x.astype(numpy.int64) or "
                        "x.astype(numpy.bool_)")
                           .c_str());
}

Shape shape_of(PyArrayObject* array) {
  const int ndim = PyArray_NDIM(array);
  const npy_intp* dims = PyArray_DIMS(array);
  return Shape(dims, dims + ndim);
}

std::string utf8_of(PyObject* item) {
  Py_ssize_t size = 0;
  if (PyUnicode_Check(item)) {
    const char* text = PyUnicode_AsUTF8AndSize(item, &size);
    if (!text) throw nb::python_error();
    return std::string(text, static_cast<size_t>(size));
  }
  if (PyBytes_Check(item)) return std::string(bytes_view(item));
  throw nb::type_error("string tensors accept only str or bytes elements");
}

void release_tensor_capsule(PyObject* capsule) {
  delete static_cast<Tensor*>(PyCapsule_GetPointer(capsule, "nxrt.tensor"));
}

}  // namespace

void init_numpy() {
  if (_import_array() < 0) throw nb::python_error();
}

bool is_numpy_array(nb::handle object) { return PyArray_Check(object.ptr()); }

Tensor string_tensor_from_numpy(nb::handle object) {
  nb::object flat = nb::steal(PyArray_Ravel(reinterpret_cast<PyArrayObject*>(object.ptr()), NPY_CORDER));
  if (!flat.is_valid()) throw nb::python_error();
  nb::object items = flat.attr("tolist")();
  Shape shape = shape_of(reinterpret_cast<PyArrayObject*>(object.ptr()));
  Tensor tensor = value_or_throw(Tensor::allocate(DataType::kString, shape));
  std::string* out = tensor.data<std::string>();
  const Py_ssize_t count = PyList_Size(items.ptr());
  for (Py_ssize_t i = 0; i < count; ++i) out[i] = utf8_of(PyList_GetItem(items.ptr(), i));
  return tensor;
}

Tensor tensor_from_numpy(nb::handle object, std::vector<nb::object>& keep) {
  nb::object array;
  if (PyArray_Check(object.ptr())) {
    array = nb::borrow(object);
  } else {
    array = nb::steal(PyArray_FromAny(object.ptr(), nullptr, 0, 0, 0, nullptr));
    if (!array.is_valid()) throw nb::python_error();
  }
  auto* arr = reinterpret_cast<PyArrayObject*>(array.ptr());
  PyArray_Descr* descr = PyArray_DESCR(arr);
  const DataType type = data_type_of_descr(descr);
  if (type == DataType::kUndefined) throw_unsupported_dtype(descr);
  if (type == DataType::kString) return string_tensor_from_numpy(array);
  const bool native = PyArray_ISNBO(descr->byteorder);
  if (!native || !PyArray_ISCARRAY_RO(arr)) {
    PyArray_Descr* target = native ? descr : PyArray_DescrNewByteorder(descr, NPY_NATIVE);
    if (native) Py_INCREF(reinterpret_cast<PyObject*>(target));
    array = nb::steal(PyArray_FromAny(array.ptr(), target, 0, 0, NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY, nullptr));
    if (!array.is_valid()) throw nb::python_error();
    arr = reinterpret_cast<PyArrayObject*>(array.ptr());
  }
  Tensor tensor = Tensor::wrap(type, shape_of(arr), PyArray_DATA(arr));
  keep.push_back(std::move(array));
  return tensor;
}

nb::object numpy_dtype_of(DataType type) {
  int type_num = -1;
  switch (type) {
    case DataType::kBool: type_num = NPY_BOOL; break;
    case DataType::kInt8: type_num = NPY_INT8; break;
    case DataType::kUInt8: type_num = NPY_UINT8; break;
    case DataType::kInt16: type_num = NPY_INT16; break;
    case DataType::kUInt16: type_num = NPY_UINT16; break;
    case DataType::kInt32: type_num = NPY_INT32; break;
    case DataType::kUInt32: type_num = NPY_UINT32; break;
    case DataType::kInt64: type_num = NPY_INT64; break;
    case DataType::kUInt64: type_num = NPY_UINT64; break;
    case DataType::kFloat16: type_num = NPY_FLOAT16; break;
    case DataType::kFloat32: type_num = NPY_FLOAT32; break;
    case DataType::kFloat64: type_num = NPY_FLOAT64; break;
    case DataType::kComplex64: type_num = NPY_COMPLEX64; break;
    case DataType::kComplex128: type_num = NPY_COMPLEX128; break;
    case DataType::kString: type_num = NPY_OBJECT; break;
    default: break;
  }
  if (type_num >= 0) return nb::steal(reinterpret_cast<PyObject*>(PyArray_DescrFromType(type_num)));
  if (static_cast<int>(type) >= 0 && static_cast<int>(type) <= kMaxDataTypeValue) {
    if (PyArray_Descr* descr = extra_dtypes().by_type[static_cast<size_t>(type)]) {
      return nb::borrow(reinterpret_cast<PyObject*>(descr));
    }
  }
  if (type == DataType::kBFloat16) return nb::steal(reinterpret_cast<PyObject*>(PyArray_DescrFromType(NPY_UINT16)));
  const std::string name(data_type_name(type));
  throw nb::type_error(("numpy has no dtype for ONNX element type '" + name +
                        "' (install ml_dtypes for bfloat16 and float8 types)")
                           .c_str());
}

DataType data_type_from_dtype_like(nb::handle dtype_like) {
  PyArray_Descr* descr = nullptr;
  if (!PyArray_DescrConverter(dtype_like.ptr(), &descr)) throw nb::python_error();
  nb::object owner = nb::steal(reinterpret_cast<PyObject*>(descr));
  const DataType type = data_type_of_descr(descr);
  if (type == DataType::kUndefined) throw_unsupported_dtype(descr);
  return type;
}

nb::object numpy_from_tensor(const Tensor& tensor, nb::handle base) {
  const Shape& shape = tensor.shape();
  std::vector<npy_intp> dims(shape.begin(), shape.end());
  if (tensor.dtype() == DataType::kString) {
    nb::object array = nb::steal(PyArray_SimpleNew(static_cast<int>(dims.size()), dims.data(), NPY_OBJECT));
    if (!array.is_valid()) throw nb::python_error();
    auto* arr = reinterpret_cast<PyArrayObject*>(array.ptr());
    PyObject** out = static_cast<PyObject**>(PyArray_DATA(arr));
    const std::string* in = tensor.data<std::string>();
    for (int64_t i = 0; i < tensor.numel(); ++i) {
      PyObject* text = PyUnicode_DecodeUTF8(in[i].data(), static_cast<Py_ssize_t>(in[i].size()), "surrogateescape");
      if (!text) throw nb::python_error();
      PyObject* previous = out[i];  // Py_XSETREF is not in the limited API
      out[i] = text;
      Py_XDECREF(previous);
    }
    return array;
  }
  if (is_sub_byte_type(tensor.dtype())) {
    throw nb::type_error(("nxrt cannot expose packed " + std::string(data_type_name(tensor.dtype())) +
                          " tensors as numpy arrays; cast them to int8/uint8/float32 in the model")
                             .c_str());
  }
  nb::object dtype = numpy_dtype_of(tensor.dtype());
  nb::object owner;
  if (base.is_valid()) {
    owner = nb::borrow(base);
  } else {
    owner = nb::steal(PyCapsule_New(new Tensor(tensor), "nxrt.tensor", release_tensor_capsule));
    if (!owner.is_valid()) throw nb::python_error();
  }
  auto* descr = reinterpret_cast<PyArray_Descr*>(dtype.release().ptr());  // stolen by NewFromDescr
  PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, static_cast<int>(dims.size()), dims.data(), nullptr,
                                         tensor.raw_data(), NPY_ARRAY_CARRAY, nullptr);
  if (!array) throw nb::python_error();
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), owner.release().ptr()) < 0) {
    Py_DECREF(array);
    throw nb::python_error();
  }
  return nb::steal(array);
}

}  // namespace nxrt::python
