#include "session/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "ep/cpu/run_limits.h"
#include "session/session_impl.h"

#if NXRT_ADDRESS_SANITIZER
#include <sanitizer/asan_interface.h>
#define NXRT_POISON(address, size) ASAN_POISON_MEMORY_REGION(address, size)
#define NXRT_UNPOISON(address, size) ASAN_UNPOISON_MEMORY_REGION(address, size)
#else
#define NXRT_POISON(address, size) ((void)(address), (void)(size))
#define NXRT_UNPOISON(address, size) ((void)(address), (void)(size))
#endif

namespace nxrt {

namespace {

constexpr size_t kSlotAlignment = 64;

size_t aligned_bytes(size_t bytes) { return (bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment; }

}  // namespace

PlanRules make_plan_rules(const CompiledGraph& compiled, size_t max_tensor_bytes) {
  const graph::Graph& graph = compiled.graph();
  const size_t value_count = graph.values.size();
  PlanRules rules;
  std::vector<int>& root = rules.root;
  root.resize(value_count);
  std::iota(root.begin(), root.end(), 0);
  std::vector<uint8_t> candidate(value_count, 0);
  std::vector<uint8_t> escapes(value_count, 0);
  rules.first_node.assign(value_count, -1);
  // Nodes are in topological order, so the root of an input is final when its readers come.
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const graph::Node& node = graph.nodes[n];
    const ep::Kernel& kernel = *compiled.kernels[n];
    if (kernel.takes_values()) {
      for (int input : node.inputs) {
        if (input != graph::kNoValue) escapes[root[input]] = 1;
      }
      for (int input : node.implicit_inputs) escapes[root[input]] = 1;
      continue;
    }
    const int alias = kernel.alias_input();
    if (alias >= 0) {
      const bool has_input = static_cast<size_t>(alias) < node.inputs.size() && node.inputs[alias] != graph::kNoValue;
      if (!node.outputs.empty() && node.outputs[0] != graph::kNoValue && has_input) {
        root[node.outputs[0]] = root[node.inputs[alias]];
      }
      continue;
    }
    if (kernel.constant_output() != nullptr) continue;
    const bool host_provider = ep::is_host(compiled.providers[n]->device());
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const int id = node.outputs[o];
      if (id == graph::kNoValue) continue;
      rules.first_node[id] = static_cast<int>(n);
      candidate[id] = host_provider || (compiled.host_outputs[n] >> o & 1u) != 0;
    }
  }
  for (int output : graph.outputs) escapes[root[output]] = 1;

  rules.last_node = rules.first_node;
  for (size_t v = 0; v < value_count; ++v) {
    const int last = std::max(compiled.last_use[v], rules.first_node[v]);
    rules.last_node[root[v]] = std::max(rules.last_node[root[v]], last);
  }
  rules.plannable.assign(value_count, 0);
  for (size_t v = 0; v < value_count; ++v) {
    rules.plannable[v] = candidate[v] && !escapes[v] && root[v] == static_cast<int>(v);
  }
  rules.inferred_bytes.assign(value_count, 0);
  for (size_t v = 0; v < value_count; ++v) {
    const graph::TypeInfo& type = graph.values[v].type;
    if (!rules.plannable[v] || !type.is_tensor() || !type.shape || type.elem_type == DataType::kUndefined ||
        type.elem_type == DataType::kString) {
      continue;
    }
    const auto known = [](const graph::Dim& dim) { return dim.is_known(); };
    if (!std::all_of(type.shape->begin(), type.shape->end(), known)) continue;
    Shape dims;
    for (const graph::Dim& dim : *type.shape) dims.push_back(dim.value);
    const std::optional<size_t> bytes = cpu::tensor_storage_bytes(type.elem_type, dims);
    if (bytes && (max_tensor_bytes == 0 || *bytes <= max_tensor_bytes)) rules.inferred_bytes[v] = *bytes;
  }
  return rules;
}

