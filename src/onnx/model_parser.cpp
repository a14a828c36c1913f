// ModelProto, GraphProto, NodeProto, AttributeProto and FunctionProto; the leaf messages live in
// value_parser.cpp.
#include "graph/model_limits.h"
#include "onnx/model_proto.h"
#include "onnx/parse_internal.h"

namespace nxrt::onnx {
namespace detail {

using wire::Field;
using wire::WireReader;

namespace {

// What holds an attribute, for nesting-bound messages: "If node 'outer'" or "function 'f'". Views into the
// partly parsed owner: name and op_type precede attributes in every serializer's field order.
struct AttributeOwner {
  std::string_view op_type;  // empty for a function's attribute defaults
  std::string_view name;

  std::string describe() const {
    if (op_type.empty()) return "function '" + std::string(name) + "'";
    return std::string(op_type) + " node '" + std::string(name) + "'";
  }
};

Status parse_attribute(WireReader& reader, int graph_level, const AttributeOwner& owner, AttributeProto& out);

Status parse_node(WireReader& reader, int graph_level, NodeProto& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    switch (field.number) {
      case 1: TRY(reader.read_string(field, "input", out.input.emplace_back())); break;
      case 2: TRY(reader.read_string(field, "output", out.output.emplace_back())); break;
      case 3: TRY(reader.read_string(field, "name", out.name)); break;
      case 4: TRY(reader.read_string(field, "op_type", out.op_type)); break;
      case 7: TRY(reader.read_string(field, "domain", out.domain)); break;
      case 8: TRY(reader.read_string(field, "overload", out.overload)); break;
      case 6: TRY(reader.read_string(field, "doc_string", out.doc_string)); break;
      case 5: {
        WireReader attribute;
        TRY(reader.read_message(field, "attribute", "AttributeProto", attribute));
        TRY(parse_attribute(attribute, graph_level, {out.op_type, out.name}, out.attribute.emplace_back()));
        break;
      }
      default: break;
    }
  }
  return Status::ok();
}

// Attributes written before IR version 2 carry no `type`: it is inferred from the one value field present.
struct PresentFields {
  bool f = false, i = false, s = false;
};

int32_t infer_attribute_type(const AttributeProto& a, const PresentFields& present) {
  if (a.t) return AttributeProto::kTensor;
  if (a.sparse_tensor) return AttributeProto::kSparseTensor;
  if (a.g) return AttributeProto::kGraph;
  if (a.tp) return AttributeProto::kTypeProto;
  if (!a.floats.empty()) return AttributeProto::kFloats;
  if (!a.ints.empty()) return AttributeProto::kInts;
  if (!a.strings.empty()) return AttributeProto::kStrings;
  if (!a.tensors.empty()) return AttributeProto::kTensors;
  if (!a.graphs.empty()) return AttributeProto::kGraphs;
  if (!a.type_protos.empty()) return AttributeProto::kTypeProtos;
  if (present.f) return AttributeProto::kFloat;
  if (present.i) return AttributeProto::kInt;
  if (present.s) return AttributeProto::kString;
  return AttributeProto::kUndefined;
}

// A GRAPH/GRAPHS attribute of an owner at `graph_level` holds graphs one level deeper; checked before the
// parser recurses into them.
Status check_subgraph_level(const WireReader& subgraph, int graph_level, const AttributeOwner& owner,
                            std::string_view attribute) {
  if (graph_level < graph::kMaxGraphNesting) return Status::ok();
  return make_error(StatusCode::kInvalidArgument, owner.describe(), " attribute '", attribute, "' at byte offset ",
                    subgraph.start_offset(), ": subgraph nesting level ", graph_level + 1, " exceeds the limit of ",
                    graph::kMaxGraphNesting, " (If/Loop/Scan bodies inside each other)");
}

Status parse_attribute(WireReader& reader, int graph_level, const AttributeOwner& owner, AttributeProto& out) {
  const auto name_type_owner = [&](const Status& status) {
    return status.is_ok() ? status : name_nesting_owner(status, owner.describe() + " attribute", out.name);
  };
  Field field;
  PresentFields present;
  while (!reader.done()) {
    TRY(reader.next(field));
    WireReader sub;
    switch (field.number) {
      case 1: TRY(reader.read_string(field, "name", out.name)); break;
      case 21: TRY(reader.read_string(field, "ref_attr_name", out.ref_attr_name)); break;
      case 13: TRY(reader.read_string(field, "doc_string", out.doc_string)); break;
      case 20:
        TRY(reader.read_int32(field, "type", out.type));
        if (out.type < AttributeProto::kUndefined || out.type > AttributeProto::kTypeProtos) {
          return reader.error(field, "type", "unknown attribute type ", out.type, " in attribute '", out.name, "'");
        }
        break;
      case 2:
        TRY(reader.read_float(field, "f", out.f));
        present.f = true;
        break;
      case 3:
        TRY(reader.read_int64(field, "i", out.i));
        present.i = true;
        break;
      case 4:
        TRY(reader.read_string(field, "s", out.s));
        present.s = true;
        break;
      case 22:
        out.sparse_tensor = std::make_shared<SparseTensorProto>();
        TRY(parse_sparse_tensor_field(reader, field, "sparse_tensor", *out.sparse_tensor));
        break;
      case 5:
        out.t = std::make_shared<TensorProto>();
        TRY(parse_tensor_field(reader, field, "t", *out.t));
        break;
      case 6:
        TRY(reader.read_message(field, "g", "GraphProto", sub));
        TRY(check_subgraph_level(sub, graph_level, owner, out.name));
        out.g = std::make_shared<GraphProto>();
        TRY(parse_graph(sub, graph_level + 1, *out.g));
        break;
      case 14:
        TRY(reader.read_message(field, "tp", "TypeProto", sub));
        out.tp = std::make_shared<TypeProto>();
        TRY(name_type_owner(parse_type(sub, 1, *out.tp)));
        break;
      case 7: TRY(reader.append_floats(field, "floats", out.floats)); break;
      case 8: TRY(reader.append_int64s(field, "ints", out.ints)); break;
      case 9: TRY(reader.read_string(field, "strings", out.strings.emplace_back())); break;
      case 10:
        TRY(parse_tensor_field(reader, field, "tensors", out.tensors.emplace_back()));
        break;
      case 11:
        TRY(reader.read_message(field, "graphs", "GraphProto", sub));
        TRY(check_subgraph_level(sub, graph_level, owner, out.name));
        out.graphs.push_back(std::make_shared<GraphProto>());
        TRY(parse_graph(sub, graph_level + 1, *out.graphs.back()));
        break;
      case 15:
        TRY(reader.read_message(field, "type_protos", "TypeProto", sub));
        TRY(name_type_owner(parse_type(sub, 1, out.type_protos.emplace_back())));
        break;
      default: break;  // sparse_tensor (22), sparse_tensors (23): the type tag alone reaches the importer
    }
  }
  if (out.type == AttributeProto::kUndefined && out.ref_attr_name.empty()) {
    out.type = infer_attribute_type(out, present);
  }
  return Status::ok();
}

Status parse_function(WireReader& reader, FunctionProto& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    WireReader sub;
    switch (field.number) {
      case 1: TRY(reader.read_string(field, "name", out.name)); break;
      case 4: TRY(reader.read_string(field, "input", out.input.emplace_back())); break;
      case 5: TRY(reader.read_string(field, "output", out.output.emplace_back())); break;
      case 6: TRY(reader.read_string(field, "attribute", out.attribute.emplace_back())); break;
      case 10: TRY(reader.read_string(field, "domain", out.domain)); break;
      case 13: TRY(reader.read_string(field, "overload", out.overload)); break;
      case 11:
        TRY(reader.read_message(field, "attribute_proto", "AttributeProto", sub));
        TRY(parse_attribute(sub, 0, {"", out.name}, out.attribute_proto.emplace_back()));
        break;
      case 7:
        TRY(reader.read_message(field, "node", "NodeProto", sub));
        TRY(parse_node(sub, 0, out.node.emplace_back()));
        break;
      case 9:
        TRY(reader.read_message(field, "opset_import", "OperatorSetIdProto", sub));
        TRY(parse_opset_id(sub, out.opset_import.emplace_back()));
        break;
      case 12:
        TRY(reader.read_message(field, "value_info", "ValueInfoProto", sub));
        TRY(parse_value_info(sub, out.value_info.emplace_back()));
        break;
      default: break;
    }
  }
  return Status::ok();
}

Status parse_model_message(WireReader& reader, ModelProto& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    WireReader sub;
    switch (field.number) {
      case 1: TRY(reader.read_int64(field, "ir_version", out.ir_version)); break;
      case 2: TRY(reader.read_string(field, "producer_name", out.producer_name)); break;
      case 3: TRY(reader.read_string(field, "producer_version", out.producer_version)); break;
      case 4: TRY(reader.read_string(field, "domain", out.domain)); break;
      case 5: TRY(reader.read_int64(field, "model_version", out.model_version)); break;
      case 6: TRY(reader.read_string(field, "doc_string", out.doc_string)); break;
      case 7:
        TRY(reader.read_message(field, "graph", "GraphProto", sub));
        if (!out.graph) out.graph = std::make_shared<GraphProto>();
        TRY(parse_graph(sub, 0, *out.graph));
        break;
      case 8:
        TRY(reader.read_message(field, "opset_import", "OperatorSetIdProto", sub));
        TRY(parse_opset_id(sub, out.opset_import.emplace_back()));
        break;
      case 14:
        TRY(reader.read_message(field, "metadata_props", "StringStringEntryProto", sub));
        TRY(parse_string_entry(sub, out.metadata_props.emplace_back()));
        break;
      case 25:
        TRY(reader.read_message(field, "functions", "FunctionProto", sub));
        TRY(parse_function(sub, out.functions.emplace_back()));
        break;
      default: break;  // training_info (20), configuration (26) and future fields
    }
  }
  return Status::ok();
}

}  // namespace

