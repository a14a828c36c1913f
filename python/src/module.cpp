// nxrt._nxrt: the C++ engine as seen from Python. The public API is the pure-Python package around it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "core/data_type.h"
#include "errors.h"
#include "numpy_interop.h"
#include "session/default_models.h"
#include "value.h"

namespace nb = nanobind;

namespace nxrt::python {
void register_session(nb::module_& m);
void register_op_models(nb::module_& m);
void register_genai(nb::module_& m);
}  // namespace nxrt::python

NB_MODULE(_nxrt, m) {
  using namespace nxrt::python;
  init_numpy();
  register_errors(m);
  register_values(m);
  register_session(m);
  register_op_models(m);
  register_genai(m);
  m.attr("__version__") = NXRT_VERSION;
#if defined(NDEBUG)
  m.attr("build_type") = "Release";  // assertions compiled out
#else
  m.attr("build_type") = "Debug";
#endif
  m.def(
      "numpy_dtype", [](int element_type) { return numpy_dtype_of(static_cast<nxrt::DataType>(element_type)); },
      nb::arg("element_type"), "numpy dtype for an ONNX element type.");
  m.def(
      "element_type", [](nb::handle dtype) { return static_cast<int>(data_type_from_dtype_like(dtype)); },
      nb::arg("dtype"), "ONNX element type for anything numpy.dtype() accepts.");
  m.def(
      "default_model",
      [](const std::string& name) {
        const std::string bytes = value_or_throw(nxrt::default_model(name));
        return nb::bytes(bytes.data(), bytes.size());
      },
      nb::arg("name"), "Serialized bytes of an embedded model (simple_add, mlp).");
  m.def("default_model_names", [] {
    nb::list names;
    for (std::string_view name : nxrt::default_model_names()) names.append(nb::str(name.data(), name.size()));
    return names;
  });
  m.def(
      "type_string", [](int element_type) { return nxrt::tensor_type_string(static_cast<nxrt::DataType>(element_type)); },
      nb::arg("element_type"));
}
