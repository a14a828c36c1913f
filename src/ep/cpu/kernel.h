// CPU kernel lifecycle (see docs/architecture.md):
//   create(KernelInfo)  once per node at session creation: validate attributes, prepack constants.
//   reshape(inputs)     per run: output dtypes and shapes for these inputs (may read small CPU inputs such as
//                       Reshape's shape tensor); reports bad inputs as INVALID_ARGUMENT.
//   run(inputs, outputs) per run: outputs are already allocated with the reshaped descs; no allocation of
//                       outputs, no attribute parsing. Kernels never create threads: they use `pool`.
// Kernels are immutable after create, so one kernel serves concurrent runs.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/dispatch.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/value.h"
#include "core/thread_pool.h"
#include "graph/graph.h"

namespace nxrt::cpu {

// Absent optional inputs are nullptr.
using KernelInputs = std::span<const Tensor* const>;

// Input `index`, or nullptr when the node has fewer inputs or omitted it.
inline const Tensor* optional_input(KernelInputs inputs, size_t index) {
  return index < inputs.size() ? inputs[index] : nullptr;
}

// INVALID_ARGUMENT naming the first of inputs 0 .. count-1 that is absent.
inline Status require_inputs(KernelInputs inputs, size_t count, std::string_view description) {
  for (size_t i = 0; i < count; ++i) {
    if (optional_input(inputs, i) == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description, ": missing input ", i);
    }
  }
  return Status::ok();
}

struct OutputDesc {
  DataType dtype = DataType::kUndefined;
  Shape shape;
};

// A subgraph (If/Loop/Scan body) compiled by the session; control-flow kernels run it through RunContext.
class CompiledSubgraph {
 public:
  virtual ~CompiledSubgraph() = default;
  virtual const graph::Graph& graph() const = 0;
};

class SubgraphCompiler {
 public:
  virtual ~SubgraphCompiler() = default;
  virtual Expected<std::shared_ptr<const CompiledSubgraph>> compile(const graph::Graph& subgraph) const = 0;
};

struct KernelInfo {
  const graph::Node& node;
  std::vector<DataType> input_types;   // kUndefined when absent or not inferred
  std::vector<DataType> output_types;  // kUndefined when not inferred
  std::vector<const Tensor*> constant_inputs;  // non-null for initializer / constant inputs
  const graph::Graph* graph = nullptr;           // the graph holding `node` (names of implicit inputs)
  const SubgraphCompiler* subgraphs = nullptr;   // set by the session; null in kernel unit tests
  int opset() const { return node.opset; }
};

// What a value kernel may use while it runs: the pool and, for control flow, subgraph execution.
class RunContext {
 public:
  virtual ~RunContext() = default;
  virtual ThreadPool& pool() = 0;
  // Runs `subgraph` with its formal inputs bound to `inputs` (declaration order; fewer than declared is an
  // error) and its outer-scope reads bound to `outer` (in subgraph.outer_scope_inputs order). `outputs`
  // receives the subgraph's outputs in declaration order.
  virtual Status run_subgraph(const CompiledSubgraph& subgraph, std::span<const Value* const> inputs,
                              std::span<const Value* const> outer, std::vector<Value>& outputs) = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const = 0;
  virtual Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const = 0;
  // >= 0: output 0 is a view of that input with the reshaped shape, and run() is not called.
  virtual int alias_input() const { return -1; }
  // Non-null: output 0 is always this tensor (Constant); the session may share it instead of allocating.
  // run() also assigns it to outputs[0], so a session that ignores this still gets the shared buffer.
  virtual const Tensor* constant_output() const { return nullptr; }
  // True for value kernels (control flow, sequences, optionals): the session calls run_values instead of
  // reshape/run, with the node's inputs followed by its implicit (outer-scope) inputs; absent ones are null.
  virtual bool takes_values() const { return false; }
  virtual Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext& ctx) const;
};

// Base of value kernels: reshape/run are never called.
class ValueKernel : public Kernel {
 public:
  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const final;
  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const final;
  bool takes_values() const final { return true; }
};

