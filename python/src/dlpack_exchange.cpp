#include "dlpack_exchange.h"

#include <cstring>
#include <string>

#include "dlpack.h"
#include "errors.h"

namespace nb = nanobind;

namespace nxrt::python {

namespace {

struct ExportContext {
  Tensor tensor;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

DataType data_type_of(dlpack::DataType dtype) {
  if (dtype.lanes != 1) return DataType::kUndefined;
  switch (dtype.code) {
    case dlpack::kBool: return dtype.bits == 8 ? DataType::kBool : DataType::kUndefined;
    case dlpack::kInt:
      if (dtype.bits == 8) return DataType::kInt8;
      if (dtype.bits == 16) return DataType::kInt16;
      if (dtype.bits == 32) return DataType::kInt32;
      if (dtype.bits == 64) return DataType::kInt64;
      break;
    case dlpack::kUInt:
      if (dtype.bits == 8) return DataType::kUInt8;
      if (dtype.bits == 16) return DataType::kUInt16;
      if (dtype.bits == 32) return DataType::kUInt32;
      if (dtype.bits == 64) return DataType::kUInt64;
      break;
    case dlpack::kFloat:
      if (dtype.bits == 16) return DataType::kFloat16;
      if (dtype.bits == 32) return DataType::kFloat32;
      if (dtype.bits == 64) return DataType::kFloat64;
      break;
    case dlpack::kBfloat: return dtype.bits == 16 ? DataType::kBFloat16 : DataType::kUndefined;
    case dlpack::kComplex:
      if (dtype.bits == 64) return DataType::kComplex64;
      if (dtype.bits == 128) return DataType::kComplex128;
      break;
    default: break;
  }
  return DataType::kUndefined;
}

bool dlpack_type_of(DataType type, dlpack::DataType& out) {
  out.lanes = 1;
  out.bits = static_cast<uint8_t>(data_type_bits(type));
  if (type == DataType::kBool) {
    out.code = dlpack::kBool;
  } else if (type == DataType::kBFloat16) {
    out.code = dlpack::kBfloat;
  } else if (type == DataType::kComplex64 || type == DataType::kComplex128) {
    out.code = dlpack::kComplex;
  } else if (type == DataType::kFloat16 || type == DataType::kFloat32 || type == DataType::kFloat64) {
    out.code = dlpack::kFloat;
  } else if (is_signed_int_type(type) && !is_sub_byte_type(type)) {
    out.code = dlpack::kInt;
  } else if (is_unsigned_int_type(type) && !is_sub_byte_type(type)) {
    out.code = dlpack::kUInt;
  } else {
    return false;
  }
  return true;
}

// Copies a strided tensor into a compact row-major one, element by element (sizes in bytes).
void copy_strided(const char* source, char* target, const dlpack::Tensor& view, size_t element_bytes) {
  const int ndim = view.ndim;
  std::vector<int64_t> index(ndim, 0);
  int64_t count = 1;
  for (int d = 0; d < ndim; ++d) count *= view.shape[d];
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (int d = 0; d < ndim; ++d) offset += index[d] * view.strides[d];
    std::memcpy(target + n * element_bytes, source + offset * static_cast<int64_t>(element_bytes), element_bytes);
    for (int d = ndim - 1; d >= 0; --d) {
      if (++index[d] < view.shape[d]) break;
      index[d] = 0;
    }
  }
}

bool is_compact(const dlpack::Tensor& view) {
  if (!view.strides) return true;
  int64_t expected = 1;
  for (int d = view.ndim - 1; d >= 0; --d) {
    if (view.shape[d] != 1 && view.strides[d] != expected) return false;
    expected *= view.shape[d];
  }
  return true;
}

template <class Managed>
void delete_export(Managed* managed) {
  delete static_cast<ExportContext*>(managed->manager_ctx);
  delete managed;
}

template <class Managed>
void release_unconsumed(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;  // renamed by a consumer, who now owns the deleter call
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  managed->deleter(managed);
}

}  // namespace

Tensor tensor_from_dlpack(nb::handle object, std::vector<nb::object>& keep) {
  if (nb::hasattr(object, "__dlpack_device__")) {
    nb::tuple device = nb::cast<nb::tuple>(object.attr("__dlpack_device__")());
    const int kind = nb::cast<int>(device[0]);
    if (kind != dlpack::kCpu && kind != dlpack::kCudaHost) {
      throw_status(StatusCode::kInvalidArgument, "nxrt runs on CPU but the input is on DLPack device type " +
                                                     std::to_string(kind) + "; move it to CPU first");
    }
  }
  nb::object capsule;
  try {
    capsule = object.attr("__dlpack__")(nb::arg("max_version") = nb::make_tuple(1, 0));
  } catch (nb::python_error& error) {
    if (!error.matches(PyExc_TypeError)) throw;
    capsule = object.attr("__dlpack__")();
  }
  PyObject* raw = capsule.ptr();
  dlpack::Tensor* view = nullptr;
  nb::object owner;
  if (PyCapsule_IsValid(raw, dlpack::kVersionedCapsuleName)) {
    auto* managed =
        static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(raw, dlpack::kVersionedCapsuleName));
    if (managed->version.major > 1) throw nb::type_error("unsupported DLPack major version");
    PyCapsule_SetName(raw, dlpack::kUsedVersionedCapsuleName);
    owner = nb::capsule(managed, [](void* pointer) noexcept {
      auto* m = static_cast<dlpack::ManagedTensorVersioned*>(pointer);
      if (m->deleter) m->deleter(m);
    });
    view = &managed->dl_tensor;
  } else if (PyCapsule_IsValid(raw, dlpack::kCapsuleName)) {
    auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(raw, dlpack::kCapsuleName));
    PyCapsule_SetName(raw, dlpack::kUsedCapsuleName);
    owner = nb::capsule(managed, [](void* pointer) noexcept {
      auto* m = static_cast<dlpack::ManagedTensor*>(pointer);
      if (m->deleter) m->deleter(m);
    });
    view = &managed->dl_tensor;
  } else {
    throw nb::type_error("__dlpack__ did not return a DLPack capsule");
  }
  if (view->device.device_type != dlpack::kCpu && view->device.device_type != dlpack::kCudaHost) {
    throw_status(StatusCode::kInvalidArgument, "nxrt runs on CPU but the DLPack tensor is on device type " +
                                                   std::to_string(view->device.device_type));
  }
  const DataType type = data_type_of(view->dtype);
  if (type == DataType::kUndefined) {
    throw nb::type_error(("nxrt does not support the DLPack dtype (code " + std::to_string(view->dtype.code) +
                          ", bits " + std::to_string(view->dtype.bits) + ", lanes " +
                          std::to_string(view->dtype.lanes) + "); cast the tensor first, e.g. to float32 or int64")
                             .c_str());
  }
  Shape shape(view->shape, view->shape + view->ndim);
  char* data = static_cast<char*>(view->data) + view->byte_offset;
  if (is_compact(*view)) {
    keep.push_back(std::move(owner));
    return Tensor::wrap(type, std::move(shape), data);
  }
  Tensor copy = value_or_throw(Tensor::allocate(type, std::move(shape)));
  copy_strided(data, static_cast<char*>(copy.raw_data()), *view, static_cast<size_t>(data_type_bits(type) / 8));
  return copy;
}

