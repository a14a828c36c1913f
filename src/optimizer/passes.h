// The optimizer passes. Each takes a topologically sorted graph with inferred types, rewrites it, leaves it
// sorted with links rebuilt, and returns whether it changed anything.
#pragma once

#include <string_view>

#include "core/status.h"
#include "graph/graph.h"

namespace nxrt::optimizer {

// Level 1 (basic).
// Reruns shape inference's rules (graph/shape_rules.h) in fill-only mode over the rewritten graph, so types that
// earlier passes made inferable (a folded Reshape shape, a fused node's inputs) are known to later passes. Never
// reports a change.
Expected<bool> complete_types(graph::Graph& graph);
// Evaluates deterministic nodes whose inputs are all constants with their CPU kernel; their outputs become
// initializers. Shape/Size of statically shaped values fold too.
Expected<bool> fold_constants(graph::Graph& graph);
// Before the passes above run in a subgraph: a value the subgraph reads from `graph` that is a constant there
// (initializer or Constant node) becomes an initializer of the subgraph (sharing the buffer), so folding and
// fusions inside it see the constant; the holding nodes' implicit inputs drop it. Not a pass of its own: the
// optimizer calls it on each graph before it descends into that graph's subgraphs.
bool import_outer_constants(graph::Graph& graph);
// Bypasses Identity, inference Dropout, same-type Cast, Reshape of Reshape, Transpose of Transpose,
// Squeeze/Unsqueeze pairs and same-shape Expand; removes nodes whose outputs nothing reads.
// `owner`: see Rewriter (empty before partitioning; the CPU stage runs it again on its own nodes).
Expected<bool> remove_redundant_nodes(graph::Graph& graph, std::string_view owner);
// Folds BatchNormalization, per-channel Mul and per-channel Add following a Conv into its W and B.
Expected<bool> fold_conv_affine(graph::Graph& graph);

// Level 2 (extended).
// Device-neutral: they write standard ONNX ops (or com.microsoft ones when registered) and run before partitioning.
// Erf and Tanh forms of Gelu -> Gelu (opset 20) or com.microsoft Gelu / FastGelu when registered.
Expected<bool> fuse_gelu(graph::Graph& graph);
// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add over the last axis -> LayerNormalization.
Expected<bool> fuse_layer_norm(graph::Graph& graph);
// CPU provider passes (run after partitioning, on the nodes assigned to `owner`; see Rewriter).
// MatMul + bias [+ act] -> com.nxrt:FusedMatMul, Gemm + act -> com.microsoft:FusedGemm,
// Conv [+ Add] + act -> com.microsoft:FusedConv.
Expected<bool> fuse_linear_activations(graph::Graph& graph, std::string_view owner);
// Conv / FusedConv (f32, W const, group 1, no Z, not one FusedConv runs with Winograd) whose only reader is a
// MaxPool 3x3 stride 2 (pads 0 or 1) -> com.nxrt:FusedConvMaxPool.
Expected<bool> fuse_conv_max_pool(graph::Graph& graph, std::string_view owner);
// MatMul(Q, Kt) [* or / scalar] [+ mask] -> Softmax(last axis) -> MatMul(., V) -> com.nxrt:FusedAttention (f32).
Expected<bool> fuse_attention(graph::Graph& graph, std::string_view owner);
// Connected groups of same-shape float/double elementwise ops -> com.nxrt:FusedElementwise.
Expected<bool> fuse_elementwise(graph::Graph& graph, std::string_view owner);

// Level 3 (layout).
// f32 Conv / FusedConv chains with their MaxPool, GlobalAveragePool, Add and Relu -> the blocked-channel
// com.nxrt:Nchwc* ops (ep/cpu/conv/nchwc.h), on CPUs with AVX-512F; see nchwc_layout.cpp.
Expected<bool> convert_to_nchwc(graph::Graph& graph, std::string_view owner);

}  // namespace nxrt::optimizer
