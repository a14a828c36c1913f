// Type and shape inference over a graph, with the one rule set of graph/shape_rules.h (also what the optimizer
// fills types with). Symbolic dims propagate ("B" stays "B" through elementwise ops, MatMul, Gemm, Transpose,
// Reshape with a constant shape, Conv and pools on batch dims, Concat and Slice off the sliced axes).
// Ops without a rule keep whatever value_info declared. Inconsistent known dims are INVALID_GRAPH.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "graph/graph.h"

namespace nxrt::graph {

// Infers every subgraph first; a graph nested deeper than kMaxGraphNesting (model_limits.h) is
// INVALID_ARGUMENT naming the node that holds it, before any recursion past the bound.
Status infer_shapes(Graph& graph);

// kStrict: contradicting known dims are INVALID_GRAPH (session creation). kFillOnly: a node whose rule finds a
// contradiction, or infers another element type than the declared one, keeps its outputs' types as they are, and
// the kernel reports the problem when it runs (the optimizer, which rewrites graphs that already passed kStrict).
enum class InferenceMode { kStrict, kFillOnly };

// The rule of infer_shapes for one node (not its subgraphs, rules in shape_rules.cpp): merges what it infers into
// the output values.
Status infer_node_types(Graph& graph, const Node& node, InferenceMode mode = InferenceMode::kStrict);

// Constant value of a value: its initializer, or the `value` tensor of the Constant node producing it.
const Tensor* constant_value(const Graph& graph, int value);

// Names of the values that `node`'s subgraphs read from the graph holding `node` (their outer_scope_inputs), in
// attribute order, each once: what the node's implicit_inputs are.
std::vector<std::string> subgraph_outer_reads(const Node& node);

}  // namespace nxrt::graph
