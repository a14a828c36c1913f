#include "onnx/model_writer.h"

#include <cstring>

#include "onnx/wire_writer.h"

namespace nxrt::onnx::write {
namespace {

using wire::ProtoWriter;

template <class T>
std::string little_endian_bytes(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

ProtoWriter encode_graph(const Graph& graph);

ProtoWriter encode_tensor(const Tensor& tensor) {
  ProtoWriter out;
  if (!tensor.dims.empty()) out.packed_int64s(1, tensor.dims);
  out.int64_field(2, tensor.data_type);
  out.bytes_field(8, tensor.name);
  if (tensor.external_data.empty()) {
    out.bytes_field(9, tensor.raw_data);
    return out;
  }
  for (const auto& [key, value] : tensor.external_data) {
    ProtoWriter entry;
    entry.bytes_field(1, key);
    entry.bytes_field(2, value);
    out.message_field(13, entry);
  }
  out.int64_field(14, 1);
  return out;
}

ProtoWriter encode_attribute(const Attribute& attribute) {
  ProtoWriter out;
  out.bytes_field(1, attribute.name);
  if (!attribute.ref_attr_name.empty()) out.bytes_field(21, attribute.ref_attr_name);
  out.int64_field(20, attribute.type);
  switch (attribute.type) {
    case 1: out.float_field(2, attribute.f); break;
    case 2: out.int64_field(3, attribute.i); break;
    case 3: out.bytes_field(4, attribute.s); break;
    case 4:
      if (attribute.t) out.message_field(5, encode_tensor(*attribute.t));
      break;
    case 5:
      if (attribute.g) out.message_field(6, encode_graph(*attribute.g));
      break;
    case 6: out.packed_floats(7, attribute.floats); break;
    case 7: out.packed_int64s(8, attribute.ints); break;
    case 8:
      for (const std::string& s : attribute.strings) out.bytes_field(9, s);
      break;
    case 9:
      for (const Tensor& t : attribute.tensors) out.message_field(10, encode_tensor(t));
      break;
    case 10:
      for (const auto& g : attribute.graphs) {
        if (g) out.message_field(11, encode_graph(*g));
      }
      break;
    default: break;
  }
  return out;
}

ProtoWriter encode_node(const Node& node) {
  ProtoWriter out;
  for (const std::string& input : node.inputs) out.bytes_field(1, input);
  for (const std::string& output : node.outputs) out.bytes_field(2, output);
  if (!node.name.empty()) out.bytes_field(3, node.name);
  out.bytes_field(4, node.op_type);
  for (const Attribute& attribute : node.attributes) out.message_field(5, encode_attribute(attribute));
  if (!node.domain.empty()) out.bytes_field(7, node.domain);
  return out;
}

ProtoWriter encode_value_info(const ValueInfo& info) {
  ProtoWriter out;
  out.bytes_field(1, info.name);
  if (!info.has_type) return out;
  ProtoWriter tensor_type;
  tensor_type.int64_field(1, info.elem_type);
  if (info.has_shape) {
    ProtoWriter shape;
    for (const Dim& dim : info.dims) {
      ProtoWriter dimension;
      if (const auto* value = std::get_if<int64_t>(&dim)) {
        dimension.int64_field(1, *value);
      } else {
        dimension.bytes_field(2, std::get<std::string>(dim));
      }
      shape.message_field(1, dimension);
    }
    tensor_type.message_field(2, shape);
  }
  ProtoWriter type;
  type.message_field(1, tensor_type);
  out.message_field(2, type);
  return out;
}

ProtoWriter encode_graph(const Graph& graph) {
  ProtoWriter out;
  for (const Node& node : graph.nodes) out.message_field(1, encode_node(node));
  out.bytes_field(2, graph.name);
  for (const Tensor& tensor : graph.initializers) out.message_field(5, encode_tensor(tensor));
  for (const ValueInfo& info : graph.inputs) out.message_field(11, encode_value_info(info));
  for (const ValueInfo& info : graph.outputs) out.message_field(12, encode_value_info(info));
  for (const ValueInfo& info : graph.value_info) out.message_field(13, encode_value_info(info));
  return out;
}

ProtoWriter encode_opset(const OpsetId& opset) {
  ProtoWriter out;
  out.bytes_field(1, opset.domain);
  out.int64_field(2, opset.version);
  return out;
}

ProtoWriter encode_function(const Function& function) {
  ProtoWriter out;
  out.bytes_field(1, function.name);
  for (const std::string& input : function.inputs) out.bytes_field(4, input);
  for (const std::string& output : function.outputs) out.bytes_field(5, output);
  for (const std::string& attribute : function.attributes) out.bytes_field(6, attribute);
  for (const Node& node : function.nodes) out.message_field(7, encode_node(node));
  for (const OpsetId& opset : function.opset_imports) out.message_field(9, encode_opset(opset));
  out.bytes_field(10, function.domain);
  return out;
}

}  // namespace

Tensor float_tensor(std::string name, std::vector<int64_t> dims, const std::vector<float>& values) {
  return Tensor{std::move(name), 1, std::move(dims), little_endian_bytes(values), {}};
}

Tensor int64_tensor(std::string name, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  return Tensor{std::move(name), 7, std::move(dims), little_endian_bytes(values), {}};
}

Tensor double_tensor(std::string name, std::vector<int64_t> dims, const std::vector<double>& values) {
  return Tensor{std::move(name), 11, std::move(dims), little_endian_bytes(values), {}};
}

Attribute attr_int(std::string name, int64_t value) {
  Attribute a;
  a.name = std::move(name);
  a.type = 2;
  a.i = value;
  return a;
}

Attribute attr_float(std::string name, float value) {
  Attribute a;
  a.name = std::move(name);
  a.type = 1;
  a.f = value;
  return a;
}

Attribute attr_string(std::string name, std::string value) {
  Attribute a;
  a.name = std::move(name);
  a.type = 3;
  a.s = std::move(value);
  return a;
}

Attribute attr_ints(std::string name, std::vector<int64_t> values) {
  Attribute a;
  a.name = std::move(name);
  a.type = 7;
  a.ints = std::move(values);
  return a;
}

Attribute attr_floats(std::string name, std::vector<float> values) {
  Attribute a;
  a.name = std::move(name);
  a.type = 6;
  a.floats = std::move(values);
  return a;
}

Attribute attr_tensor(std::string name, Tensor value) {
  Attribute a;
  a.name = std::move(name);
  a.type = 4;
  a.t = std::make_shared<Tensor>(std::move(value));
  return a;
}

Attribute attr_graph(std::string name, Graph value) {
  Attribute a;
  a.name = std::move(name);
  a.type = 5;
  a.g = std::make_shared<Graph>(std::move(value));
  return a;
}

std::string encode_model(const Model& model) {
  ProtoWriter out;
  out.int64_field(1, model.ir_version);
  out.bytes_field(2, model.producer_name);
  if (!model.producer_version.empty()) out.bytes_field(3, model.producer_version);
  if (!model.doc_string.empty()) out.bytes_field(6, model.doc_string);
  out.message_field(7, encode_graph(model.graph));
  for (const OpsetId& opset : model.opset_imports) out.message_field(8, encode_opset(opset));
  for (const auto& [key, value] : model.metadata_props) {
    ProtoWriter entry;
    entry.bytes_field(1, key);
    entry.bytes_field(2, value);
    out.message_field(14, entry);
  }
  for (const Function& function : model.functions) out.message_field(25, encode_function(function));
  return out.take();
}

}  // namespace nxrt::onnx::write
