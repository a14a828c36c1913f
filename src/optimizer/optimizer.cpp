#include "optimizer/optimizer.h"

#include "optimizer/passes.h"

namespace nxrt::optimizer {

namespace {

struct Pass {
  const char* name;
  int level;
  Expected<bool> (*run)(graph::Graph& graph);
};

// Order matters: clean-ups first so fusions see the simplest graph; linear-op fusions before the elementwise
// fusion so Conv + Add + Relu becomes FusedConv rather than Conv + FusedElementwise.
constexpr Pass kPasses[] = {
    {"type_completion", kLevelBasic, complete_types},
    {"constant_folding", kLevelBasic, fold_constants},
    {"redundant_nodes", kLevelBasic, remove_redundant_nodes},
    {"conv_affine_folding", kLevelBasic, fold_conv_affine},
    {"gelu_fusion", kLevelExtended, fuse_gelu},
    {"layer_norm_fusion", kLevelExtended, fuse_layer_norm},
    {"linear_activation_fusion", kLevelExtended, fuse_linear_activations},
    {"elementwise_fusion", kLevelExtended, fuse_elementwise},
};

constexpr int kMaxRounds = 8;

}  // namespace

Status optimize(graph::Graph& graph, int level) {
  if (level <= kLevelDisabled) return Status::ok();
  for (graph::Node& node : graph.nodes) {
    for (graph::Attribute& attribute : node.attributes) {
      if (attribute.g) TRY(optimize(*attribute.g, level));
      for (auto& subgraph : attribute.graphs) TRY(optimize(*subgraph, level));
    }
  }
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    for (const Pass& pass : kPasses) {
      if (pass.level > level) continue;
      auto result = pass.run(graph);
      if (!result) return result.status().with_context(std::string("optimizer pass ") + pass.name + ": ");
      changed = changed || *result;
    }
    if (!changed) break;
  }
  return Status::ok();
}

std::vector<std::string> pass_names(int level) {
  std::vector<std::string> names;
  if (level <= kLevelDisabled) return names;
  for (const Pass& pass : kPasses) {
    if (pass.level <= level) names.emplace_back(pass.name);
  }
  return names;
}

}  // namespace nxrt::optimizer
