// Views of Python bytes objects through the limited API only (the extension is built for the stable ABI on
// Python 3.12+, where macros such as PyBytes_AS_STRING are unavailable). Functions here need the GIL.
#pragma once

#include <nanobind/nanobind.h>

#include <string_view>

namespace nxrt::python {

// The contents of `object`, which must be a bytes object, valid while the object lives.
inline std::string_view bytes_view(PyObject* object) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(object, &data, &size) < 0) throw nanobind::python_error();
  return {data, static_cast<size_t>(size)};
}

}  // namespace nxrt::python
