#include "session/partitioner.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "ep/copy_kernels.h"
#include "ep/cpu/cpu_provider.h"

namespace nxrt {

namespace {

using ProviderList = std::span<const std::shared_ptr<const ep::ExecutionProvider>>;
constexpr Device kHost{};

class Partitioner {
 public:
  Partitioner(graph::Graph& graph, ProviderList providers) : graph_(graph), providers_(providers) {}

  Status assign(bool disable_cpu_fallback) {
    std::vector<std::vector<bool>> takes;
    for (const auto& provider : providers_) takes.push_back(provider->capability(graph_));
    const ep::ExecutionProvider& cpu = provider_of(graph::Node{}, providers_);
    for (size_t n = 0; n < graph_.nodes.size(); ++n) {
      graph::Node& node = graph_.nodes[n];
      node.provider = std::string(cpu.name());
      for (size_t p = 0; p < providers_.size(); ++p) {
        if (takes[p][n]) {
          node.provider = std::string(providers_[p]->name());
          break;
        }
      }
      if (disable_cpu_fallback && providers_.size() > 1 && node.provider == cpu.name()) {
        const std::string domain = node.domain.empty() ? "ai.onnx" : node.domain;
        return make_error(StatusCode::kInvalidArgument, node.describe(), " (", domain, " opset ", node.opset,
                          ") can only run on ", cpu.name(),
                          " and CPU fallback is disabled (session.disable_cpu_ep_fallback)");
      }
    }
    return Status::ok();
  }

  void place_values() {
    where_.assign(graph_.values.size(), kHost);
    for (const graph::Node& node : graph_.nodes) {
      const ep::ExecutionProvider& provider = provider_of(node, providers_);
      const ep::KernelDef* row = provider.registry().find(node.domain, node.op_type, node.opset);
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        const bool host_output = row != nullptr && (row->host_outputs >> o & 1u) != 0;
        if (node.outputs[o] != graph::kNoValue && !host_output) where_[node.outputs[o]] = provider.device();
      }
    }
    for (int input : graph_.inputs) where_[input] = graph_input_home(graph_, input, providers_);
  }

  // A value produced on a device and read by a subgraph is read by name, so it must keep its name on the host: the
  // producer writes a new device value, and a CopyToHost writes the original one.
  void hoist_implicit_reads() {
    const size_t original_count = graph_.nodes.size();
    for (size_t n = 0; n < original_count; ++n) {
      const std::vector<int> implicit = graph_.nodes[n].implicit_inputs;
      for (int value : implicit) {
        if (where_[value] == kHost || graph_.values[value].producer == graph::kNoValue) continue;
        const Device device = where_[value];
        graph::Node& producer = graph_.nodes[graph_.values[value].producer];
        const int on_device = new_value(value, device);
        for (int& output : producer.outputs) {
          if (output == value) output = on_device;
        }
        where_[on_device] = device;
        add_copy(on_device, value, ep::kCopyToHost, provider_for(device));
        where_[value] = kHost;
        copies_[{value, key_of(device)}] = on_device;
        graph_.values[value].producer = graph::kNoValue;  // links are rebuilt by the final sort
      }
    }
  }

  void insert_copies() {
    const size_t original_count = graph_.nodes.size();
    for (size_t n = 0; n < original_count; ++n) {
      for (size_t slot = 0; slot < graph_.nodes[n].inputs.size(); ++slot) {
        const int value = graph_.nodes[n].inputs[slot];
        if (value == graph::kNoValue) continue;
        const Device needed = required_device(graph_.nodes[n], slot);
        if (where_[value] != needed) graph_.nodes[n].inputs[slot] = copy_of(value, needed);
      }
    }
  }

  const PartitionStats& stats() const { return stats_; }

 private:
  static std::pair<int, int> key_of(Device device) { return {static_cast<int>(device.type), device.id}; }

  Device required_device(const graph::Node& node, size_t slot) const { return input_device(node, slot, providers_); }

