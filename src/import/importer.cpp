#include "import/importer.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_set>

#include "graph/model_limits.h"
#include "graph/shape_inference.h"
#include "import/tensor_from_proto.h"
#include "onnx/function_expansion.h"

namespace nxrt::import {

namespace {

std::string normalize_domain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string() : std::string(domain);
}

// Whether a declared tensor type describes `tensor`: its element type, rank and every concrete dim.
bool type_admits(const graph::TypeInfo& type, const Tensor& tensor) {
  if (!type.is_tensor() || type.elem_type != tensor.dtype() || !type.shape || type.shape->size() != tensor.rank()) {
    return false;
  }
  for (size_t d = 0; d < tensor.rank(); ++d) {
    if ((*type.shape)[d].is_known() && (*type.shape)[d].value != tensor.shape()[d]) return false;
  }
  return true;
}

// Renames values while a function body is expanded: formals map to the caller's names, locals get a
// unique prefix. The empty scope (top level) maps every name to itself.
struct NameScope {
  std::map<std::string, std::string> names;
  std::string prefix;
  bool identity = true;

  std::string resolve(std::string_view name) const {
    if (identity || name.empty()) return std::string(name);
    const auto found = names.find(std::string(name));
    if (found != names.end()) return found->second;
    return prefix + std::string(name);
  }
};

// Attributes of the node that called the function being expanded (for ref_attr_name).
using AttributeEnv = std::map<std::string, const onnx::AttributeProto*>;

class GraphImporter {
 public:
  GraphImporter(const onnx::ModelProto& model, const std::shared_ptr<const onnx::ModelBytes>& bytes,
                const ImportOptions& options)
      : bytes_(bytes), max_tensor_bytes_(options.max_tensor_bytes), supplied_(options.supplied_initializers) {
    for (const onnx::FunctionProto& function : model.functions) {
      functions_[{normalize_domain(function.domain), std::string(function.name)}] = &function;
    }
  }