nb::object dlpack_capsule(const Tensor& tensor, bool versioned, bool read_only) {
  dlpack::DataType dtype{};
  if (!dlpack_type_of(tensor.dtype(), dtype)) {
    PyErr_SetString(PyExc_BufferError,
                    ("DLPack cannot carry " + std::string(data_type_name(tensor.dtype())) + " tensors").c_str());
    throw nb::python_error();
  }
  auto context = std::make_unique<ExportContext>();
  context->tensor = tensor;
  context->shape = tensor.shape();
  context->strides.resize(context->shape.size());
  int64_t stride = 1;
  for (size_t d = context->shape.size(); d-- > 0;) {
    context->strides[d] = stride;
    stride *= context->shape[d];
  }
  dlpack::Tensor view{};
  view.data = tensor.raw_data();
  view.device = {dlpack::kCpu, 0};
  view.ndim = static_cast<int32_t>(context->shape.size());
  view.dtype = dtype;
  view.shape = context->shape.data();
  view.strides = context->strides.data();
  view.byte_offset = 0;
  if (versioned) {
    auto* managed = new dlpack::ManagedTensorVersioned{};
    managed->version = {1, 0};
    managed->manager_ctx = context.release();
    managed->deleter = delete_export<dlpack::ManagedTensorVersioned>;
    managed->flags = read_only ? dlpack::kFlagReadOnly : 0;
    managed->dl_tensor = view;
    PyObject* capsule = PyCapsule_New(managed, dlpack::kVersionedCapsuleName, [](PyObject* c) {
      release_unconsumed<dlpack::ManagedTensorVersioned>(c, dlpack::kVersionedCapsuleName);
    });
    if (!capsule) {
      delete_export(managed);
      throw nb::python_error();
    }
    return nb::steal(capsule);
  }
  auto* managed = new dlpack::ManagedTensor{};
  managed->manager_ctx = context.release();
  managed->deleter = delete_export<dlpack::ManagedTensor>;
  managed->dl_tensor = view;
  PyObject* capsule = PyCapsule_New(managed, dlpack::kCapsuleName, [](PyObject* c) {
    release_unconsumed<dlpack::ManagedTensor>(c, dlpack::kCapsuleName);
  });
  if (!capsule) {
    delete_export(managed);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

}  // namespace nxrt::python
