#include "session/memory_plan.h"

#include <algorithm>
#include <limits>
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

// Output 0 of a node takes over the slot of an input it declares in place when both are plannable, the input's
// storage (the value and its views) has no reader after the node, and no other value took that slot already.
void add_in_place_pairs(const CompiledGraph& compiled, PlanRules& rules) {
  const graph::Graph& graph = compiled.graph();
  rules.in_place_of.assign(graph.values.size(), -1);
  std::vector<uint8_t> taken_over(graph.values.size(), 0);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const graph::Node& node = graph.nodes[n];
    const ep::Kernel& kernel = *compiled.kernels[n];
    const ep::SlotMask candidates = kernel.takes_values() ? 0 : kernel.in_place_inputs();
    if (candidates == 0 || node.outputs.empty()) continue;
    const int output = node.outputs[0];
    if (output == graph::kNoValue || !rules.plannable[output]) continue;
    for (size_t i = 0; i < node.inputs.size() && i < 32; ++i) {
      const int input = node.inputs[i];
      if ((candidates >> i & 1u) == 0 || input == graph::kNoValue || input == output || !rules.plannable[input] ||
          rules.last_node[input] != static_cast<int>(n) || taken_over[input]) {
        continue;
      }
      rules.in_place_of[output] = input;
      rules.in_place_order.push_back(output);
      taken_over[input] = 1;
      break;
    }
  }
}

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
  add_in_place_pairs(compiled, rules);
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
  const int source = shares_[index];
  if (source >= 0 && taken_run_[source] == run_ && (taken_dtype_[source] != dtype || taken_bytes_[source] != bytes)) {
    refused_[index] = 1;  // e.g. an Add that broadcasts its in-place input to a larger output
    stale_ = true;
    return Tensor();
  }
  taken_run_[index] = run_;
  taken_dtype_[index] = dtype;
  taken_bytes_[index] = bytes;
  NXRT_UNPOISON(static_cast<char*>(block_->data()) + offset_[index], bytes);
  return Tensor::in_buffer(block_, offset_[index], dtype, shape);
}

void PlannedMemory::seed(const PlanRules& rules) {
  wanted_ = rules.inferred_bytes;
  grew_.assign(wanted_.size(), 0);
  lay_out(rules);
}

void PlannedMemory::begin_run() {
  ++run_;
  if (block_ != nullptr) NXRT_POISON(block_->data(), block_bytes_);
}

void PlannedMemory::died(int value) {
  const auto index = static_cast<size_t>(value);
  if (block_ == nullptr || index >= offset_.size() || offset_[index] == kNoSlot) return;
  const int successor = shared_by_[index];
  if (successor >= 0 && taken_run_[successor] == run_) return;  // its slot now holds the value written in place
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
  const size_t count = wanted_.size();
  offset_.assign(count, kNoSlot);
  slot_bytes_.assign(count, 0);
  shares_.assign(count, -1);
  shared_by_.assign(count, -1);
  refused_.resize(count, 0);
  taken_run_.assign(count, 0);
  taken_dtype_.assign(count, DataType::kUndefined);
  taken_bytes_.assign(count, 0);
  // A value written in place joins the slot group of its input: one slot, as large as its largest member, alive
  // from the first member's producer to the last member's last reader.
  std::vector<size_t> group(count);
  std::iota(group.begin(), group.end(), size_t{0});
  for (const int value : rules.in_place_order) {
    const auto v = static_cast<size_t>(value);
    const int input = rules.in_place_of[v];
    if (v >= count || static_cast<size_t>(input) >= count || refused_[v]) continue;
    shares_[v] = input;
    shared_by_[static_cast<size_t>(input)] = value;
    group[v] = group[static_cast<size_t>(input)];
  }
  std::vector<size_t> group_bytes(count, 0);
  std::vector<int> group_first(count, std::numeric_limits<int>::max()), group_last(count, -1);
  std::vector<size_t> order;  // group leaders with a member to place
  for (size_t v = 0; v < count && v < rules.plannable.size(); ++v) {
    if (wanted_[v] == 0 || !rules.plannable[v]) continue;
    const size_t g = group[v];
    const size_t bytes = aligned_bytes(grew_[v] ? wanted_[v] + wanted_[v] / 2 : wanted_[v]);
    if (group_bytes[g] == 0) order.push_back(g);
    group_bytes[g] = std::max(group_bytes[g], bytes);
    group_first[g] = std::min(group_first[g], rules.first_node[v]);
    group_last[g] = std::max(group_last[g], rules.last_node[v]);
  }
  if (order.empty()) return;
  // Largest first; each group takes the lowest offset that no group alive at the same time (placed earlier)
  // covers.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return group_bytes[a] > group_bytes[b]; });
  std::vector<size_t> group_offset(count, 0);
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of placed groups alive with the current one
  for (size_t g : order) {
    const size_t size = group_bytes[g];
    busy.clear();
    for (size_t other : placed) {
      if (group_first[other] <= group_last[g] && group_first[g] <= group_last[other]) {
        busy.emplace_back(group_offset[other], group_offset[other] + group_bytes[other]);
      }
    }
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + size <= begin) break;
      offset = std::max(offset, end);
    }
    group_offset[g] = offset;
    block_bytes_ = std::max(block_bytes_, offset + size);
    placed.push_back(g);
  }
  // Only the members the runs asked for get the slot: the group's lifetime covers exactly them.
  for (size_t v = 0; v < count && v < rules.plannable.size(); ++v) {
    if (wanted_[v] == 0 || !rules.plannable[v]) continue;
    offset_[v] = group_offset[group[v]];
    slot_bytes_[v] = group_bytes[group[v]];
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
