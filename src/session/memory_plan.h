// The memory plan of a session's main graph. The host tensors that its nodes produce and that nothing outside the
// run can see live in one block per run state, each at an offset chosen from the values' lifetimes (greedy by size,
// as TFLite and XNNPACK lay out their arenas), so that repeated runs with the same shapes allocate nothing for
// them. Sizes come from the runs themselves: a value that outgrows its slot is allocated from the session arena
// for that run and the block is laid out again after it, so a plan is never wrong, only stale for one run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/sanitizer.h"
#include "core/scratch_space.h"
#include "core/tensor.h"
#include "core/value.h"
#include "ep/kernel.h"
#include "ep/provider.h"

namespace nxrt {

struct CompiledGraph;

// Which values of a compiled main graph may live in the planned block, and for how long. Plannable: an output of a
// tensor kernel written in host memory (not a constant, not a view of an input), which is not a graph output, and
// whose storage (the value or a view of it) is read by no value kernel (a sequence or a subgraph may keep it past
// the run's last reader) and shown by no graph output. Computed once per session.
struct PlanRules {
  std::vector<uint8_t> plannable;  // per value
  std::vector<int> root;           // per value: the value whose storage it uses (itself, or the input it views)
  std::vector<int> first_node;     // per value: the node producing it
  std::vector<int> last_node;      // per value: the last node reading it or a view of it
  // Per value: its bytes when shape inference left it a static shape (0: unknown), so that a new run state can be
  // laid out before its first run. Sizes past max_tensor_bytes (when set) are left out: that run fails anyway.
  std::vector<size_t> inferred_bytes;
  // In-place pairs. Per value: the input whose slot it may take over (its producer lists that input in
  // Kernel::in_place_inputs, both are plannable, and the input's storage dies at the producer), or -1.
  std::vector<int> in_place_of;
  std::vector<int> in_place_order;  // the values with an in_place_of, in node order (chains resolve front to back)
};
PlanRules make_plan_rules(const CompiledGraph& compiled, size_t max_tensor_bytes);

// The planned block of one run state and the sizes the runs asked for. One run uses it at a time.
class PlannedMemory {
 public:
  // The slot of plannable `value` as a tensor when it holds `bytes`; an invalid tensor otherwise (the caller
  // allocates elsewhere, and finish_run lays the block out again for the larger size; not for 0 bytes, which
  // never get a slot). Never allocates once the plan covers the run. A value sharing the slot of its in-place
  // input takes it only when that input, if it lies there this run, has the same dtype and bytes; otherwise the
  // pair is split for good at the next layout.
  Tensor take(int value, DataType dtype, const Shape& shape, size_t bytes);
  // True when `tensor` lies in the block.
  bool holds(const Tensor& tensor) const { return block_ != nullptr && tensor.buffer() == block_; }
  // Under AddressSanitizer the block is poisoned when a run starts, a slot unpoisoned when taken and poisoned
  // again when its value dies (`died`: after the last reader of the value or a view of it), so that a read of a
  // dead planned value is reported as ASan reports a use after free. No-ops in other builds.
  static constexpr bool kPoisons = kAddressSanitizer;
  void begin_run();
  void died(int value);
  // Lays out a new state's block from the sizes shape inference gave (a run that asks for more lays it out again).
  void seed(const PlanRules& rules);
  // After a run whose values are all released: lays the block out again when a value did not fit its slot, and
  // replaces the block when a tensor in it is still referenced (the next run would overwrite it).
  void finish_run(const PlanRules& rules);
  size_t block_bytes() const { return block_bytes_; }
  // True when the next finish_run lays the block out again (a value outgrew its slot, or the first run).
  bool stale() const { return stale_; }

 private:
  static constexpr size_t kNoSlot = ~size_t{0};
  void lay_out(const PlanRules& rules);

  std::vector<size_t> wanted_;  // per value: the most bytes a run asked for (0: never asked)
  std::vector<size_t> offset_;  // per value: where its slot starts, or kNoSlot
  std::vector<size_t> slot_bytes_;
  // Per value: 1 once it outgrew a slot it had. Its next slots get 50% headroom, so a value that grows every run
  // (a sequence being decoded) lays the block out a logarithmic number of times, not on every run.
  std::vector<uint8_t> grew_;
  // In-place pairs of the current layout: per value, the input whose slot it shares (-1: none) and the value
  // sharing its slot (-1: none). A pair a run could not use is refused from then on.
  std::vector<int> shares_;
  std::vector<int> shared_by_;
  std::vector<uint8_t> refused_;
  // Per value: the run that last took its slot, with the dtype and bytes it took it for.
  std::vector<uint64_t> taken_run_;
  std::vector<DataType> taken_dtype_;
  std::vector<size_t> taken_bytes_;
  uint64_t run_ = 0;
  std::shared_ptr<Buffer> block_;
  size_t block_bytes_ = 0;
  bool stale_ = true;
};

// The executor's per-node scratch, kept so that a repeated run reuses the vectors' storage.
struct NodeScratch {
  std::vector<const Tensor*> tensor_inputs;
  std::vector<const Value*> value_inputs;
  std::vector<ep::OutputDesc> descs;
  std::vector<Tensor> tensor_outputs;
  std::vector<Value> value_outputs;
  std::vector<const void*> planned_data;  // per output of the current node: its planned slot, or null
};

// What one run of the main graph holds besides the session, kept between runs: a repeated run with the same shapes
// allocates nothing here.
struct RunState {
  std::vector<Value> values;  // per value of the main graph; every entry is reset when a run ends
  std::vector<int> wanted;    // the requested outputs (value ids)
  PlannedMemory memory;
  NodeScratch scratch;
  ScratchSpace kernel_scratch;  // the kernels' scratch on the thread calling the run (pool workers have their own)
  std::vector<std::pair<const ep::ExecutionProvider*, std::unique_ptr<ep::Stream>>> streams;
  std::vector<double> node_ms;
};

// Run states free for the next run; thread-safe. Concurrent runs each take their own.
class RunStatePool {
 public:
  // A free state, or a new one whose block is laid out from `rules` (see PlannedMemory::seed).
  std::unique_ptr<RunState> acquire(const PlanRules& rules);
  void release(std::unique_ptr<RunState> state);
  // The largest planned block among the free states.
  size_t largest_block_bytes();

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<RunState>> free_;
};

}  // namespace nxrt