using KernelCreateFn = Expected<std::unique_ptr<Kernel>> (*)(const KernelInfo& info);

// Bit i set: DataType with value i is supported.
using DataTypeMask = uint64_t;

template <class... Ts>
constexpr DataTypeMask type_mask(TypeList<Ts...>) {
  return ((DataTypeMask{1} << static_cast<int>(data_type_of<Ts>)) | ... | DataTypeMask{0});
}
inline constexpr DataTypeMask kAnyType = ~DataTypeMask{0};

// One row registers one op for an opset range. `type_input` names the input whose dtype the mask constrains
// (-1: no constraint, e.g. Constant).
struct KernelDef {
  std::string_view op_type;
  std::string_view domain;
  int since_opset;
  int last_opset;  // inclusive; use kLatestOpset for open ranges
  DataTypeMask types;
  int type_input;
  KernelCreateFn create;
};

inline constexpr int kLatestOpset = 1 << 20;

// Per-family tables, each defined at the bottom of its family file and listed once in registry.cpp.
std::span<const KernelDef> elementwise_kernels();
std::span<const KernelDef> matmul_kernels();
std::span<const KernelDef> fused_attention_kernels();
std::span<const KernelDef> conv_max_pool_kernels();
std::span<const KernelDef> nchwc_kernels();
std::span<const KernelDef> tensor_kernels();
std::span<const KernelDef> cast_kernels();
std::span<const KernelDef> unary_math_kernels();
std::span<const KernelDef> activation_kernels();
std::span<const KernelDef> binary_math_kernels();
std::span<const KernelDef> compare_kernels();
std::span<const KernelDef> reduce_kernels();
std::span<const KernelDef> softmax_kernels();
std::span<const KernelDef> shape_ops_kernels();
std::span<const KernelDef> concat_split_kernels();
std::span<const KernelDef> gather_scatter_kernels();
std::span<const KernelDef> einsum_kernels();
std::span<const KernelDef> slice_pad_kernels();
std::span<const KernelDef> layout_kernels();
std::span<const KernelDef> select_kernels();
std::span<const KernelDef> scatter_kernels();
std::span<const KernelDef> linalg_kernels();
std::span<const KernelDef> topk_kernels();
std::span<const KernelDef> conv_kernels();
std::span<const KernelDef> pool_kernels();
std::span<const KernelDef> norm_kernels();
std::span<const KernelDef> loss_kernels();
std::span<const KernelDef> training_kernels();
std::span<const KernelDef> resize_kernels();
std::span<const KernelDef> image_kernels();
std::span<const KernelDef> image_decoder_kernels();
std::span<const KernelDef> signal_kernels();
std::span<const KernelDef> attention_kernels();
std::span<const KernelDef> rnn_kernels();
std::span<const KernelDef> detection_kernels();
std::span<const KernelDef> quantize_kernels();
std::span<const KernelDef> random_kernels();
std::span<const KernelDef> string_kernels();
std::span<const KernelDef> ml_kernels();
std::span<const KernelDef> control_flow_kernels();
std::span<const KernelDef> sequence_kernels();
std::span<const KernelDef> fused_elementwise_kernels();

// Every registered row, in family order.
std::vector<const KernelDef*> all_kernels();

// The row for (domain, op_type) whose opset range contains `opset`; nullptr when none.
const KernelDef* find_kernel(std::string_view domain, std::string_view op_type, int opset);

// `kernel`, checking on every reshape / run_values that input `def.type_input` has a dtype the row registers
// (NOT_IMPLEMENTED naming the node and the dtype otherwise). For kernels created while that input's dtype was
// unknown (no inference rule upstream): their code may assume the registered dtypes.
std::unique_ptr<Kernel> with_input_type_check(const KernelDef& def, const graph::Node& node,
                                              std::unique_ptr<Kernel> kernel);

// "Could not find an implementation for Foo(13) node with name 'n'" style message with NOT_IMPLEMENTED.
Status missing_kernel_error(const graph::Node& node, std::string_view detail = {});

}  // namespace nxrt::cpu