  // `outer_scope` is null for the main graph; for a subgraph it renames the names it reads from enclosing
  // graphs (a subgraph inside a function body reads the function's renamed values).
  Status import_graph(const onnx::GraphProto& proto, const std::map<std::string, int64_t>& opsets,
                      const NameScope* outer_scope, int depth, graph::Graph& graph,
                      std::vector<int>* overridable) {
    if (depth > graph::kMaxGraphNesting) {
      return make_error(StatusCode::kInvalidArgument, "subgraph '", proto.name, "': nesting level ", depth,
                        " exceeds the limit of ", graph::kMaxGraphNesting);
    }
    graph.name = std::string(proto.name);
    graph.opsets = opsets;
    for (const onnx::TensorProto& initializer : proto.initializer) {
      const std::string name(initializer.name);
      if (name.empty()) return make_error(StatusCode::kInvalidGraph, "graph '", graph.name, "' has an unnamed initializer");
      const int id = graph.add_value(name);
      if (graph.values[id].initializer) {
        return make_error(StatusCode::kInvalidGraph, "initializer '", name, "' is defined twice");
      }
      Tensor tensor;
      if (const Tensor* supplied = outer_scope == nullptr ? find_supplied(name) : nullptr) {
        TRY(check_supplied(initializer.data_type, initializer.dims, *supplied, name));
        tensor = *supplied;
      } else {
        TRY_ASSIGN(tensor, tensor_from_proto(initializer, bytes_, "initializer '" + name + "'", max_tensor_bytes_));
      }
      graph.values[id].type = graph::TypeInfo::tensor(tensor.dtype(), graph::symbolic_shape_of(tensor.shape()));
      graph.values[id].initializer = std::move(tensor);
    }
    for (const onnx::SparseTensorProto& sparse : proto.sparse_initializer) {  // made dense: kernels take dense
      const std::string name(sparse.values.name);
      if (name.empty()) {
        return make_error(StatusCode::kInvalidGraph, "graph '", graph.name, "' has an unnamed sparse initializer");
      }
      const int id = graph.add_value(name);
      if (graph.values[id].initializer) {
        return make_error(StatusCode::kInvalidGraph, "initializer '", name, "' is defined twice");
      }
      Tensor tensor;
      if (const Tensor* supplied = outer_scope == nullptr ? find_supplied(name) : nullptr) {
        TRY(check_supplied(sparse.values.data_type, sparse.dims, *supplied, name));
        tensor = *supplied;
      } else {
        TRY_ASSIGN(tensor,
                   dense_from_sparse_proto(sparse, bytes_, "sparse initializer '" + name + "'", max_tensor_bytes_));
      }
      graph.values[id].type = graph::TypeInfo::tensor(tensor.dtype(), graph::symbolic_shape_of(tensor.shape()));
      graph.values[id].initializer = std::move(tensor);
    }
    std::set<std::string> seen_inputs;
    for (const onnx::ValueInfoProto& input : proto.input) {
      const std::string name(input.name);
      if (name.empty()) return make_error(StatusCode::kInvalidGraph, "graph '", graph.name, "' has an unnamed input");
      if (!seen_inputs.insert(name).second) {
        return make_error(StatusCode::kInvalidGraph, "graph input '", name, "' is declared twice");
      }
      const int id = graph.add_value(name);
      graph::Value& value = graph.values[id];
      if (input.has_type) {
        TRY_ASSIGN(value.type, type_from_proto(input.type, "graph input '" + name + "'"));
        if (outer_scope == nullptr) record_denotations(name, input.type);
      }
      if (value.initializer) {
        if (overridable) overridable->push_back(id);
        // A main-graph initializer that is also an input keeps the input's declared type where that type admits
        // the initializer: dims it leaves free stay free, so a feed may override the value with another size (a
        // LoRA parameter's rank), as onnxruntime checks such feeds against the declared input.
        if (!(overridable != nullptr && input.has_type && type_admits(value.type, *value.initializer))) {
          value.type = graph::TypeInfo::tensor(value.initializer->dtype(),
                                               graph::symbolic_shape_of(value.initializer->shape()));
        }
      } else {
        value.is_graph_input = true;
        graph.inputs.push_back(id);
      }
    }
    for (const onnx::ValueInfoProto& info : proto.value_info) {
      if (!info.has_type || info.name.empty()) continue;
      const int id = graph.add_value(std::string(info.name));
      if (graph.values[id].type.kind == graph::TypeInfo::Kind::kUnknown) {
        TRY_ASSIGN(graph.values[id].type, type_from_proto(info.type, "value_info '" + std::string(info.name) + "'"));
      }
    }
    const NameScope top_scope;
    for (const onnx::NodeProto& node : proto.node) {
      TRY(emit_node(node, top_scope, nullptr, opsets, 0, depth, graph));
    }
    TRY(link_outer_scope(proto, graph, outer_scope));
    for (const onnx::ValueInfoProto& output : proto.output) {
      const std::string name(output.name);
      const int id = graph.find_value(name);
      if (id == graph::kNoValue) {
        return make_error(StatusCode::kInvalidGraph, "graph output '", name, "' is not produced by any node");
      }
      graph::Value& value = graph.values[id];
      value.is_graph_output = true;
      if (output.has_type && value.type.kind == graph::TypeInfo::Kind::kUnknown) {
        TRY_ASSIGN(value.type, type_from_proto(output.type, "graph output '" + name + "'"));
      } else if (output.has_type && value.type.is_tensor() && !value.type.shape) {
        TRY_ASSIGN(graph::TypeInfo declared, type_from_proto(output.type, "graph output '" + name + "'"));
        value.type.shape = declared.shape;
      }
      graph.outputs.push_back(id);
    }
    return graph::topological_sort(graph);
  }

  std::map<std::string, std::vector<std::string>> take_denotations() { return std::move(denotations_); }

  // Every supplied initializer replaced an initializer of the main graph (called after its import): the value of
  // that name holds the supplied tensor's very buffer.
  Status check_all_supplied_used(const graph::Graph& graph) const {
    if (supplied_ == nullptr) return Status::ok();
    for (const auto& [name, tensor] : *supplied_) {
      const int id = graph.find_value(name);
      if (id < 0 || !graph.values[id].initializer || graph.values[id].initializer->buffer() != tensor.buffer()) {
        return make_error(StatusCode::kInvalidArgument, "initializer '", name,
                          "' given in the session options is not an initializer of the model's main graph");
      }
    }
    return Status::ok();
  }

