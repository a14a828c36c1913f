// Scan: runs the body once per slice of the scan inputs, carrying state values, and stacks the per-iteration
// scan outputs. Opset 8 has a leading batch axis on every input and output and scans axis 1 of the inputs;
// from opset 9 there is no batch axis and each scan input and output has its own axis and direction.
#include <algorithm>
#include <cstring>
#include <string>

#include "ep/cpu/tensor/axis_copy.h"
#include "ep/cpu/control/control_flow.h"
#include "ep/cpu/tensor/data_movement.h"

namespace nxrt::cpu {

namespace {

class ScanKernel final : public ValueKernel {
 public:
  static Expected<std::unique_ptr<Kernel>> create(const KernelInfo& info) {
    auto kernel = std::make_unique<ScanKernel>();
    ScanKernel& k = *kernel;
    const graph::Node& node = info.node;
    TRY_ASSIGN(k.body_, bind_subgraph(info, "body"));
    TRY_ASSIGN(int64_t scan_inputs, node.attr_int("num_scan_inputs", -1));
    k.batched_ = info.opset() < 9;
    k.explicit_count_ = node.inputs.size();
    const size_t leading = k.batched_ ? 1 : 0;
    if (scan_inputs < 1 || static_cast<size_t>(scan_inputs) + leading > node.inputs.size()) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": num_scan_inputs ", scan_inputs,
                        " does not fit its ", node.inputs.size(), " inputs");
    }
    k.scan_inputs_ = static_cast<size_t>(scan_inputs);
    k.states_ = node.inputs.size() - leading - k.scan_inputs_;
    const graph::Graph& body = k.body_.graph();
    if (body.inputs.size() != k.states_ + k.scan_inputs_ || body.outputs.size() < k.states_) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": body has ", body.inputs.size(), " inputs and ",
                        body.outputs.size(), " outputs for ", k.states_, " states and ", k.scan_inputs_,
                        " scan inputs");
    }
    k.scan_outputs_ = body.outputs.size() - k.states_;
    const auto list = [&](const char* name, size_t count, int64_t fallback) -> Expected<std::vector<int64_t>> {
      TRY_ASSIGN(std::vector<int64_t> values, node.attr_ints(name, std::vector<int64_t>(count, fallback)));
      if (values.size() != count) {
        return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute '", name, "' has ", values.size(),
                          " entries, expected ", count);
      }
      return values;
    };
    if (k.batched_) {
      TRY_ASSIGN(k.input_directions_, list("directions", k.scan_inputs_, 0));
      k.input_axes_.assign(k.scan_inputs_, 0);
      k.output_directions_.assign(k.scan_outputs_, 0);
      k.output_axes_.assign(k.scan_outputs_, 0);
    } else {
      TRY_ASSIGN(k.input_directions_, list("scan_input_directions", k.scan_inputs_, 0));
      TRY_ASSIGN(k.input_axes_, list("scan_input_axes", k.scan_inputs_, 0));
      TRY_ASSIGN(k.output_directions_, list("scan_output_directions", k.scan_outputs_, 0));
      TRY_ASSIGN(k.output_axes_, list("scan_output_axes", k.scan_outputs_, 0));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext& ctx) const override {
    const size_t leading = batched_ ? 1 : 0;
    std::vector<Value> states;
    for (size_t i = 0; i < states_; ++i) {
      if (!inputs[leading + i]) return make_error(StatusCode::kInvalidArgument, "Scan state ", i, " is missing");
      states.push_back(*inputs[leading + i]);
    }
    std::vector<Tensor> scanned;
    for (size_t j = 0; j < scan_inputs_; ++j) {
      const Value* input = inputs[leading + states_ + j];
      if (!input || !input->is_tensor()) {
        return make_error(StatusCode::kInvalidArgument, "Scan input ", j, " must be a tensor");
      }
      scanned.push_back(input->tensor());
    }
    const std::vector<const Value*> outer = body_.outer_values(inputs, explicit_count_);
    if (!batched_) return scan_once(ctx, outer, states, scanned, outputs);
    const Tensor* sequence_lens = nullptr;
    if (inputs[0]) {
      if (!inputs[0]->is_tensor() || inputs[0]->tensor().dtype() != DataType::kInt64) {
        return make_error(StatusCode::kInvalidArgument, "Scan (opset 8) sequence_lens must be an int64 tensor");
      }
      sequence_lens = &inputs[0]->tensor();
    }
    return scan_batches(ctx, outer, states, scanned, sequence_lens, outputs);
  }

 private:
  // One scan over `scanned` (no batch axis); writes final states then stacked scan outputs.
  Status scan_once(RunContext& ctx, const std::vector<const Value*>& outer, std::vector<Value>& states,
                   const std::vector<Tensor>& scanned, std::span<Value> outputs) const {
    std::vector<int64_t> axes(scan_inputs_);
    int64_t length = -1;
    for (size_t j = 0; j < scan_inputs_; ++j) {
      TRY_ASSIGN(axes[j], normalize_axis(input_axes_[j], static_cast<int64_t>(scanned[j].rank()), "Scan",
                                         "scan_input_axes entry"));
      const int64_t dim = scanned[j].shape()[axes[j]];
      if (length >= 0 && dim != length) {
        return make_error(StatusCode::kInvalidArgument, "Scan input ", j, " has ", dim,
                          " elements along its scan axis; input 0 has ", length);
      }
      length = dim;
    }
    std::vector<Value> feeds(states_ + scan_inputs_);
    std::vector<const Value*> feed_ptrs;
    for (const Value& feed : feeds) feed_ptrs.push_back(&feed);
    for (size_t i = 0; i < states_; ++i) feeds[i] = std::move(states[i]);
    std::vector<std::vector<Tensor>> stacks(scan_outputs_);
    std::vector<size_t> stack_bytes(scan_outputs_, 0);
    std::vector<Value> results;
    for (int64_t t = 0; t < length; ++t) {
      for (size_t j = 0; j < scan_inputs_; ++j) {
        const int64_t at = input_directions_[j] ? length - 1 - t : t;
        TRY_ASSIGN(Tensor slice, slice_along_axis(scanned[j], axes[j], at, 1, false, "Scan input"));
        feeds[states_ + j] = std::move(slice);
      }
      TRY(ctx.run_subgraph(*body_.compiled, feed_ptrs, outer, results));
      for (size_t i = 0; i < states_; ++i) feeds[i] = std::move(results[i]);
      for (size_t k = 0; k < scan_outputs_; ++k) {
        if (!results[states_ + k].is_tensor()) {
          return make_error(StatusCode::kInvalidArgument, "Scan output ", k, " must be a tensor");
        }
        TRY(push_scan_slice(stacks[k], stack_bytes[k], results[states_ + k].tensor(), "Scan output", k));
      }
    }
    for (size_t i = 0; i < states_ && i < outputs.size(); ++i) outputs[i] = std::move(feeds[i]);
    for (size_t k = 0; k < scan_outputs_ && states_ + k < outputs.size(); ++k) {
      std::vector<Tensor>& stack = stacks[k];
      if (stack.empty()) {
        TRY_ASSIGN(Tensor empty, empty_stack_of(body_.graph(), static_cast<int>(states_ + k), output_axes_[k]));
        outputs[states_ + k] = std::move(empty);
        continue;
      }
      if (output_directions_[k]) std::reverse(stack.begin(), stack.end());
      TRY_ASSIGN(int64_t axis, normalize_axis(output_axes_[k], static_cast<int64_t>(stack[0].rank()), "Scan",
                                              "scan_output_axes entry", 1));
      TRY_ASSIGN(Tensor joined, join_along_axis(stack, axis, true, "Scan output " + std::to_string(k)));
      outputs[states_ + k] = std::move(joined);
    }
    return Status::ok();
  }

  // The first `length` entries of batch entry `b` of an opset-8 scan input (the whole entry at full length).
  static Expected<Tensor> batch_entry(const Tensor& input, int64_t b, int64_t length) {
    TRY_ASSIGN(Tensor entry, slice_along_axis(input, 0, b, 1, false, "Scan input"));
    if (entry.rank() < 1 || entry.shape()[0] == length) return entry;
    return slice_along_axis(entry, 0, 0, length, true, "Scan input");
  }

  // `stacked` ([length, ...]) extended with zeros (empty strings) to [max_length, ...].
  static Expected<Tensor> padded_to(const Tensor& stacked, int64_t max_length) {
    if (stacked.rank() < 1 || stacked.shape()[0] >= max_length) return stacked;
    Shape padding_shape = stacked.shape();
    padding_shape[0] = max_length - stacked.shape()[0];
    TRY_ASSIGN(Tensor padding, Tensor::allocate(stacked.dtype(), padding_shape));
    if (padding.dtype() != DataType::kString) std::memset(padding.raw_data(), 0, padding.storage_bytes());
    const Tensor parts[] = {stacked, padding};
    return join_along_axis(parts, 0, false, "Scan output");
  }

  // Opset 8: every state and scan input has a leading batch axis; each batch entry scans its own axis 0, over its
  // first sequence_lens[b] entries where sequence_lens is given (each in [1, the scan inputs' length]); the scan
  // outputs of a shorter entry are padded with zeros to that length.
  Status scan_batches(RunContext& ctx, const std::vector<const Value*>& outer, const std::vector<Value>& states,
                      const std::vector<Tensor>& scanned, const Tensor* sequence_lens,
                      std::span<Value> outputs) const {
    int64_t batch = -1;
    const auto check_batch = [&](const Tensor& tensor, const char* what) -> Status {
      if (tensor.rank() < 1 || (batch >= 0 && tensor.shape()[0] != batch)) {
        return make_error(StatusCode::kInvalidArgument, "Scan (opset 8) ", what, " of shape ",
                          shape_to_string(tensor.shape()), " does not have the batch size ", batch);
      }
      batch = tensor.shape()[0];
      return Status::ok();
    };
    for (const Value& state : states) {
      if (!state.is_tensor()) return make_error(StatusCode::kInvalidArgument, "Scan (opset 8) states must be tensors");
      TRY(check_batch(state.tensor(), "state"));
    }
    for (const Tensor& input : scanned) TRY(check_batch(input, "scan input"));
    const int64_t max_length = !scanned.empty() && scanned[0].rank() >= 2 ? scanned[0].shape()[1] : 0;
    if (sequence_lens && (sequence_lens->rank() != 1 || sequence_lens->shape()[0] != batch)) {
      return make_error(StatusCode::kInvalidArgument, "Scan (opset 8) sequence_lens of shape ",
                        shape_to_string(sequence_lens->shape()), " must be [batch size ", batch, "]");
    }
    for (int64_t b = 0; sequence_lens && b < batch; ++b) {
      const int64_t length = sequence_lens->data<int64_t>()[b];
      if (length < 1 || length > max_length) {
        return make_error(StatusCode::kInvalidArgument, "Scan (opset 8) sequence_lens[", b, "] = ", length,
                          " is outside [1, ", max_length, "], the scan inputs' length");
      }
    }
    std::vector<std::vector<Tensor>> per_batch(outputs.size());
    std::vector<Value> batch_outputs(outputs.size());
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Value> batch_states;
      for (const Value& state : states) {
        TRY_ASSIGN(Tensor slice, slice_along_axis(state.tensor(), 0, b, 1, false, "Scan state"));
        batch_states.emplace_back(std::move(slice));
      }
      const int64_t length = sequence_lens ? sequence_lens->data<int64_t>()[b] : max_length;
      std::vector<Tensor> batch_scanned;
      for (const Tensor& input : scanned) {
        TRY_ASSIGN(Tensor entry, batch_entry(input, b, length));
        batch_scanned.push_back(std::move(entry));
      }
      TRY(scan_once(ctx, outer, batch_states, batch_scanned, batch_outputs));
      for (size_t o = 0; o < outputs.size(); ++o) {
        if (!batch_outputs[o].is_tensor()) return make_error(StatusCode::kInvalidArgument, "Scan output must be a tensor");
        if (o < states_) {
          per_batch[o].push_back(batch_outputs[o].tensor());
          continue;
        }
        TRY_ASSIGN(Tensor padded, padded_to(batch_outputs[o].tensor(), max_length));
        per_batch[o].push_back(std::move(padded));
      }
    }
    if (batch <= 0) return make_error(StatusCode::kInvalidArgument, "Scan (opset 8) needs a non-empty batch");
    for (size_t o = 0; o < outputs.size(); ++o) {
      TRY_ASSIGN(Tensor joined, join_along_axis(per_batch[o], 0, true, "Scan output"));
      outputs[o] = std::move(joined);
    }
    return Status::ok();
  }

  BoundSubgraph body_;
  bool batched_ = false;
  size_t explicit_count_ = 0, states_ = 0, scan_inputs_ = 0, scan_outputs_ = 0;
  std::vector<int64_t> input_directions_, input_axes_, output_directions_, output_axes_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_scan_kernel(const KernelInfo& info) { return ScanKernel::create(info); }

}  // namespace nxrt::cpu
