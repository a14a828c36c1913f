#include "graph/shape_inference.h"

#include <algorithm>

#include "graph/model_limits.h"
#include "graph/shape_rules.h"

namespace nxrt::graph {

namespace {

// A declared (value_info) type wins where inference knows less, e.g. an unknown dim.
void merge_inferred(TypeInfo& declared, const TypeInfo& inferred) {
  if (inferred.kind == TypeInfo::Kind::kUnknown) return;
  if (declared.kind == TypeInfo::Kind::kUnknown || !declared.shape) {
    const auto kept_shape = declared.shape;
    declared = inferred;
    if (!declared.shape && kept_shape) declared.shape = kept_shape;
    return;
  }
  if (inferred.shape && inferred.shape->size() == declared.shape->size()) {
    for (size_t i = 0; i < inferred.shape->size(); ++i) {
      if (!(*declared.shape)[i].is_known() && (*inferred.shape)[i].is_known()) (*declared.shape)[i] = (*inferred.shape)[i];
    }
  }
}

}  // namespace

const Tensor* constant_value(const Graph& graph, int value) {
  if (value == kNoValue) return nullptr;
  const Value& v = graph.values[value];
  if (v.initializer && !v.is_graph_input) return &*v.initializer;
  if (v.producer == kNoValue) return nullptr;
  const Node& producer = graph.nodes[v.producer];
  if (producer.op_type != "Constant" || !producer.domain.empty()) return nullptr;
  const Attribute* attribute = producer.find_attribute("value");
  return attribute && attribute->type == Attribute::Type::kTensor ? &attribute->t : nullptr;
}

std::vector<std::string> subgraph_outer_reads(const Node& node) {
  std::vector<std::string> names;
  const auto add_reads_of = [&](const Graph& sub) {
    for (int id : sub.outer_scope_inputs) {
      const std::string& name = sub.values[id].name;
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  };
  for (const Attribute& attribute : node.attributes) {
    if (attribute.g) add_reads_of(*attribute.g);
    for (const auto& sub : attribute.graphs) add_reads_of(*sub);
  }
  return names;
}

Status infer_node_types(Graph& graph, const Node& node, InferenceMode mode) {
  if (node.outputs.empty()) return Status::ok();
  const ShapeRule rule = find_shape_rule(node.domain, node.op_type);
  if (!rule) return Status::ok();
  ShapeRuleContext ctx{graph, node, {}, std::vector<TypeInfo>(node.outputs.size())};
  for (int input : node.inputs) ctx.inputs.push_back(input == kNoValue ? nullptr : &graph.values[input].type);
  const Status status = rule(ctx);
  if (!status.is_ok()) return mode == InferenceMode::kStrict ? status : Status::ok();
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) continue;
    TypeInfo& declared = graph.values[node.outputs[i]].type;
    const bool type_conflict = declared.is_tensor() && ctx.outputs[i].is_tensor() &&
                               declared.elem_type != DataType::kUndefined &&
                               declared.elem_type != ctx.outputs[i].elem_type;
    if (mode == InferenceMode::kFillOnly && type_conflict) continue;
    merge_inferred(declared, ctx.outputs[i]);
  }
  return Status::ok();
}

namespace {

// `graph_level` counts as graph::kMaxGraphNesting does; checked before recursing into a node's subgraphs.
Status infer_shapes_at(Graph& graph, int graph_level) {
  for (Node& node : graph.nodes) {
    for (Attribute& attribute : node.attributes) {
      if (!attribute.g && attribute.graphs.empty()) continue;
      if (graph_level >= kMaxGraphNesting) {
        return make_error(StatusCode::kInvalidArgument, "shape inference: ", node.describe(), " of graph '",
                          graph.name, "': subgraph nesting level ", graph_level + 1, " exceeds the limit of ",
                          kMaxGraphNesting);
      }
      if (attribute.g) TRY(infer_shapes_at(*attribute.g, graph_level + 1));
      for (auto& sub : attribute.graphs) TRY(infer_shapes_at(*sub, graph_level + 1));
    }
    TRY(infer_node_types(graph, node));
  }
  return Status::ok();
}

}  // namespace

Status infer_shapes(Graph& graph) { return infer_shapes_at(graph, 0); }

}  // namespace nxrt::graph
