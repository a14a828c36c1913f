// Session::run_bound: the IO-binding run. execute() lets the tensor kernel producing a bound output write into
// the caller's buffer; results that landed elsewhere are copied into it (see io_binding.h for the contract).
#include "session/io_binding.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "session/executor.h"
#include "session/session_impl.h"

namespace nxrt {

namespace {

bool same_layout(const Tensor& bound, DataType dtype, const Shape& shape) {
  return bound.dtype() == dtype && bound.shape() == shape;
}

bool overlaps(const Tensor& a, const Tensor& b) {
  if (a.storage_bytes() == 0 || b.storage_bytes() == 0) return false;
  const auto* a_begin = static_cast<const char*>(a.raw_data());
  const auto* b_begin = static_cast<const char*>(b.raw_data());
  return a_begin < b_begin + b.storage_bytes() && b_begin < a_begin + a.storage_bytes();
}

bool on_session_device(const Session::Impl& session, Device device) {
  return std::any_of(session.providers.begin(), session.providers.end(),
                     [&](const auto& provider) { return provider->device() == device; });
}

}  // namespace

bool bound_output_writable(const Session::Impl& session, const Tensor& bound, std::span<const Tensor> feeds) {
  if (!bound.is_valid() || !on_session_device(session, bound.device()) || bound.dtype() == DataType::kString) {
    return false;
  }
  const size_t element_bytes = std::max<size_t>(data_type_storage_bytes(bound.dtype(), 1), 1);
  const size_t alignment = std::min<size_t>(element_bytes, alignof(std::max_align_t));
  if (reinterpret_cast<uintptr_t>(bound.raw_data()) % alignment != 0) return false;
  return std::none_of(feeds.begin(), feeds.end(), [&](const Tensor& feed) { return overlaps(bound, feed); });
}

Status copy_into_bound(const Session::Impl& session, const std::string& name, const Tensor& result,
                       const Tensor& bound) {
  if (!same_layout(bound, result.dtype(), result.shape())) {
    return make_error(StatusCode::kInvalidArgument, "output '", name, "' is bound to a ",
                      tensor_type_string(bound.dtype()), " tensor of shape ", shape_to_string(bound.shape()),
                      " but the run produced ", tensor_type_string(result.dtype()), " of shape ",
                      shape_to_string(result.shape()));
  }
  if (!on_session_device(session, bound.device())) {
    return make_error(StatusCode::kEpFail, "output '", name, "' is bound to ", device_name(bound.device()),
                      " memory, which none of this session's providers can write");
  }
  if (result.raw_data() == bound.raw_data() || result.storage_bytes() == 0) return Status::ok();
  return copy_into(session, result, bound);
}

Expected<BoundRunResult> Session::run_bound(std::span<const std::string> input_names, std::span<const Tensor> inputs,
                                            std::span<const std::string> output_names,
                                            std::span<const Tensor> bound_outputs, const RunOptions& run_options,
                                            std::span<const Device> allocate_on) const {
  const Impl& session = *impl_;
  const graph::Graph& graph = session.graph;
  const size_t wanted_count = output_names.empty() ? graph.outputs.size() : output_names.size();
  if (bound_outputs.size() != wanted_count) {
    return make_error(StatusCode::kInvalidArgument, "got ", bound_outputs.size(), " bound outputs for ", wanted_count,
                      " requested outputs");
  }
  if (input_names.size() != inputs.size()) {
    return make_error(StatusCode::kInvalidArgument, "got ", input_names.size(), " input names but ", inputs.size(),
                      " input values");
  }
  BoundRunResult result;
  result.written_in_place.assign(wanted_count, false);
  const auto name_of = [&](size_t i) -> const std::string& {
    return output_names.empty() ? graph.values[graph.outputs[i]].name : output_names[i];
  };

  std::vector<int> wanted;
  for (size_t i = 0; i < wanted_count; ++i) {
    const int id = output_names.empty() ? graph.outputs[i] : graph.find_value(output_names[i]);
    if (id == graph::kNoValue || !graph.values[id].is_graph_output) {
      return make_error(StatusCode::kInvalidArgument, "Invalid output name: ", name_of(i));
    }
    wanted.push_back(id);
  }

  std::vector<const Tensor*> bound_by_value(graph.values.size(), nullptr);
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (bound_output_writable(session, bound_outputs[i], inputs) && !bound_by_value[wanted[i]]) {
      bound_by_value[wanted[i]] = &bound_outputs[i];
    }
  }
  const std::vector<Value> feeds(inputs.begin(), inputs.end());
  if (!allocate_on.empty() && allocate_on.size() != wanted_count) {
    return make_error(StatusCode::kInvalidArgument, "got ", allocate_on.size(), " output devices for ", wanted_count,
                      " requested outputs");
  }
  // Bound outputs come back where they were produced and are copied into their buffers below.
  std::vector<Device> devices(wanted_count, Device{});
  for (size_t i = 0; i < wanted_count; ++i) {
    if (bound_outputs[i].is_valid()) devices[i] = bound_outputs[i].device();
    else if (!allocate_on.empty()) devices[i] = allocate_on[i];
  }
  TRY_ASSIGN(std::vector<Value> values,
             execute(session, input_names, feeds, output_names, run_options, bound_by_value, devices));
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].is_tensor()) {
      return make_error(StatusCode::kInvalidArgument, "output '", name_of(i), "' is not a tensor");
    }
    Tensor& tensor = values[i].tensor();
    if (bound_outputs[i].is_valid()) {
      result.written_in_place[i] = tensor.raw_data() == bound_outputs[i].raw_data();
      if (!result.written_in_place[i]) TRY(copy_into_bound(session, name_of(i), tensor, bound_outputs[i]));
      result.outputs.push_back(bound_outputs[i]);
    } else {
      result.outputs.push_back(std::move(tensor));
    }
  }
  return result;
}

}  // namespace nxrt
