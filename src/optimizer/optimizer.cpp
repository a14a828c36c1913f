#include "optimizer/optimizer.h"

#include "graph/model_limits.h"
#include "graph/shape_inference.h"
#include "optimizer/passes.h"

namespace nxrt::optimizer {

Expected<bool> complete_types(graph::Graph& graph) {
  for (const graph::Node& node : graph.nodes) TRY(graph::infer_node_types(graph, node, graph::InferenceMode::kFillOnly));
  return false;
}

namespace {

struct Pass {
  const char* name;
  int level;
  Expected<bool> (*run)(graph::Graph& graph);
};

struct CpuPass {
  const char* name;
  int level;
  Expected<bool> (*run)(graph::Graph& graph, std::string_view owner);
};

// Order matters: clean-ups first so fusions see the simplest graph.
constexpr Pass kPasses[] = {
    {"type_completion", kLevelBasic, complete_types},
    {"constant_folding", kLevelBasic, fold_constants},
    {"redundant_nodes", kLevelBasic, [](graph::Graph& graph) { return remove_redundant_nodes(graph, {}); }},
    {"conv_affine_folding", kLevelBasic, fold_conv_affine},
    {"gelu_fusion", kLevelExtended, fuse_gelu},
    {"layer_norm_fusion", kLevelExtended, fuse_layer_norm},
};

// Linear-op fusions before the elementwise fusion so Conv + Add + Relu becomes FusedConv rather than
// Conv + FusedElementwise; the layout pass after them (it converts FusedConv) and before the conv + pool fusion
// (which it supersedes where it applies).
constexpr CpuPass kCpuPasses[] = {
    {"linear_activation_fusion", kLevelExtended, fuse_linear_activations},
    {"nchwc_layout", kLevelLayout, convert_to_nchwc},
    {"conv_max_pool_fusion", kLevelExtended, fuse_conv_max_pool},
    {"attention_fusion", kLevelExtended, fuse_attention},
    {"elementwise_fusion", kLevelExtended, fuse_elementwise},
    {"redundant_nodes", kLevelBasic, remove_redundant_nodes},  // drops what the fusions left unread
};

// Which passes optimize_at runs: the device-neutral ones (optimize) or the CPU provider's (optimize_cpu_nodes).
struct Stage {
  std::string_view owner;
  bool cpu = false;
};

constexpr int kMaxRounds = 8;

struct Arity {
  const char* op;
  size_t min_inputs;  // these leading inputs must be present (not omitted)
  size_t max_inputs;
};

constexpr size_t kAny = static_cast<size_t>(-1);

// The ai.onnx ops the passes pattern-match, with the input counts their schemas allow. The passes index inputs
// and outputs of these ops without further checks, so a graph that breaks these counts is left to kernel creation,
// which reports the bad node by name.
constexpr Arity kMatchedOps[] = {
    {"Abs", 1, 1}, {"Add", 2, 2}, {"AveragePool", 1, 1}, {"BatchNormalization", 5, 5}, {"Cast", 1, 1},
    {"Ceil", 1, 1}, {"Celu", 1, 1}, {"Clip", 1, 3}, {"Conv", 2, 3}, {"Cos", 1, 1}, {"Div", 2, 2},
    {"Dropout", 1, 3}, {"Elu", 1, 1}, {"Erf", 1, 1}, {"Exp", 1, 1}, {"Expand", 2, 2}, {"Flatten", 1, 1},
    {"Floor", 1, 1}, {"Gelu", 1, 1}, {"Gemm", 2, 3}, {"GlobalAveragePool", 1, 1}, {"GlobalMaxPool", 1, 1},
    {"HardSigmoid", 1, 1}, {"HardSwish", 1, 1}, {"Identity", 1, 1}, {"LayerNormalization", 2, 3},
    {"LeakyRelu", 1, 1}, {"Log", 1, 1}, {"LogSoftmax", 1, 1}, {"MatMul", 2, 2}, {"Max", 1, kAny},
    {"MaxPool", 1, 1}, {"Min", 1, kAny}, {"Mish", 1, 1}, {"Mul", 2, 2}, {"Neg", 1, 1}, {"Pow", 2, 2},
    {"Reciprocal", 1, 1}, {"ReduceMean", 1, 2}, {"Relu", 1, 1}, {"Reshape", 2, 2}, {"Round", 1, 1},
    {"Selu", 1, 1}, {"Shape", 1, 1}, {"Sigmoid", 1, 1}, {"Sign", 1, 1}, {"Sin", 1, 1}, {"Size", 1, 1},
    {"Slice", 1, 5}, {"Softmax", 1, 1}, {"Softplus", 1, 1}, {"Softsign", 1, 1}, {"Sqrt", 1, 1},
    {"Squeeze", 1, 2}, {"Sub", 2, 2}, {"Tanh", 1, 1}, {"Transpose", 1, 1}, {"Unsqueeze", 1, 2},
};

bool arity_fits(const graph::Node& node) {
  if (!node.domain.empty() && node.domain != "ai.onnx") return true;
  if (node.outputs.empty() || node.outputs[0] == graph::kNoValue) return false;
  for (const Arity& arity : kMatchedOps) {
    if (node.op_type != arity.op) continue;
    if (node.inputs.size() < arity.min_inputs || node.inputs.size() > arity.max_inputs) return false;
    for (size_t i = 0; i < arity.min_inputs; ++i) {
      if (node.inputs[i] == graph::kNoValue) return false;
    }
    return true;
  }
  return true;
}

// `graph_level` counts as graph::kMaxGraphNesting does; checked before recursing into a node's subgraphs.
Status optimize_at(graph::Graph& graph, int level, int graph_level, const Stage& stage) {
  if (!stage.cpu) import_outer_constants(graph);
  for (graph::Node& node : graph.nodes) {
    for (graph::Attribute& attribute : node.attributes) {
      if (!attribute.g && attribute.graphs.empty()) continue;
      if (graph_level >= graph::kMaxGraphNesting) {
        return make_error(StatusCode::kInvalidArgument, "optimizer: ", node.describe(), " of graph '", graph.name,
                          "': subgraph nesting level ", graph_level + 1, " exceeds the limit of ",
                          graph::kMaxGraphNesting);
      }
      if (attribute.g) TRY(optimize_at(*attribute.g, level, graph_level + 1, stage));
      for (auto& subgraph : attribute.graphs) TRY(optimize_at(*subgraph, level, graph_level + 1, stage));
    }
  }
  for (const graph::Node& node : graph.nodes) {
    if (!arity_fits(node)) return Status::ok();  // malformed: left unoptimized for kernel creation to reject
  }
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    const auto run = [&](const char* name, Expected<bool> result) -> Status {
      if (!result) return result.status().with_context(std::string("optimizer pass ") + name + ": ");
      changed = changed || *result;
      return Status::ok();
    };
    if (stage.cpu) {
      for (const CpuPass& pass : kCpuPasses) {
        if (pass.level <= level) TRY(run(pass.name, pass.run(graph, stage.owner)));
      }
    } else {
      for (const Pass& pass : kPasses) {
        if (pass.level <= level) TRY(run(pass.name, pass.run(graph)));
      }
    }
    if (!changed) break;
  }
  return Status::ok();
}

}  // namespace

Status optimize(graph::Graph& graph, int level) {
  if (level <= kLevelDisabled) return Status::ok();
  return optimize_at(graph, level, 0, Stage{});
}

Status optimize_cpu_nodes(graph::Graph& graph, int level, std::string_view owner) {
  if (level <= kLevelDisabled) return Status::ok();
  return optimize_at(graph, level, 0, Stage{owner, true});
}

std::vector<std::string> pass_names(int level) {
  std::vector<std::string> names;
  if (level <= kLevelDisabled) return names;
  for (const Pass& pass : kPasses) {
    if (pass.level <= level) names.emplace_back(pass.name);
  }
  for (const CpuPass& pass : kCpuPasses) {
    if (pass.level <= level) names.emplace_back(pass.name);
  }
  return names;
}

}  // namespace nxrt::optimizer
