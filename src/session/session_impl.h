// Internal state of a Session, shared by session.cpp (creation) and executor.cpp (runs).
#pragma once

#include <memory>
#include <vector>

#include "ep/cpu/kernel.h"
#include "onnx/model_proto.h"
#include "session/session.h"

namespace nxrt {

struct Session::Impl {
  std::shared_ptr<const onnx::ModelBytes> bytes;  // initializers may point into it
  graph::Graph graph;
  std::vector<int> overridable_initializers;
  ModelMetadata metadata;
  std::vector<ValueDesc> inputs;
  std::vector<ValueDesc> outputs;
  std::vector<std::unique_ptr<cpu::Kernel>> kernels;  // one per node, same order
  std::vector<int> last_use;  // value -> index of the last node reading it (nodes.size() for graph outputs)
  std::shared_ptr<ThreadPool> pool;
  std::vector<const Buffer*> persistent_buffers;  // initializers and Constant outputs (sorted): shared by every run
};

class SessionImplBuilder {
 public:
  static Expected<std::unique_ptr<Session::Impl>> build(std::shared_ptr<const onnx::ModelBytes> bytes,
                                                        const SessionOptions& options);
  static Expected<std::unique_ptr<cpu::Kernel>> create_kernel(const graph::Graph& graph, const graph::Node& node);
};

}  // namespace nxrt
