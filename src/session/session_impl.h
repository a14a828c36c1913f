// Internal state of a Session, shared by session.cpp (creation) and executor.cpp (runs).
#pragma once

#include <memory>
#include <vector>

#include "ep/cpu/kernel.h"
#include "onnx/model_proto.h"
#include "session/session.h"

namespace nxrt {

// A graph with one kernel per node and its liveness: the main graph of a session, or a subgraph that a
// control-flow kernel runs. The graph itself is owned elsewhere (the session, or the node attribute holding it).
struct CompiledGraph final : cpu::CompiledSubgraph {
  const graph::Graph* source = nullptr;
  std::vector<std::unique_ptr<cpu::Kernel>> kernels;  // one per node, same order
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
  CompiledGraph main;  // declared after `graph`, which its kernels reference
  std::shared_ptr<ThreadPool> pool;
};

class SessionImplBuilder {
 public:
  static Expected<std::unique_ptr<Session::Impl>> build(std::shared_ptr<const onnx::ModelBytes> bytes,
                                                        const SessionOptions& options);
  // Kernels and liveness of `graph` (subgraphs of control-flow nodes are compiled by their kernels).
  static Status compile(const graph::Graph& graph, CompiledGraph& compiled);
  static Expected<std::unique_ptr<cpu::Kernel>> create_kernel(const graph::Graph& graph, const graph::Node& node);
};

}  // namespace nxrt
