// Single-node models for eager ops (nxrt.ops): built with the engine's own model writer, then run by a normal
// session that nxrt/ops.py caches per signature.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "bytes_view.h"
#include "errors.h"
#include "ep/cpu/kernel.h"
#include "numpy_interop.h"
#include "onnx/model_writer.h"
#include "value.h"

namespace nb = nanobind;

namespace nxrt::python {

namespace {

namespace write = onnx::write;

// onnx.AttributeProto.AttributeType values.
enum AttributeType : int32_t { kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kFloats = 6, kInts = 7, kStrings = 8 };

std::string text_of(nb::handle item) {
  if (PyBytes_Check(item.ptr())) return std::string(bytes_view(item.ptr()));
  return nb::cast<std::string>(item);
}

bool is_text(nb::handle item) { return PyUnicode_Check(item.ptr()) || PyBytes_Check(item.ptr()); }
bool is_integer(nb::handle item) { return PyLong_Check(item.ptr()) || nb::hasattr(item, "__index__"); }

write::Tensor tensor_attribute(const std::string& name, nb::handle value) {
  std::vector<nb::object> keep;
  const Tensor tensor = tensor_from_object(value, keep);
  if (tensor.dtype() == DataType::kString) {
    throw nb::type_error(("attribute '" + name + "': string tensors are not supported as attributes").c_str());
  }
  write::Tensor out;
  out.name = name;
  out.data_type = static_cast<int32_t>(tensor.dtype());
  out.dims = tensor.shape();
  out.raw_data.assign(static_cast<const char*>(tensor.raw_data()), tensor.storage_bytes());
  return out;
}

write::Attribute attribute_of(const std::string& name, nb::handle value) {
  write::Attribute attribute;
  attribute.name = name;
  if (PyBool_Check(value.ptr()) || PyLong_Check(value.ptr())) {
    attribute.type = kInt;
    attribute.i = nb::cast<int64_t>(value);
  } else if (PyFloat_Check(value.ptr())) {
    attribute.type = kFloat;
    attribute.f = nb::cast<float>(value);
  } else if (is_text(value)) {
    attribute.type = kString;
    attribute.s = text_of(value);
  } else if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
    bool all_int = true, all_text = true, all_number = true;
    for (nb::handle item : value) {
      const bool number = PyLong_Check(item.ptr()) || PyFloat_Check(item.ptr());
      all_int &= PyLong_Check(item.ptr()) != 0;
      all_text &= is_text(item);
      all_number &= number;
    }
    if (all_int) {
      attribute.type = kInts;
      for (nb::handle item : value) attribute.ints.push_back(nb::cast<int64_t>(item));
    } else if (all_text) {
      attribute.type = kStrings;
      for (nb::handle item : value) attribute.strings.push_back(text_of(item));
    } else if (all_number) {
      attribute.type = kFloats;
      for (nb::handle item : value) attribute.floats.push_back(nb::cast<float>(item));
    } else {
      throw nb::type_error(("attribute '" + name + "': lists must hold only ints, floats or strings").c_str());
    }
  } else if (is_integer(value) && !nb::hasattr(value, "shape")) {
    attribute.type = kInt;
    attribute.i = nb::cast<int64_t>(value.attr("__index__")());
  } else {
    attribute.type = kTensor;
    attribute.t = std::make_shared<write::Tensor>(tensor_attribute(name, value));
  }
  return attribute;
}

// input_types[i] == 0 marks an absent optional input; input_ranks[i] < 0 an unknown rank.
nb::bytes make_op_model(const std::string& op_type, const std::string& domain, int64_t opset,
                        const std::vector<int>& input_types, const std::vector<int>& input_ranks, int num_outputs,
                        nb::dict attributes) {
  if (input_types.size() != input_ranks.size()) throw nb::value_error("input_types and input_ranks differ in length");
  if (num_outputs < 1) throw nb::value_error("an op needs at least one output");
  write::Model model;
  model.opset_imports = {{domain, opset}};
  if (!domain.empty()) model.opset_imports.push_back({"", 21});
  write::Node node;
  node.op_type = op_type;
  node.domain = domain;
  node.name = op_type;
  for (size_t i = 0; i < input_types.size(); ++i) {
    if (input_types[i] == 0) {
      node.inputs.push_back("");
      continue;
    }
    write::ValueInfo input;
    input.name = "input" + std::to_string(i);
    input.elem_type = input_types[i];
    input.has_shape = input_ranks[i] >= 0;
    for (int d = 0; d < input_ranks[i]; ++d) input.dims.push_back("in" + std::to_string(i) + "_" + std::to_string(d));
    node.inputs.push_back(input.name);
    model.graph.inputs.push_back(std::move(input));
  }
  while (!node.inputs.empty() && node.inputs.back().empty()) node.inputs.pop_back();
  for (int o = 0; o < num_outputs; ++o) {
    write::ValueInfo output;
    output.name = "output" + std::to_string(o);
    output.has_type = false;
    node.outputs.push_back(output.name);
    model.graph.outputs.push_back(std::move(output));
  }
  for (const auto& [key, value] : attributes) node.attributes.push_back(attribute_of(nb::cast<std::string>(key), value));
  model.graph.name = op_type;
  model.graph.nodes.push_back(std::move(node));
  const std::string bytes = write::encode_model(model);
  return nb::bytes(bytes.data(), bytes.size());
}

std::vector<std::string> registered_ops() {
  std::vector<std::string> names;
  for (const cpu::KernelDef* def : cpu::all_kernels()) {
    std::string name = def->domain.empty() ? std::string(def->op_type)
                                           : std::string(def->domain) + "." + std::string(def->op_type);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

void register_op_models(nb::module_& m) {
  m.def("make_op_model", &make_op_model, nb::arg("op_type"), nb::arg("domain"), nb::arg("opset"),
        nb::arg("input_types"), nb::arg("input_ranks"), nb::arg("num_outputs"), nb::arg("attributes"),
        "Serialized single-node model; inputs have symbolic dims, outputs are untyped.");
  m.def(
      "has_kernel",
      [](const std::string& domain, const std::string& op_type, int opset) {
        return cpu::find_kernel(domain, op_type, opset) != nullptr;
      },
      nb::arg("domain"), nb::arg("op_type"), nb::arg("opset"));
  m.def("registered_ops", &registered_ops, "Op types with a CPU kernel ('domain.Op' outside the ONNX domain).");
}

}  // namespace nxrt::python