Status parse_graph(WireReader& reader, int graph_level, GraphProto& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    WireReader sub;
    switch (field.number) {
      case 1:
        TRY(reader.read_message(field, "node", "NodeProto", sub));
        TRY(parse_node(sub, graph_level, out.node.emplace_back()));
        break;
      case 2: TRY(reader.read_string(field, "name", out.name)); break;
      case 5:
        TRY(parse_tensor_field(reader, field, "initializer", out.initializer.emplace_back()));
        break;
      case 10: TRY(reader.read_string(field, "doc_string", out.doc_string)); break;
      case 11:
        TRY(reader.read_message(field, "input", "ValueInfoProto", sub));
        TRY(parse_value_info(sub, out.input.emplace_back()));
        break;
      case 12:
        TRY(reader.read_message(field, "output", "ValueInfoProto", sub));
        TRY(parse_value_info(sub, out.output.emplace_back()));
        break;
      case 13:
        TRY(reader.read_message(field, "value_info", "ValueInfoProto", sub));
        TRY(parse_value_info(sub, out.value_info.emplace_back()));
        break;
      case 15:
        TRY(parse_sparse_tensor_field(reader, field, "sparse_initializer", out.sparse_initializer.emplace_back()));
        break;
      default: break;  // quantization_annotation (14), metadata_props (16)
    }
  }
  return Status::ok();
}

}  // namespace detail

Expected<ModelProto> parse_model(std::string_view bytes) {
  wire::WireReader reader(bytes, bytes.data(), "ModelProto");
  ModelProto model;
  TRY(detail::parse_model_message(reader, model));
  return model;
}

}  // namespace nxrt::onnx
