// Execution provider: one device's memory, data transfer, kernels and graph passes (docs/architecture.md).
// The session holds an ordered list of providers; the partitioner gives each node to the first provider whose
// capability takes it, inserts copies where a value crosses devices, and each provider then rewrites its own
// nodes. Providers are shared by the sessions that use them and are immutable after creation (thread-safe).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ep/kernel_registry.h"
#include "graph/graph.h"

namespace nxrt::ep {

// An ordered queue of a provider's device work for one run. Work enqueued on it completes in order; the host
// sees its results after synchronize().
class Stream {
 public:
  virtual ~Stream() = default;
  virtual Device device() const = 0;
  // Blocks the calling thread until every piece of work enqueued so far has completed.
  virtual Status synchronize() = 0;
};

class ExecutionProvider {
 public:
  virtual ~ExecutionProvider() = default;

  virtual std::string_view name() const = 0;  // ONNX Runtime's spelling: "CPUExecutionProvider"
  virtual Device device() const = 0;          // where its kernels read and write tensors
  virtual Allocator& allocator() const = 0;   // that device's memory (host memory for the CPU)
  // Copies `source` into `target`: same dtype and element count, each on the host or on this provider's device.
  // Work is ordered on `stream` when given; a copy whose target is on the host has completed when this returns.
  virtual Status copy(const Tensor& source, const Tensor& target, Stream* stream) const = 0;
  virtual const KernelRegistry& registry() const = 0;

  // One flag per node of `graph`: the nodes this provider runs. Default: a registry row matches the op, opset
  // and, where inference knows it, the dtype.
  virtual std::vector<bool> capability(const graph::Graph& graph) const;
  // Rewrites the nodes assigned to this provider (Node::provider == name()) after partitioning: fusions and
  // layout changes only its kernels run. `level` is SessionOptions::graph_optimization_level.
  virtual Status optimize(graph::Graph& graph, int level) const;
  // The stream a run uses on this provider; null: its kernels complete before they return (the CPU).
  virtual std::unique_ptr<Stream> create_stream() const;
  // Called once per session run, before its first node and after its last one (before outputs are read).
  virtual Status run_started(Stream* stream) const;
  virtual Status run_finished(Stream* stream) const;
};

// True for devices whose memory the host may read directly.
inline bool is_host(Device device) { return device.type == DeviceType::kCpu; }

}  // namespace nxrt::ep
