#include "session/prepared_run.h"

#include "session/executor.h"
#include "session/io_binding.h"
#include "session/session_impl.h"

namespace nxrt {

PreparedRun::PreparedRun(const Session::Impl& impl) : impl_(impl), state_(std::make_unique<LeasedRunState>(impl)) {}

PreparedRun::~PreparedRun() = default;

Expected<std::unique_ptr<PreparedRun>> PreparedRun::create(const Session& session,
                                                           std::span<const std::string> input_names,
                                                           std::span<const Tensor> inputs,
                                                           std::span<const std::string> output_names,
                                                           std::span<const Tensor> bound_outputs,
                                                           std::span<const Device> allocate_on) {
  const Session::Impl& impl = *session.impl_;
  const graph::Graph& graph = impl.graph;
  const size_t wanted_count = output_names.empty() ? graph.outputs.size() : output_names.size();
  if (bound_outputs.size() != wanted_count) {
    return make_error(StatusCode::kInvalidArgument, "got ", bound_outputs.size(), " bound outputs for ", wanted_count,
                      " requested outputs");
  }
  if (!allocate_on.empty() && allocate_on.size() != wanted_count) {
    return make_error(StatusCode::kInvalidArgument, "got ", allocate_on.size(), " output devices for ", wanted_count,
                      " requested outputs");
  }
  std::unique_ptr<PreparedRun> prepared(new PreparedRun(impl));
  PreparedRun& run = *prepared;
  RunState& state = **run.state_;
  run.feeds_.assign(inputs.begin(), inputs.end());
  TRY(bind_feeds(impl, input_names, run.feeds_, state, &run.input_ids_));
  TRY(bind_outputs(impl, output_names, state));
  run.feed_tensors_.assign(inputs.begin(), inputs.end());
  for (int id : state.wanted) run.output_names_.push_back(graph.values[id].name);
  run.bound_.assign(bound_outputs.begin(), bound_outputs.end());
  run.output_devices_.assign(wanted_count, Device{});
  for (size_t i = 0; i < wanted_count; ++i) {
    if (run.bound_[i].is_valid()) run.output_devices_[i] = run.bound_[i].device();
    else if (!allocate_on.empty()) run.output_devices_[i] = allocate_on[i];
  }
  run.bind_in_place();
  run.results_.reserve(wanted_count);
  run.outputs_.resize(wanted_count);
  run.written_in_place_.assign(wanted_count, 0);
  return prepared;
}

Status PreparedRun::set_input(size_t index, const Tensor& tensor) {
  if (index >= input_ids_.size()) {
    return make_error(StatusCode::kInvalidArgument, "input index ", index, " out of range: ", input_ids_.size(),
                      " inputs were prepared");
  }
  TRY(check_feed_value(impl_, input_ids_[index], Value(tensor)));
  feed_tensors_[index] = tensor;
  feeds_[index] = Value(tensor);
  bind_in_place();  // a bound output that the new feed overlaps is no longer written in place
  return Status::ok();
}

void PreparedRun::bind_in_place() {
  bound_by_value_.assign(impl_.graph.values.size(), nullptr);
  for (size_t i = 0; i < bound_.size(); ++i) {
    const int id = (*state_)->wanted[i];
    if (!bound_by_value_[id] && bound_output_writable(impl_, bound_[i], id, feed_tensors_, input_ids_)) {
      bound_by_value_[id] = &bound_[i];
    }
  }
}

Status PreparedRun::run(const RunOptions& run_options) {
  RunState& state = **state_;
  for (size_t i = 0; i < input_ids_.size(); ++i) state.values[input_ids_[i]] = feeds_[i];
  TRY(run_main(impl_, state, feeds_, run_options, bound_by_value_, output_devices_, results_));
  for (size_t i = 0; i < results_.size(); ++i) {
    if (!results_[i].is_tensor()) {
      return make_error(StatusCode::kInvalidArgument, "output '", output_names_[i], "' is not a tensor");
    }
    const Tensor& result = results_[i].tensor();
    if (!bound_[i].is_valid()) {
      outputs_[i] = result;
      written_in_place_[i] = 0;
      continue;
    }
    written_in_place_[i] = result.raw_data() == bound_[i].raw_data();
    if (!written_in_place_[i]) TRY(copy_into_bound(impl_, output_names_[i], result, bound_[i]));
    outputs_[i] = bound_[i];
  }
  results_.clear();
  return Status::ok();
}

}  // namespace nxrt
