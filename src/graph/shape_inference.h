// Type and shape inference over a graph for the ops the runtime implements. Symbolic dims propagate
// ("B" stays "B" through elementwise ops, MatMul, Gemm, Transpose, Reshape with a constant shape).
// Ops without a rule keep whatever value_info declared. Inconsistent known dims are INVALID_GRAPH.
#pragma once

#include "core/status.h"
#include "graph/graph.h"

namespace nxrt::graph {

// Infers every subgraph first; a graph nested deeper than kMaxGraphNesting (model_limits.h) is
// INVALID_ARGUMENT naming the node that holds it, before any recursion past the bound.
Status infer_shapes(Graph& graph);

// The rule of infer_shapes for one node (not its subgraphs): merges what it infers into the output values.
Status infer_node_types(Graph& graph, const Node& node);

// Constant value of a value: its initializer, or the `value` tensor of the Constant node producing it.
const Tensor* constant_value(const Graph& graph, int value);

}  // namespace nxrt::graph