 private:
  void record_denotations(const std::string& name, const onnx::TypeProto& type) {
    if (type.kind != onnx::TypeProto::Kind::kTensor) return;
    const bool any = std::any_of(type.shape.begin(), type.shape.end(),
                                 [](const onnx::TensorShapeDim& dim) { return !dim.denotation.empty(); });
    if (!any) return;
    std::vector<std::string>& out = denotations_[name];
    for (const onnx::TensorShapeDim& dim : type.shape) out.emplace_back(dim.denotation);
  }

  const Tensor* find_supplied(const std::string& name) const {
    if (supplied_ == nullptr) return nullptr;
    const auto found = supplied_->find(name);
    return found == supplied_->end() ? nullptr : &found->second;
  }

  // `supplied` against the model's declared element type and dims of the initializer it replaces.
  static Status check_supplied(int32_t data_type, const std::vector<int64_t>& dims, const Tensor& supplied,
                               const std::string& name) {
    const Shape shape(dims.begin(), dims.end());
    if (static_cast<int32_t>(supplied.dtype()) != data_type || supplied.shape() != shape) {
      return make_error(StatusCode::kInvalidArgument, "initializer '", name, "' given in the session options is ",
                        data_type_name(supplied.dtype()), " ", shape_to_string(supplied.shape()),
                        " but the model declares ", data_type_name(static_cast<DataType>(data_type)), " ",
                        shape_to_string(shape));
    }
    if (supplied.device() != Device{}) {
      return make_error(StatusCode::kInvalidArgument, "initializer '", name, "' given in the session options must be ",
                        "in host memory");
    }
    return Status::ok();
  }

  // In a subgraph, values read but produced nowhere in it come from an enclosing graph: they become outer-scope
  // inputs, and the node owning the subgraph lists them as implicit inputs, so the enclosing graph checks that
  // they exist (and orders and keeps them alive). In the main graph they stay dangling, which sorting reports.
  Status link_outer_scope(const onnx::GraphProto& proto, graph::Graph& graph, const NameScope* outer_scope) {
    if (!outer_scope) return Status::ok();
    for (const onnx::ValueInfoProto& output : proto.output) graph.add_value(std::string(output.name));
    std::vector<bool> produced(graph.values.size(), false);
    std::vector<bool> read(graph.values.size(), false);
    for (const graph::Node& node : graph.nodes) {
      for (int output : node.outputs) {
        if (output != graph::kNoValue) produced[output] = true;
      }
      for (int input : node.inputs) {
        if (input != graph::kNoValue) read[input] = true;
      }
      for (int input : node.implicit_inputs) read[input] = true;
    }
    for (const onnx::ValueInfoProto& output : proto.output) read[graph.find_value(std::string(output.name))] = true;
    for (size_t id = 0; id < graph.values.size(); ++id) {
      graph::Value& value = graph.values[id];
      if (!read[id] || produced[id] || value.is_graph_input || value.initializer) continue;
      const std::string resolved = outer_scope->resolve(value.name);
      if (resolved != value.name) {
        if (graph.find_value(resolved) != graph::kNoValue) {
          return make_error(StatusCode::kInvalidGraph, "subgraph '", graph.name, "' reads '", value.name,
                            "', which resolves to '", resolved, "', a name the subgraph also defines");
        }
        graph.value_index.erase(value.name);
        graph.value_index.emplace(resolved, static_cast<int>(id));
        value.name = resolved;
      }
      value.is_outer_scope = true;
      graph.outer_scope_inputs.push_back(static_cast<int>(id));
    }
    return Status::ok();
  }

