#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>
#include <string>

#include "dlpack_exchange.h"
#include "ep/provider.h"
#include "ep/test_device/test_device_provider.h"
#include "errors.h"
#include "numpy_interop.h"
#include "value.h"

namespace nb = nanobind;

namespace nxrt::python {

namespace {

constexpr Device kTestDevice{DeviceType::kTestDevice, 0};
constexpr int kDlpackCpu = 1;
constexpr int kDlpackExtDev = 12;  // kDLExtDev: memory the host must not read directly

Shape shape_from_sequence(nb::handle sequence) {
  Shape shape;
  for (nb::handle dim : sequence) {
    const int64_t value = nb::cast<int64_t>(dim);
    if (value < 0) throw nb::value_error("shape dims must be non-negative");
    shape.push_back(value);
  }
  if (!checked_numel(shape)) throw nb::value_error("shape has too many elements");
  return shape;
}

DataType element_type_from(nb::handle element_type) {
  if (PyLong_Check(element_type.ptr())) {
    const auto type = data_type_from_int(nb::cast<int64_t>(element_type));
    if (!type || *type == DataType::kUndefined) throw nb::value_error("unknown ONNX element type");
    return *type;
  }
  return data_type_from_dtype_like(element_type);
}

nb::tuple shape_tuple(const Tensor& tensor) {
  nb::list dims;
  for (int64_t dim : tensor.shape()) dims.append(dim);
  return nb::tuple(dims);
}

std::string value_repr(const PyValue& value) {
  return "nxrt.Value(shape=" + shape_to_string(value.tensor.shape()) + ", dtype=" +
         std::string(data_type_name(value.tensor.dtype())) + ", device=" + python_device_name(value.tensor.device()) +
         ")";
}

void copy_into(PyValue& target, const PyValue& source) {
  if (target.tensor.dtype() != source.tensor.dtype() || target.tensor.shape() != source.tensor.shape()) {
    throw_status(StatusCode::kInvalidArgument,
                 "cannot copy a " + tensor_type_string(source.tensor.dtype()) + " " +
                     shape_to_string(source.tensor.shape()) + " value into a " +
                     tensor_type_string(target.tensor.dtype()) + " " + shape_to_string(target.tensor.shape()) +
                     " value");
  }
  if (source.tensor.dtype() == DataType::kString) {
    for (int64_t i = 0; i < source.tensor.numel(); ++i) {
      target.tensor.data<std::string>()[i] = source.tensor.data<std::string>()[i];
    }
  } else if (!ep::is_host(target.tensor.device()) || !ep::is_host(source.tensor.device())) {
    throw_if_error(ep::test_device_provider()->copy(source.tensor, target.tensor, nullptr));
  } else if (source.tensor.storage_bytes() > 0 && target.tensor.raw_data() != source.tensor.raw_data()) {
    std::memcpy(target.tensor.raw_data(), source.tensor.raw_data(), source.tensor.storage_bytes());
  }
}

// The value as a numpy array: a view of host memory (kept alive by `self`), or a host copy of device memory.
nb::object host_array(nb::handle self) {
  const Tensor& tensor = nb::cast<PyValue&>(self).tensor;
  if (ep::is_host(tensor.device())) return numpy_from_tensor(tensor, self);
  return numpy_from_tensor(copy_to(tensor, Device{}));
}

}  // namespace

Device device_from_name(std::string_view name) {
  if (name == "cpu") return Device{};
  if (name == "test_device") return kTestDevice;
  throw_status(StatusCode::kEpFail, "nxrt has no '" + std::string(name) +
                                        "' device; values can be created on 'cpu' and 'test_device'");
}

std::string python_device_name(Device device) {
  switch (device.type) {
    case DeviceType::kCpu: return "cpu";
    case DeviceType::kCuda: return "cuda";
    case DeviceType::kTestDevice: return "test_device";
  }
  return device_name(device);
}

Tensor copy_to(const Tensor& source, Device target) {
  if (ep::is_host(source.device()) && ep::is_host(target)) return value_or_throw(Tensor::copy_of(source));
  if (!ep::is_host(target) && target != kTestDevice) {
    throw_status(StatusCode::kInvalidArgument, "nxrt cannot copy a value to " + device_name(target));
  }
  if (source.dtype() == DataType::kString) {
    throw_status(StatusCode::kInvalidArgument, "string values live on the host only, they cannot be copied to " +
                                                   python_device_name(target));
  }
  const std::shared_ptr<const ep::ExecutionProvider> provider = ep::test_device_provider();
  Tensor copy = value_or_throw(
      Tensor::allocate(source.dtype(), source.shape(), ep::is_host(target) ? cpu_allocator() : provider->allocator()));
  throw_if_error(provider->copy(source, copy, nullptr));
  return copy;
}

Tensor tensor_from_object(nb::handle object, std::vector<nb::object>& keep) {
  if (nb::isinstance<PyValue>(object)) {
    keep.push_back(nb::borrow(object));
    return nb::cast<PyValue&>(object).tensor;
  }
  if (is_numpy_array(object)) return tensor_from_numpy(object, keep);
  if (nb::hasattr(object, "__dlpack__") && !PyUnicode_Check(object.ptr()) && !PyBytes_Check(object.ptr())) {
    return tensor_from_dlpack(object, keep);
  }
  return tensor_from_numpy(object, keep);
}

nb::object make_value(Tensor tensor) {
  PyValue value;
  value.tensor = std::move(tensor);
  return nb::cast(std::move(value));
}

void register_values(nb::module_& m) {
  nb::class_<PyValue>(m, "Value",
                      "A tensor owned by nxrt (or wrapping a caller's buffer). Exposes numpy views and DLPack.")
      .def_static(
          "from_object",
          [](nb::handle object, bool copy, std::optional<std::string> device) {
            PyValue value;
            value.tensor = tensor_from_object(object, value.keep);
            const Device target = device ? device_from_name(*device) : value.tensor.device();
            if (copy || value.tensor.device() != target) {
              value.tensor = copy_to(value.tensor, target);
              value.keep.clear();
            }
            return value;
          },
          nb::arg("object"), nb::arg("copy") = false, nb::arg("device").none() = nb::none(),
          "Wraps a numpy array, DLPack producer or array-like (zero-copy when contiguous). `device` ('cpu', "
          "'test_device'; None: where the object is) other than the object's copies it there.")
      .def_static(
          "empty",
          [](nb::handle shape, nb::handle element_type, const std::string& device) {
            const Device target = device_from_name(device);
            PyValue value;
            value.tensor = value_or_throw(Tensor::allocate(element_type_from(element_type), shape_from_sequence(shape)));
            if (value.tensor.dtype() != DataType::kString && value.tensor.storage_bytes() > 0) {
              std::memset(value.tensor.raw_data(), 0, value.tensor.storage_bytes());
            }
            if (target != value.tensor.device()) value.tensor = copy_to(value.tensor, target);
            return value;
          },
          nb::arg("shape"), nb::arg("element_type"), nb::arg("device") = "cpu",
          "A zero-filled value of this shape and element type on `device` ('cpu', 'test_device').")
      .def_static(
          "from_pointer",
          [](uintptr_t pointer, nb::handle shape, nb::handle element_type, const std::string& device) {
            PyValue value;
            const Device on = device_from_name(device);
            const DataType type = element_type_from(element_type);
            if (type == DataType::kString) throw nb::type_error("string values cannot wrap raw memory");
            value.tensor = Tensor::wrap(type, shape_from_sequence(shape), reinterpret_cast<void*>(pointer), on);
            return value;
          },
          nb::arg("pointer"), nb::arg("shape"), nb::arg("element_type"), nb::arg("device") = "cpu",
          "Wraps caller-owned memory of `device` ('cpu', 'test_device'); the caller keeps it alive and large "
          "enough.")
      .def("numpy", &host_array,
           "A numpy array sharing this value's memory (strings are copied; a value on test_device is copied to "
           "the host).")
      .def(
          "__array__",
          [](nb::handle self, nb::handle dtype, std::optional<bool> copy) {
            const bool on_host = ep::is_host(nb::cast<PyValue&>(self).tensor.device());
            if (!on_host && copy.has_value() && !*copy) {
              throw nb::value_error("a test_device value can only be read as a numpy array through a copy");
            }
            nb::object array = host_array(self);
            if (!dtype.is_none()) array = array.attr("astype")(dtype, nb::arg("copy") = copy.value_or(true));
            if (on_host && copy.value_or(false)) array = array.attr("copy")();
            return array;
          },
          nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def(
          "__dlpack__",
          [](const PyValue& self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
             std::optional<bool> copy) {
            if (!ep::is_host(self.tensor.device())) {
              const std::string message = "this nxrt value is in " + python_device_name(self.tensor.device()) +
                                          " memory, which DLPack consumers cannot read; copy it to the host with "
                                          ".numpy() first";
              PyErr_SetString(PyExc_BufferError, message.c_str());
              throw nb::python_error();
            }
            if (!dl_device.is_none()) {
              nb::tuple device = nb::cast<nb::tuple>(dl_device);
              if (nb::cast<int>(device[0]) != kDlpackCpu) {
                PyErr_SetString(PyExc_BufferError, "nxrt values live on CPU (DLPack device type 1)");
                throw nb::python_error();
              }
            }
            bool versioned = false;
            if (!max_version.is_none()) versioned = nb::cast<int>(nb::cast<nb::tuple>(max_version)[0]) >= 1;
            Tensor tensor = self.tensor;
            if (copy.value_or(false)) tensor = value_or_throw(Tensor::copy_of(tensor));
            return dlpack_capsule(tensor, versioned, false);
          },
          nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
          nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none())
      .def("__dlpack_device__",
           [](const PyValue& self) {
             return nb::make_tuple(ep::is_host(self.tensor.device()) ? kDlpackCpu : kDlpackExtDev, 0);
           },
           "(1, 0) for host memory; (12, 0) (kDLExtDev) for test_device memory, which __dlpack__ refuses.")
      .def_prop_ro("shape", [](const PyValue& self) { return shape_tuple(self.tensor); })
      .def_prop_ro("ndim", [](const PyValue& self) { return self.tensor.rank(); })
      .def_prop_ro("size", [](const PyValue& self) { return self.tensor.numel(); })
      .def_prop_ro("nbytes", [](const PyValue& self) {
        return self.tensor.dtype() == DataType::kString ? size_t{0} : self.tensor.storage_bytes();
      })
      .def_prop_ro("dtype", [](const PyValue& self) { return numpy_dtype_of(self.tensor.dtype()); })
      .def_prop_ro("element_type", [](const PyValue& self) { return static_cast<int>(self.tensor.dtype()); },
                   "ONNX TensorProto element type (1 = float, 7 = int64, ...).")
      .def_prop_ro("data_type", [](const PyValue& self) { return tensor_type_string(self.tensor.dtype()); },
                   "ONNX Runtime's type string, e.g. 'tensor(float)'.")
      .def_prop_ro("type_name", [](const PyValue& self) { return std::string(data_type_name(self.tensor.dtype())); })
      .def_prop_ro("device", [](const PyValue& self) { return python_device_name(self.tensor.device()); },
                   "'cpu', or 'test_device' for memory of the test execution provider.")
      .def("data_ptr", [](const PyValue& self) { return reinterpret_cast<uintptr_t>(self.tensor.raw_data()); })
      .def("copy_from", [](PyValue& self, const PyValue& source) { copy_into(self, source); }, nb::arg("source"),
           "Copies `source` (same dtype and shape) into this value's memory.")
      .def("__len__",
           [](const PyValue& self) {
             if (self.tensor.rank() == 0) throw nb::type_error("len() of a 0-d value");
             return self.tensor.shape()[0];
           })
      .def("__repr__", [](const PyValue& self) { return value_repr(self); });
}

}  // namespace nxrt::python