  const ep::ExecutionProvider& provider_for(Device device) const {
    for (const auto& provider : providers_) {
      if (provider->device() == device) return *provider;
    }
    return provider_of(graph::Node{}, providers_);
  }

  int new_value(int source, Device device) {
    std::string name = graph_.values[source].name + "/" + device_name(device);
    while (graph_.find_value(name) != graph::kNoValue) name += "'";
    const int id = graph_.add_value(name);
    graph_.values[id].type = graph_.values[source].type;
    where_.resize(graph_.values.size(), kHost);
    return id;
  }

  void add_copy(int from, int to, const char* op, const ep::ExecutionProvider& runner) {
    graph::Node copy;
    copy.name = std::string(op) + "/" + graph_.values[to].name;
    copy.op_type = op;
    copy.domain = ep::kCopyDomain;
    copy.opset = 1;
    copy.inputs = {from};
    copy.outputs = {to};
    copy.provider = std::string(runner.name());
    graph_.nodes.push_back(std::move(copy));
    if (op == std::string_view(ep::kCopyToHost)) ++stats_.copies_to_host;
    else ++stats_.copies_to_device;
  }

  // The value holding `value` on `target`, made by a copy node on first request.
  int copy_of(int value, Device target) {
    if (where_[value] == target) return value;
    const auto key = std::make_pair(value, key_of(target));
    if (const auto found = copies_.find(key); found != copies_.end()) return found->second;
    int copied = graph::kNoValue;
    if (where_[value] == kHost) {
      copied = new_value(value, target);
      add_copy(value, copied, ep::kCopyToDevice, provider_for(target));
    } else if (target == kHost) {
      copied = new_value(value, target);
      add_copy(value, copied, ep::kCopyToHost, provider_for(where_[value]));
    } else {
      copied = copy_of(copy_of(value, kHost), target);  // device to device: through the host
    }
    where_[copied] = target;
    copies_[key] = copied;
    return copied;
  }

  graph::Graph& graph_;
  ProviderList providers_;
  std::vector<Device> where_;  // per value: the device it lives on
  std::map<std::pair<int, std::pair<int, int>>, int> copies_;  // (value, target device) -> its copy
  PartitionStats stats_;
};

}  // namespace

Device input_device(const graph::Node& node, size_t slot, ProviderList providers) {
  const ep::ExecutionProvider& provider = provider_of(node, providers);
  if (ep::is_host(provider.device())) return kHost;
  const ep::KernelDef* row = provider.registry().find(node.domain, node.op_type, node.opset);
  return row != nullptr && (row->host_inputs >> slot & 1u) != 0 ? kHost : provider.device();
}

Device graph_input_home(const graph::Graph& graph, int input, ProviderList providers) {
  std::optional<Device> home;
  for (const graph::Node& node : graph.nodes) {
    for (int implicit : node.implicit_inputs) {
      if (implicit == input) return kHost;
    }
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (node.inputs[slot] != input) continue;
      const Device needed = input_device(node, slot, providers);
      if (home && *home != needed) return kHost;
      home = needed;
    }
  }
  return home.value_or(kHost);
}

const ep::ExecutionProvider& provider_of(const graph::Node& node, ProviderList providers) {
  const std::string_view wanted = node.provider.empty() ? cpu::kCpuProviderName : std::string_view(node.provider);
  for (const auto& provider : providers) {
    if (provider->name() == wanted) return *provider;
  }
  return *cpu::cpu_provider();
}

Expected<PartitionStats> partition(graph::Graph& graph, ProviderList providers, bool disable_cpu_fallback) {
  Partitioner partitioner(graph, providers);
  TRY(partitioner.assign(disable_cpu_fallback));
  if (providers.size() == 1) return PartitionStats{};  // the CPU alone: nothing crosses devices
  partitioner.place_values();
  partitioner.hoist_implicit_reads();
  partitioner.insert_copies();
  TRY(graph::topological_sort(graph));
  return partitioner.stats();
}

}  // namespace nxrt