  Status emit_node(const onnx::NodeProto& proto, const NameScope& scope, const AttributeEnv* env,
                   const std::map<std::string, int64_t>& opsets, int function_depth, int graph_depth,
                   graph::Graph& graph) {
    const std::string domain = normalize_domain(proto.domain);
    const auto function = functions_.find({domain, std::string(proto.op_type)});
    if (function != functions_.end()) {
      return expand_function(proto, *function->second, scope, env, function_depth, graph_depth, graph);
    }
    graph::Node node;
    node.name = scope.identity ? std::string(proto.name) : scope.prefix + std::string(proto.name);
    node.op_type = std::string(proto.op_type);
    node.domain = domain;
    const auto opset = opsets.find(domain);
    if (opset == opsets.end()) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": domain '", domain,
                        "' is not in the model's opset_import");
    }
    node.opset = static_cast<int>(opset->second);
    for (std::string_view input : proto.input) {
      const std::string name = scope.resolve(input);
      node.inputs.push_back(name.empty() ? graph::kNoValue : graph.add_value(name));
    }
    for (std::string_view output : proto.output) {
      const std::string name = scope.resolve(output);
      if (name.empty()) {
        node.outputs.push_back(graph::kNoValue);
        continue;
      }
      const int id = graph.add_value(name);
      graph::Value& value = graph.values[id];
      if (value.initializer || value.is_graph_input || defined_.count({&graph, id})) {
        return make_error(StatusCode::kInvalidGraph, node.describe(), ": output '", name,
                          "' is already defined by another node, a graph input or an initializer");
      }
      defined_.insert({&graph, id});
      node.outputs.push_back(id);
    }
    for (const onnx::AttributeProto& attribute : proto.attribute) {
      const onnx::AttributeProto* source = &attribute;
      if (!attribute.ref_attr_name.empty()) {
        if (!env) {
          return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute '", attribute.name,
                            "' refers to '", attribute.ref_attr_name, "' outside a function");
        }
        const auto found = env->find(std::string(attribute.ref_attr_name));
        if (found == env->end()) continue;  // the caller did not set it: the attribute is absent
        source = found->second;
      }
      TRY_ASSIGN(graph::Attribute converted, convert_attribute(*source, node, opsets, graph_depth, scope));
      converted.name = std::string(attribute.name);
      node.attributes.push_back(std::move(converted));
    }
    add_implicit_inputs(node, graph);
    graph.nodes.push_back(std::move(node));
    return Status::ok();
  }

  // The outer-scope reads of the node's subgraphs, as values of `graph`.
  static void add_implicit_inputs(graph::Node& node, graph::Graph& graph) {
    for (const std::string& name : graph::subgraph_outer_reads(node)) {
      const int outer = graph.add_value(name);
      if (std::find(node.implicit_inputs.begin(), node.implicit_inputs.end(), outer) == node.implicit_inputs.end()) {
        node.implicit_inputs.push_back(outer);
      }
    }
  }

  Status expand_function(const onnx::NodeProto& call, const onnx::FunctionProto& function, const NameScope& scope,
                         const AttributeEnv* caller_env, int function_depth, int graph_depth, graph::Graph& graph) {
    if (function_depth >= graph::kMaxFunctionCallDepth) {
      return make_error(StatusCode::kInvalidArgument, "function '", function.name,
                        "' expands deeper than the limit of ", graph::kMaxFunctionCallDepth, " calls");
    }
    if (call.input.size() > function.input.size() || call.output.size() > function.output.size()) {
      return make_error(StatusCode::kInvalidGraph, call.op_type, " node '", call.name, "': calls function '",
                        function.name, "' with more inputs or outputs than it declares");
    }
    NameScope inner;
    inner.identity = false;
    inner.prefix = "_" + std::string(function.name) + "_" + std::to_string(expansion_counter_++) + "/";
    for (size_t i = 0; i < function.input.size(); ++i) {
      inner.names[std::string(function.input[i])] = i < call.input.size() ? scope.resolve(call.input[i]) : "";
    }
    for (size_t i = 0; i < function.output.size(); ++i) {
      inner.names[std::string(function.output[i])] = i < call.output.size() ? scope.resolve(call.output[i]) : "";
    }
    AttributeEnv env;
    for (const onnx::AttributeProto& with_default : function.attribute_proto) env[std::string(with_default.name)] = &with_default;
    for (const onnx::AttributeProto& given : call.attribute) {
      if (!given.ref_attr_name.empty() && caller_env) {
        const auto outer = caller_env->find(std::string(given.ref_attr_name));
        if (outer != caller_env->end()) env[std::string(given.name)] = outer->second;
        continue;
      }
      env[std::string(given.name)] = &given;
    }
    std::map<std::string, int64_t> opsets = graph.opsets;
    for (const onnx::OperatorSetIdProto& id : function.opset_import) opsets[normalize_domain(id.domain)] = id.version;
    for (const onnx::NodeProto& body_node : function.node) {
      TRY(emit_node(body_node, inner, &env, opsets, function_depth + 1, graph_depth, graph));
    }
    return Status::ok();
  }

  Expected<graph::Attribute> convert_attribute(const onnx::AttributeProto& proto, const graph::Node& node,
                                               const std::map<std::string, int64_t>& opsets, int graph_depth,
                                               const NameScope& scope) {
    using Type = graph::Attribute::Type;
    graph::Attribute attribute;
    const std::string what = node.describe() + " attribute '" + std::string(proto.name) + "'";
    switch (proto.type) {
      case onnx::AttributeProto::kFloat: attribute.type = Type::kFloat; attribute.f = proto.f; break;
      case onnx::AttributeProto::kInt: attribute.type = Type::kInt; attribute.i = proto.i; break;
      case onnx::AttributeProto::kString: attribute.type = Type::kString; attribute.s = std::string(proto.s); break;
      case onnx::AttributeProto::kFloats: attribute.type = Type::kFloats; attribute.floats = proto.floats; break;
      case onnx::AttributeProto::kInts: attribute.type = Type::kInts; attribute.ints = proto.ints; break;
      case onnx::AttributeProto::kStrings:
        attribute.type = Type::kStrings;
        for (std::string_view s : proto.strings) attribute.strings.emplace_back(s);
        break;
      case onnx::AttributeProto::kTensor: {
        if (!proto.t) return make_error(StatusCode::kInvalidProtobuf, what, ": TENSOR attribute without a tensor");
        attribute.type = Type::kTensor;
        TRY_ASSIGN(attribute.t, tensor_from_proto(*proto.t, bytes_, what, max_tensor_bytes_));
        break;
      }
      case onnx::AttributeProto::kTensors:
        attribute.type = Type::kTensors;
        for (const onnx::TensorProto& t : proto.tensors) {
          TRY_ASSIGN(Tensor tensor, tensor_from_proto(t, bytes_, what, max_tensor_bytes_));
          attribute.tensors.push_back(std::move(tensor));
        }
        break;
      case onnx::AttributeProto::kGraph: {
        if (!proto.g) return make_error(StatusCode::kInvalidProtobuf, what, ": GRAPH attribute without a graph");
        attribute.type = Type::kGraph;
        TRY_ASSIGN(attribute.g, import_subgraph(*proto.g, opsets, graph_depth, scope));
        break;
      }
      case onnx::AttributeProto::kGraphs:
        attribute.type = Type::kGraphs;
        for (const auto& g : proto.graphs) {
          if (!g) return make_error(StatusCode::kInvalidProtobuf, what, ": empty graph in GRAPHS");
          TRY_ASSIGN(auto sub, import_subgraph(*g, opsets, graph_depth, scope));
          attribute.graphs.push_back(std::move(sub));
        }
        break;
      case onnx::AttributeProto::kTypeProto: {
        if (!proto.tp) return make_error(StatusCode::kInvalidProtobuf, what, ": TYPE_PROTO attribute without a type");
        attribute.type = Type::kTypeProto;
        TRY_ASSIGN(graph::TypeInfo type, type_from_proto(*proto.tp, what));
        attribute.types.push_back(std::move(type));
        break;
      }
      case onnx::AttributeProto::kTypeProtos:
        attribute.type = Type::kTypeProtos;
        for (const onnx::TypeProto& tp : proto.type_protos) {
          TRY_ASSIGN(graph::TypeInfo type, type_from_proto(tp, what));
          attribute.types.push_back(std::move(type));
        }
        break;
      case onnx::AttributeProto::kSparseTensor: {  // made dense, as sparse initializers are
        if (!proto.sparse_tensor) return make_error(StatusCode::kInvalidGraph, what, ": sparse tensor missing");
        attribute.type = Type::kTensor;
        TRY_ASSIGN(attribute.t, dense_from_sparse_proto(*proto.sparse_tensor, bytes_, what, max_tensor_bytes_));
        break;
      }
      case onnx::AttributeProto::kSparseTensors:
        return make_error(StatusCode::kNotImplemented, what, ": lists of sparse tensor attributes are not supported");
      default:
        return make_error(StatusCode::kInvalidGraph, what, ": unknown attribute type ", proto.type);
    }
    return attribute;
  }

  Expected<std::shared_ptr<graph::Graph>> import_subgraph(const onnx::GraphProto& proto,
                                                          const std::map<std::string, int64_t>& opsets,
                                                          int graph_depth, const NameScope& scope) {
    auto sub = std::make_shared<graph::Graph>();
    TRY(import_graph(proto, opsets, &scope, graph_depth + 1, *sub, nullptr));
    return sub;
  }

  const std::shared_ptr<const onnx::ModelBytes>& bytes_;
  size_t max_tensor_bytes_ = 0;
  const std::map<std::string, Tensor>* supplied_ = nullptr;
  std::map<std::string, std::vector<std::string>> denotations_;
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> functions_;
  std::set<std::pair<const graph::Graph*, int>> defined_;
  int expansion_counter_ = 0;
};

}  // namespace

