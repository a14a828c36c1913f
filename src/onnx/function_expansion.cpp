#include "onnx/function_expansion.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/model_limits.h"

namespace nxrt::onnx {

namespace {

using FunctionKey = std::pair<std::string_view, std::string_view>;  // normalized domain, name
// Attributes a body being expanded sees through ref_attr_name, by name.
using AttributeEnv = std::map<std::string_view, const AttributeProto*>;

std::string describe_node(const NodeProto& node) {
  return std::string(node.op_type) + " node '" + std::string(node.name) + "'";
}

// Mirrors the importer's expansion (import/importer.cpp) without building anything. Recursion depth is
// bounded by the call-depth and graph-nesting checks, which run before each recursive step, and the work by
// the inlined-node count, which every node inside a call increments.
class ExpansionWalk {
 public:
  explicit ExpansionWalk(const ModelProto& model) {
    for (const FunctionProto& function : model.functions) {
      functions_[{normalized_domain(function.domain), function.name}] = &function;
    }
  }

  Status walk_graph(const GraphProto& graph, int graph_level) {
    for (const NodeProto& node : graph.node) TRY(walk_node(node, nullptr, graph_level, graph.name));
    return Status::ok();
  }

 private:
  // `graph_name` is the graph the node lands in: for a body node, the graph its outermost call is in.
  Status walk_node(const NodeProto& node, const AttributeEnv* env, int graph_level, std::string_view graph_name) {
    if (!call_stack_.empty() && ++inlined_nodes_ > graph::kMaxInlinedNodes) {
      return make_error(StatusCode::kInvalidArgument, "inlining model-local functions emits more than ",
                        graph::kMaxInlinedNodes, " nodes (the limit) while expanding function '",
                        call_stack_.back()->name, "'", origin());
    }
    const auto function = functions_.find({normalized_domain(node.domain), node.op_type});
    if (function != functions_.end()) return walk_call(node, *function->second, env, graph_level, graph_name);
    for (const AttributeProto& attribute : node.attribute) {
      const AttributeProto* source = &attribute;
      if (!attribute.ref_attr_name.empty()) {
        if (!env) continue;
        const auto found = env->find(attribute.ref_attr_name);
        if (found == env->end()) continue;
        source = found->second;
      }
      if (source->type == AttributeProto::kGraph && source->g) {
        TRY(walk_subgraph(*source->g, node, graph_level + 1));
      } else if (source->type == AttributeProto::kGraphs) {
        for (const auto& subgraph : source->graphs) {
          if (subgraph) TRY(walk_subgraph(*subgraph, node, graph_level + 1));
        }
      }
    }
    return Status::ok();
  }

  // Nodes of a subgraph see no attribute references, as in the importer.
  Status walk_subgraph(const GraphProto& graph, const NodeProto& owner, int graph_level) {
    if (graph_level > graph::kMaxGraphNesting) {
      return make_error(StatusCode::kInvalidArgument, describe_node(owner), ": subgraph nesting level ",
                        graph_level, " exceeds the limit of ", graph::kMaxGraphNesting,
                        " once model-local functions are inlined", origin());
    }
    for (const NodeProto& node : graph.node) TRY(walk_node(node, nullptr, graph_level, graph.name));
    return Status::ok();
  }

  Status walk_call(const NodeProto& call, const FunctionProto& function, const AttributeEnv* caller_env,
                   int graph_level, std::string_view graph_name) {
    if (call_stack_.empty()) origin_ = {&call, graph_name};
    const auto active = std::find(call_stack_.begin(), call_stack_.end(), &function);
    if (active != call_stack_.end()) {
      std::string cycle;
      for (auto it = active; it != call_stack_.end(); ++it) cycle += std::string((*it)->name) + " -> ";
      return make_error(StatusCode::kInvalidArgument, "model-local function '", function.name,
                        "' calls itself: ", cycle, function.name, origin());
    }
    if (static_cast<int>(call_stack_.size()) >= graph::kMaxFunctionCallDepth) {
      return make_error(StatusCode::kInvalidArgument, "model-local function calls nest deeper than the limit of ",
                        graph::kMaxFunctionCallDepth, ": '", function.name, "' called from '",
                        call_stack_.back()->name, "' would be call ", call_stack_.size() + 1, origin());
    }
    AttributeEnv env;
    for (const AttributeProto& with_default : function.attribute_proto) env[with_default.name] = &with_default;
    for (const AttributeProto& given : call.attribute) {
      if (!given.ref_attr_name.empty() && caller_env) {
        const auto outer = caller_env->find(given.ref_attr_name);
        if (outer != caller_env->end()) env[given.name] = outer->second;
        continue;
      }
      env[given.name] = &given;
    }
    call_stack_.push_back(&function);
    for (const NodeProto& body_node : function.node) TRY(walk_node(body_node, &env, graph_level, graph_name));
    call_stack_.pop_back();
    return Status::ok();
  }

  std::string origin() const {
    if (!origin_.call) return {};
    return " (expanding " + describe_node(*origin_.call) + " of graph '" + std::string(origin_.graph) + "')";
  }

  struct Origin {
    const NodeProto* call = nullptr;
    std::string_view graph;
  };

  std::map<FunctionKey, const FunctionProto*> functions_;
  std::vector<const FunctionProto*> call_stack_;
  int64_t inlined_nodes_ = 0;
  Origin origin_;
};

}  // namespace

std::string_view normalized_domain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string_view() : domain;
}

Status check_function_expansion(const ModelProto& model) {
  if (model.functions.empty() || !model.graph) return Status::ok();
  ExpansionWalk walk(model);
  return walk.walk_graph(*model.graph, 0);
}

}  // namespace nxrt::onnx