Tensor PlannedMemory::take(int value, DataType dtype, const Shape& shape, size_t bytes) {
  if (bytes == 0) return Tensor();  // nothing to place: the arena serves it, and the layout stays as it is
  const auto index = static_cast<size_t>(value);
  if (index >= wanted_.size()) {
    wanted_.resize(index + 1, 0);
    grew_.resize(index + 1, 0);
  }
  wanted_[index] = std::max(wanted_[index], bytes);
  const bool has_slot = block_ != nullptr && index < offset_.size() && offset_[index] != kNoSlot;
  if (!has_slot || slot_bytes_[index] < bytes) {
    if (has_slot) grew_[index] = 1;
    stale_ = true;
    return Tensor();
  }
  NXRT_UNPOISON(static_cast<char*>(block_->data()) + offset_[index], bytes);
  return Tensor::in_buffer(block_, offset_[index], dtype, shape);
}

void PlannedMemory::seed(const PlanRules& rules) {
  wanted_ = rules.inferred_bytes;
  grew_.assign(wanted_.size(), 0);
  lay_out(rules);
}

void PlannedMemory::begin_run() {
  if (block_ != nullptr) NXRT_POISON(block_->data(), block_bytes_);
}

void PlannedMemory::died(int value) {
  const auto index = static_cast<size_t>(value);
  if (block_ == nullptr || index >= offset_.size() || offset_[index] == kNoSlot) return;
  NXRT_POISON(static_cast<char*>(block_->data()) + offset_[index], slot_bytes_[index]);
}

void PlannedMemory::finish_run(const PlanRules& rules) {
  if (stale_) {
    lay_out(rules);
    return;
  }
  // A tensor in the block outlived the run (held by a caller or a kernel): leave the block to it.
  if (block_ != nullptr && block_.use_count() > 1) {
    NXRT_UNPOISON(block_->data(), block_bytes_);
    block_.reset();
    lay_out(rules);
  }
}

void PlannedMemory::lay_out(const PlanRules& rules) {
  stale_ = false;
  if (block_ != nullptr) NXRT_UNPOISON(block_->data(), block_bytes_);  // the allocator may reuse the memory
  block_.reset();
  block_bytes_ = 0;
  offset_.assign(wanted_.size(), kNoSlot);
  slot_bytes_.assign(wanted_.size(), 0);
  std::vector<size_t> order;
  for (size_t v = 0; v < wanted_.size() && v < rules.plannable.size(); ++v) {
    if (wanted_[v] > 0 && rules.plannable[v]) order.push_back(v);
  }
  if (order.empty()) return;
  // Largest first; each value takes the lowest offset that no value alive at the same time (placed earlier)
  // covers.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return wanted_[a] > wanted_[b]; });
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of placed values alive with the current one
  for (size_t v : order) {
    const size_t size = aligned_bytes(grew_[v] ? wanted_[v] + wanted_[v] / 2 : wanted_[v]);
    busy.clear();
    for (size_t other : placed) {
      const bool overlap = rules.first_node[other] <= rules.last_node[v] && rules.first_node[v] <= rules.last_node[other];
      if (overlap) busy.emplace_back(offset_[other], offset_[other] + slot_bytes_[other]);
    }
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + size <= begin) break;
      offset = std::max(offset, end);
    }
    offset_[v] = offset;
    slot_bytes_[v] = size;
    block_bytes_ = std::max(block_bytes_, offset + size);
    placed.push_back(v);
  }
  Allocator& allocator = cpu_allocator();
  void* data = allocator.allocate(block_bytes_);
  if (data == nullptr) {  // no plan: the runs allocate from the session arena as before
    offset_.assign(wanted_.size(), kNoSlot);
    block_bytes_ = 0;
    return;
  }
  block_ = std::make_shared<Buffer>(data, block_bytes_, Device{}, &allocator);
}

std::unique_ptr<RunState> RunStatePool::acquire(const PlanRules& rules) {
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      std::unique_ptr<RunState> state = std::move(free_.back());
      free_.pop_back();
      return state;
    }
  }
  auto state = std::make_unique<RunState>();
  state->memory.seed(rules);
  return state;
}

size_t RunStatePool::largest_block_bytes() {
  std::lock_guard lock(mutex_);
  size_t largest = 0;
  for (const auto& state : free_) largest = std::max(largest, state->memory.block_bytes());
  return largest;
}

void RunStatePool::release(std::unique_ptr<RunState> state) {
  std::lock_guard lock(mutex_);
  free_.push_back(std::move(state));
}

}  // namespace nxrt