Expected<graph::TypeInfo> type_from_proto(const onnx::TypeProto& proto, const std::string& what) {
  using Kind = onnx::TypeProto::Kind;
  graph::TypeInfo type;
  switch (proto.kind) {
    case Kind::kTensor:
    case Kind::kSparseTensor: {
      const auto elem = data_type_from_int(proto.elem_type);
      if (!elem) return make_error(StatusCode::kInvalidProtobuf, what, ": invalid elem_type ", proto.elem_type);
      type.kind = proto.kind == Kind::kTensor ? graph::TypeInfo::Kind::kTensor : graph::TypeInfo::Kind::kSparseTensor;
      type.elem_type = *elem;
      if (proto.has_shape) {
        graph::SymbolicShape shape;
        for (const onnx::TensorShapeDim& dim : proto.shape) {
          if (dim.has_value && dim.dim_value >= 0) shape.push_back(graph::Dim::known(dim.dim_value));
          else if (!dim.dim_param.empty()) shape.push_back(graph::Dim::symbolic(std::string(dim.dim_param)));
          else shape.push_back(graph::Dim::unknown());
        }
        type.shape = std::move(shape);
      }
      return type;
    }
    case Kind::kSequence:
    case Kind::kOptional:
    case Kind::kMap: {
      type.kind = proto.kind == Kind::kSequence   ? graph::TypeInfo::Kind::kSequence
                  : proto.kind == Kind::kOptional ? graph::TypeInfo::Kind::kOptional
                                                  : graph::TypeInfo::Kind::kMap;
      if (proto.kind == Kind::kMap) {
        const auto key = data_type_from_int(proto.map_key_type);
        if (!key) return make_error(StatusCode::kInvalidProtobuf, what, ": invalid map key type ", proto.map_key_type);
        type.map_key_type = *key;
      }
      if (proto.element) {
        TRY_ASSIGN(graph::TypeInfo element, type_from_proto(*proto.element, what));
        type.element = std::make_shared<const graph::TypeInfo>(std::move(element));
      }
      return type;
    }
    case Kind::kUnset: break;
  }
  return type;
}

