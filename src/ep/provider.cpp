#include "ep/provider.h"

namespace nxrt::ep {

std::vector<bool> ExecutionProvider::capability(const graph::Graph& graph) const {
  std::vector<bool> takes(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) takes[n] = registry().find_for(graph, graph.nodes[n]) != nullptr;
  return takes;
}

Status ExecutionProvider::optimize(graph::Graph&, int) const { return Status::ok(); }

std::unique_ptr<Stream> ExecutionProvider::create_stream() const { return nullptr; }

Status ExecutionProvider::run_started(Stream*) const { return Status::ok(); }

Status ExecutionProvider::run_finished(Stream* stream) const {
  return stream != nullptr ? stream->synchronize() : Status::ok();
}

}  // namespace nxrt::ep
