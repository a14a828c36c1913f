#include "errors.h"

#include <nanobind/stl/string.h>

#include <array>

namespace nb = nanobind;

namespace nxrt::python {

namespace {

const char* class_name(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kNoSuchFile: return "NoSuchFile";
    case StatusCode::kNoModel: return "NoModel";
    case StatusCode::kEngineError: return "EngineError";
    case StatusCode::kRuntimeException: return "RuntimeException";
    case StatusCode::kInvalidProtobuf: return "InvalidProtobuf";
    case StatusCode::kModelLoaded: return "ModelLoaded";
    case StatusCode::kNotImplemented: return "NotImplemented";
    case StatusCode::kInvalidGraph: return "InvalidGraph";
    case StatusCode::kEpFail: return "EPFail";
    default: return "Fail";
  }
}

// Classes are looked up once and kept for the life of the process (the module is never unloaded).
PyObject* exception_class(StatusCode code) {
  static std::array<PyObject*, 16> cache{};
  const size_t index = static_cast<size_t>(code) < cache.size() ? static_cast<size_t>(code) : 1;
  if (!cache[index]) {
    nb::module_ state = nb::module_::import_("nxrt.capi.onnxruntime_pybind11_state");
    cache[index] = state.attr(class_name(code)).inc_ref().ptr();
  }
  return cache[index];
}

}  // namespace

void throw_status(StatusCode code, const std::string& message) { throw StatusError(Status(code, message)); }

void set_python_error(const Status& status) {
  PyObject* type = nullptr;
  try {
    type = exception_class(status.code());
  } catch (nb::python_error& error) {
    error.restore();
    return;
  }
  PyErr_SetString(type, status.to_string().c_str());
}

void register_errors(nb::module_& m) {
  nb::register_exception_translator([](const std::exception_ptr& pointer, void*) {
    try {
      std::rethrow_exception(pointer);
    } catch (const StatusError& error) {
      set_python_error(error.status());
    }
  });
  m.def("_raise_status", [](int code, const std::string& message) {
    throw StatusError(Status(static_cast<StatusCode>(code), message));
  });
}

}  // namespace nxrt::python