Expected<ImportedModel> import_model(const onnx::ModelProto& model, const std::shared_ptr<const onnx::ModelBytes>& bytes,
                                     const ImportOptions& options) {
  if (!model.graph) return make_error(StatusCode::kInvalidGraph, "model has no graph");
  std::map<std::string, int64_t> opsets;
  for (const onnx::OperatorSetIdProto& id : model.opset_import) opsets[normalize_domain(id.domain)] = id.version;
  if (opsets.empty() && model.ir_version < 3) opsets[""] = 1;
  const auto onnx_opset = opsets.find("");
  if (onnx_opset != opsets.end() && (onnx_opset->second < kMinOnnxOpset || onnx_opset->second > kMaxOnnxOpset)) {
    return make_error(StatusCode::kInvalidGraph, "ONNX opset ", onnx_opset->second, " is not supported (supported: ",
                      kMinOnnxOpset, " to ", kMaxOnnxOpset, ")");
  }
  TRY(onnx::check_function_expansion(model));
  ImportedModel imported;
  GraphImporter importer(model, bytes, options);
  TRY(importer.import_graph(*model.graph, opsets, nullptr, 0, imported.graph, &imported.overridable_initializers));
  TRY(importer.check_all_supplied_used(imported.graph));
  imported.input_dim_denotations = importer.take_denotations();
  return imported;
}

}  // namespace nxrt::import
