// PreparedRun: one run set up once and repeated, as ONNX Runtime's IoBinding with RunWithBinding, but keeping
// everything between runs: input and output names resolved, feeds checked, output buffers bound, and a run state
// leased from the session's pool for its lifetime (values, the planned block, the executor's scratch).
// Session::run_bound is one PreparedRun run once. A repeated run() with the same shapes, every
// output bound to a tensor of its shape, allocates nothing on the heap beyond what the model's kernels allocate
// (tests/python/test_allocation_counts.py counts it for the bench models).
// One run() at a time per PreparedRun; the session keeps serving other runs meanwhile and must outlive every run()
// (a PreparedRun may be destroyed after it).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "session/session.h"

namespace nxrt {

class LeasedRunState;

class PreparedRun {
 public:
  // `bound_outputs`: one entry per requested output (empty `output_names`: every graph output); an invalid
  // tensor leaves that output to be allocated by each run, on allocate_on[i] (empty: the host). INVALID_ARGUMENT
  // for counts that do not match, then for the feeds and names as Session::run reports them.
  static Expected<std::unique_ptr<PreparedRun>> create(const Session& session,
                                                       std::span<const std::string> input_names,
                                                       std::span<const Tensor> inputs,
                                                       std::span<const std::string> output_names,
                                                       std::span<const Tensor> bound_outputs,
                                                       std::span<const Device> allocate_on = {});
  ~PreparedRun();
  PreparedRun(const PreparedRun&) = delete;
  PreparedRun& operator=(const PreparedRun&) = delete;

  // Feeds `tensor` to input `index` (in create's order) from the next run on, checked as create checks feeds.
  Status set_input(size_t index, const Tensor& tensor);
  Status run(const RunOptions& run_options = {});
  // After a successful run(): output i is its bound tensor, or the tensor the run allocated for it.
  const std::vector<Tensor>& outputs() const { return outputs_; }
  // After a successful run(): true when output i was written straight into its bound tensor (no copy).
  bool written_in_place(size_t index) const { return written_in_place_[index] != 0; }

 private:
  explicit PreparedRun(const Session::Impl& impl);
  // Which bound outputs their producing nodes write in place (see io_binding.h), for the current feeds.
  void bind_in_place();

  const Session::Impl& impl_;
  std::vector<int> input_ids_;
  std::vector<Value> feeds_;
  std::vector<Tensor> feed_tensors_;
  std::vector<std::string> output_names_;
  std::vector<Tensor> bound_;                  // per requested output (invalid: unbound)
  std::vector<const Tensor*> bound_by_value_;  // per value of the main graph: the buffer its producer may write
  std::vector<Device> output_devices_;
  std::unique_ptr<LeasedRunState> state_;
  std::vector<Value> results_;
  std::vector<Tensor> outputs_;
  std::vector<uint8_t> written_in_place_;
};

}  // namespace nxrt
