// Status -> Python exception conversion at the extension boundary. Engine errors travel as StatusError and are
// translated into the classes of nxrt.capi.onnxruntime_pybind11_state (named as onnxruntime's), with
// str(e) == Status::to_string().
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>  // every TU must see the same std::string caster

#include <exception>
#include <string>
#include <utility>

#include "core/status.h"

namespace nxrt::python {

class StatusError : public std::exception {
 public:
  explicit StatusError(Status status) : status_(std::move(status)), text_(status_.to_string()) {}
  const char* what() const noexcept override { return text_.c_str(); }
  const Status& status() const { return status_; }

 private:
  Status status_;
  std::string text_;
};

inline void throw_if_error(const Status& status) {
  if (!status.is_ok()) throw StatusError(status);
}

template <class T>
T value_or_throw(Expected<T>&& expected) {
  if (!expected) throw StatusError(expected.status());
  return std::move(expected).value();
}

[[noreturn]] void throw_status(StatusCode code, const std::string& message);

// Sets the Python error indicator for `status` (GIL held).
void set_python_error(const Status& status);

void register_errors(nanobind::module_& m);

}  // namespace nxrt::python
