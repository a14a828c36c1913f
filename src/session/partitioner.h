// Partitioning: which execution provider runs each node of a session's main graph, and the copies between them.
//
// Contract of partition():
// - Each node goes to the first provider in `providers` whose capability takes it; a node none takes goes to the
//   CPU provider (the last resort, always in the list), whose kernel creation then reports it. With
//   `disable_cpu_fallback` (ONNX Runtime's session config key "session.disable_cpu_ep_fallback"), a node left to
//   the CPU while other providers were requested is INVALID_ARGUMENT naming the node.
// - Every value lives on one device: initializers, outer-scope values and sequences on the host; a node's outputs
//   on its provider's device (host outputs of its kernel row on the host); a graph input on the device all its
//   readers need, else on the host (the executor moves each feed there, so a feed already on that device is used
//   without a copy). Graph outputs stay where they are produced; the executor returns them where the caller asks.
// - A node input that lives elsewhere than the node's kernel reads it (its provider's device; the host for host
//   inputs of its row and for implicit reads of subgraphs) is read through a copy node: com.nxrt CopyToDevice or
//   CopyToHost, run by the device's provider. One copy per value and target device, shared by every reader.
// - Subgraphs (If/Loop/Scan bodies) are not partitioned: they run on the CPU.
#pragma once

#include <memory>
#include <span>

#include "core/status.h"
#include "ep/provider.h"
#include "graph/graph.h"

namespace nxrt {

struct PartitionStats {
  int copies_to_device = 0;
  int copies_to_host = 0;
};

Expected<PartitionStats> partition(graph::Graph& graph,
                                   std::span<const std::shared_ptr<const ep::ExecutionProvider>> providers,
                                   bool disable_cpu_fallback);

// The device on which `node` reads input `slot`: its provider's device, or the host for the CPU and for the host
// inputs of its kernel row.
Device input_device(const graph::Node& node, size_t slot,
                    std::span<const std::shared_ptr<const ep::ExecutionProvider>> providers);
// The device of graph input `input` after partitioning: the one device all its readers read it on, else the host.
Device graph_input_home(const graph::Graph& graph, int input,
                        std::span<const std::shared_ptr<const ep::ExecutionProvider>> providers);

// The provider in `providers` named node.provider; the CPU provider for unassigned nodes (subgraphs).
const ep::ExecutionProvider& provider_of(const graph::Node& node,
                                         std::span<const std::shared_ptr<const ep::ExecutionProvider>> providers);

}  // namespace nxrt
