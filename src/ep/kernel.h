// The device-neutral kernel contract every execution provider's kernels implement (see docs/architecture.md):
//   create(KernelInfo)   once per node at session creation: validate attributes, prepack constants.
//   reshape(inputs)      per run: output dtypes and shapes for these inputs (may read the inputs the row declares
//                        host inputs, such as Reshape's shape tensor); reports bad inputs as INVALID_ARGUMENT.
//   execute(context)     per run: outputs are already allocated with the reshaped descs, on the provider's device
//                        (on the host for the outputs the row declares host outputs). No allocation of outputs, no
//                        attribute parsing. Kernels never create threads: they use the context's pool.
// Kernels are immutable after create, so one kernel serves concurrent runs.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/dispatch.h"
#include "core/mapped_pages.h"
#include "core/scratch_space.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/thread_pool.h"
#include "core/value.h"
#include "graph/graph.h"

namespace nxrt::ep {

class ExecutionProvider;
class Stream;

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
  std::vector<const Tensor*> constant_inputs;  // non-null for initializer / constant inputs (host memory)
  const graph::Graph* graph = nullptr;           // the graph holding `node` (names of implicit inputs)
  const SubgraphCompiler* subgraphs = nullptr;   // set by the session; null in kernel unit tests
  const ExecutionProvider* provider = nullptr;   // the provider the node is assigned to; null in kernel unit tests
  int opset() const { return node.opset; }
  // For a create function that has copied constant input i into its own (packed) form and will not read the
  // input at run: the resident pages of a file-mapped initializer under it go back to the system (see
  // core/mapped_pages.h; read from the file again if anything else touches them).
  void release_constant_pages(size_t i) const {
    if (i < constant_inputs.size() && constant_inputs[i] != nullptr) {
      release_mapped_pages(constant_inputs[i]->raw_data(), constant_inputs[i]->storage_bytes());
    }
  }
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

// A set of input (or output) slots: bit i is slot i.
using SlotMask = uint32_t;

// What a tensor kernel gets for one execution.
struct KernelContext {
  KernelInputs inputs;
  std::span<Tensor> outputs;
  ThreadPool& pool;
  Stream* stream = nullptr;  // the provider's stream of this run; null for providers that run synchronously
  // The host scratch of the run on the calling thread (core/scratch_space.h), owned by the run state; CPU kernels
  // reach the same space through scratch_buffer(). Null outside a session (kernel unit tests).
  ScratchSpace* scratch = nullptr;
  // The provider's device allocator, for temporaries a device kernel needs beyond its outputs. Null outside a
  // session.
  Allocator* allocator = nullptr;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const = 0;
  // The entry the executor calls. Its default is the host form below, which CPU kernels implement.
  virtual Status execute(KernelContext& context) const { return run(context.inputs, context.outputs, context.pool); }
  // Host form of execute (CPU kernels): no stream. The default fails, for kernels that override execute instead.
  virtual Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const;
  // >= 0: output 0 is a view of that input with the reshaped shape, and run() is not called.
  virtual int alias_input() const { return -1; }
  // >= 0: output `output` may be given the very buffer of that input (IO binding of one cache as both past and
  // present, when no other node reads the input): the kernel then keeps what the input holds and writes only its
  // new elements into it.
  virtual int updates_input_in_place(size_t output) const { return -1; }
  // Inputs whose storage output 0 may take over when they have its dtype and element count and nothing reads
  // them after this node (the memory plan gives both one slot): the kernel reads each element of such an input
  // only before it writes the output element at the same index, and reads no other element of it afterwards.
  virtual SlotMask in_place_inputs() const { return 0; }
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

// host_inputs / host_outputs below: bit i set means input (or output) i is read (written) in host memory whatever
// device the provider runs on.
// One row registers one op for an opset range. `type_input` names the input whose dtype the mask constrains
// (-1: no constraint, e.g. Constant). `host_inputs` / `host_outputs` matter only to providers with device memory:
// the partitioner keeps those inputs on the host and the executor allocates those outputs there.
struct KernelDef {
  std::string_view op_type;
  std::string_view domain;
  int since_opset;
  int last_opset;  // inclusive; use kLatestOpset for open ranges
  DataTypeMask types;
  int type_input;
  KernelCreateFn create;
  SlotMask host_inputs = 0;
  SlotMask host_outputs = 0;
};

inline constexpr int kLatestOpset = 1 << 20;

// True when `def` registers the dtype of input def.type_input (or does not constrain it, or it is unknown).
bool accepts_input_type(const KernelDef& def, DataType type);

// `kernel`, checking on every reshape / run_values that input `def.type_input` has a dtype the row registers
// (NOT_IMPLEMENTED naming the node and the dtype otherwise). For kernels created while that input's dtype was
// unknown (no inference rule upstream): their code may assume the registered dtypes.
std::unique_ptr<Kernel> with_input_type_check(const KernelDef& def, const graph::Node& node,
                                              std::unique_ptr<Kernel> kernel);

// "Could not find an implementation for Foo(13) node with name 'n'" style message with NOT_IMPLEMENTED.
Status missing_kernel_error(const graph::Node& node, std::string_view detail = {});

}  // namespace nxrt::ep
