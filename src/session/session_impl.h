// Internal state of a Session, shared by session.cpp (creation) and executor.cpp (runs).
#pragma once

#include <memory>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/provider.h"
#include "onnx/model_proto.h"
#include "session/memory_plan.h"
#include "session/session.h"
#include "session/tensor_arena.h"

namespace nxrt {

using ProviderList = std::vector<std::shared_ptr<const ep::ExecutionProvider>>;

// A graph with one kernel per node and its liveness: the main graph of a session, or a subgraph that a
// control-flow kernel runs. The graph itself is owned elsewhere (the session, or the node attribute holding it).
struct CompiledGraph final : ep::CompiledSubgraph {
  const graph::Graph* source = nullptr;
  std::vector<std::unique_ptr<ep::Kernel>> kernels;  // one per node, same order
  std::vector<const ep::ExecutionProvider*> providers;  // one per node: the provider running it
  std::vector<ep::SlotMask> host_outputs;               // one per node: outputs its row writes in host memory
  std::vector<int> last_use;  // value -> index of the last node reading it (nodes.size() for graph outputs)
  std::vector<const Buffer*> persistent_buffers;  // initializers and Constant outputs (sorted)
  std::vector<int> initializer_ids;                // values with an initializer, set before every run

  const graph::Graph& graph() const override { return *source; }
};

struct Session::Impl {
  std::shared_ptr<const onnx::ModelBytes> bytes;  // initializers may point into it
  graph::Graph graph;
  std::vector<int> overridable_initializers;
  ModelMetadata metadata;
  std::vector<ValueDesc> inputs;
  std::vector<ValueDesc> outputs;
  ProviderList providers;  // SessionOptions::execution_providers, the CPU last; declared before the kernels
  std::vector<Device> input_homes;  // per graph input: the device the partitioner placed it on
  CompiledGraph main;  // declared after `graph`, which its kernels reference
  PlanRules plan_rules;  // of `main`
  // Shared with the run states leased from it, so that a PreparedRun destroyed after its session returns its
  // state safely (an idle run state holds no stream and no value).
  std::shared_ptr<RunStatePool> run_states = std::make_shared<RunStatePool>();
  std::shared_ptr<ThreadPool> pool;
  std::shared_ptr<TensorArena> arena = make_tensor_arena();  // every tensor a run allocates
  std::shared_ptr<NodeProfile> profile;  // set when SessionOptions::enable_profiling
  int64_t run_timeout_ms = 0;            // SessionOptions::run_timeout_ms
  size_t max_tensor_bytes = 0;           // SessionOptions::max_tensor_bytes
};

class SessionImplBuilder {
 public:
  static Expected<std::unique_ptr<Session::Impl>> build(std::shared_ptr<const onnx::ModelBytes> bytes,
                                                        const SessionOptions& options);
  // Kernels and liveness of `graph` (subgraphs of control-flow nodes are compiled by their kernels), each node's
  // kernel from the registry of the provider the partitioner gave it (the CPU for unassigned nodes).
  static Status compile(const graph::Graph& graph, const ProviderList& providers, CompiledGraph& compiled);
  static Expected<std::unique_ptr<ep::Kernel>> create_kernel(const graph::Graph& graph, const graph::Node& node,
                                                             const ep::ExecutionProvider& provider);
};

}  // namespace nxrt
