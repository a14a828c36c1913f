// Shared by the value kernels that run subgraphs (If, Loop, Scan, SequenceMap).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

// A compiled subgraph attribute and where its outer-scope reads sit among the node's implicit inputs.
struct BoundSubgraph {
  std::shared_ptr<const CompiledSubgraph> compiled;
  std::vector<size_t> outer_slots;  // per outer_scope_inputs entry: index into node.implicit_inputs

  const graph::Graph& graph() const { return compiled->graph(); }
  // The outer-scope values, given the value kernel's inputs (explicit inputs first, then implicit ones).
  std::vector<const Value*> outer_values(std::span<const Value* const> inputs, size_t explicit_count) const;
};

// Compiles the graph attribute `name` of info.node; INVALID_GRAPH when it is missing.
Expected<BoundSubgraph> bind_subgraph(const KernelInfo& info, const char* name);

// A tensor of the subgraph's declared element type and shape with a leading 0 dimension (unknown dims become 0):
// the stacked output of a loop that ran no iteration.
Expected<Tensor> empty_stack_of(const graph::Graph& subgraph, int output_index, int64_t axis);

// Appends one iteration's scan output to `stack`, whose elements hold `stack_bytes` bytes (updated). Fails with
// INVALID_ARGUMENT naming `what` once the stack would exceed the run's max_tensor_bytes, so that a loop with a
// huge trip count cannot hold unbounded memory until its end.
Status push_scan_slice(std::vector<Tensor>& stack, size_t& stack_bytes, const Tensor& slice, const char* what, size_t k);

// Scan (opset 8 with a batch axis and sequence_lens; opset 9+ with per-input axes and directions).
Expected<std::unique_ptr<Kernel>> create_scan_kernel(const KernelInfo& info);

}  // namespace nxrt::cpu
