// Graph optimizer: named passes over graph::Graph, run in order and repeated until none changes the graph.
// Levels follow ONNX Runtime: 0 disables everything, 1 (basic) runs semantics-preserving clean-ups (constant
// folding, redundant-node removal, Conv folding), 2 (extended) and above add fusions into fused kernels
// (Gelu, LayerNormalization, FusedMatMul/FusedGemm/FusedConv, FusedElementwise), 3 (layout) and above convert
// CNN chains to the blocked-channel layout of the CPU EP. A fusion is applied only when
// the CPU kernel registry has a kernel for the fused op.
// Contract: the graph arrives topologically sorted with inferred types; it leaves sorted, with links rebuilt,
// graph inputs/outputs unchanged (same value names and types), and values read by subgraphs untouched.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "graph/graph.h"

namespace nxrt::optimizer {

inline constexpr int kLevelDisabled = 0;
inline constexpr int kLevelBasic = 1;
inline constexpr int kLevelExtended = 2;
inline constexpr int kLevelLayout = 3;

// The device-neutral passes (before partitioning): optimizes `graph` and, first, every subgraph held in its nodes'
// attributes. Subgraphs nested deeper than graph::kMaxGraphNesting are INVALID_ARGUMENT naming the node that holds
// them, checked before recursing.
Status optimize(graph::Graph& graph, int level);

// The CPU provider's passes (after partitioning): fusions into CPU kernels and the blocked-channel layout, applied
// to the nodes assigned to `owner` (and to unassigned ones, such as every node of a subgraph).
Status optimize_cpu_nodes(graph::Graph& graph, int level, std::string_view owner);

// Names of the passes `level` runs, in order: the device-neutral ones, then the CPU provider's.
std::vector<std::string> pass_names(int level);

}  // namespace nxrt::optimizer
