// IO binding: which bound buffers a run may write in place, and the copy into the others (see io_binding.h for
// the contract). Session::run_bound runs a PreparedRun once.
#include "session/io_binding.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "session/executor.h"
#include "session/prepared_run.h"
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

// Whether output `output_id` may share memory with feed `feed_id` (see bound_output_writable).
bool updated_in_place(const Session::Impl& session, int output_id, int feed_id, const Tensor& bound,
                      const Tensor& feed) {
  const graph::Graph& graph = session.graph;
  if (bound.raw_data() != feed.raw_data() || bound.dtype() != feed.dtype() || bound.shape() != feed.shape()) {
    return false;
  }
  if (output_id < 0 || feed_id < 0 || static_cast<size_t>(output_id) >= graph.values.size() ||
      static_cast<size_t>(feed_id) >= graph.values.size()) {
    return false;
  }
  const int producer = graph.values[static_cast<size_t>(output_id)].producer;
  const std::vector<int>& readers = graph.values[static_cast<size_t>(feed_id)].consumers;
  if (producer < 0 || readers.size() != 1 || readers[0] != producer ||
      static_cast<size_t>(producer) >= session.main.kernels.size()) {
    return false;
  }
  const graph::Node& node = graph.nodes[static_cast<size_t>(producer)];
  const ep::Kernel& kernel = *session.main.kernels[static_cast<size_t>(producer)];
  for (size_t output = 0; output < node.outputs.size(); ++output) {
    if (node.outputs[output] != output_id) continue;
    const int input = kernel.updates_input_in_place(output);
    const auto at = static_cast<size_t>(input);
    if (input >= 0 && at < node.inputs.size() && node.inputs[at] == feed_id) return true;
  }
  return false;
}

bool on_session_device(const Session::Impl& session, Device device) {
  return std::any_of(session.providers.begin(), session.providers.end(),
                     [&](const auto& provider) { return provider->device() == device; });
}

}  // namespace

bool bound_output_writable(const Session::Impl& session, const Tensor& bound, int output_id,
                           std::span<const Tensor> feeds, std::span<const int> feed_ids) {
  if (!bound.is_valid() || !on_session_device(session, bound.device()) || bound.dtype() == DataType::kString) {
    return false;
  }
  const size_t element_bytes = std::max<size_t>(data_type_storage_bytes(bound.dtype(), 1), 1);
  const size_t alignment = std::min<size_t>(element_bytes, alignof(std::max_align_t));
  if (reinterpret_cast<uintptr_t>(bound.raw_data()) % alignment != 0) return false;
  for (size_t f = 0; f < feeds.size(); ++f) {
    if (!overlaps(bound, feeds[f])) continue;
    if (f >= feed_ids.size() || !updated_in_place(session, output_id, feed_ids[f], bound, feeds[f])) return false;
  }
  return true;
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
  TRY_ASSIGN(std::unique_ptr<PreparedRun> prepared,
             PreparedRun::create(*this, input_names, inputs, output_names, bound_outputs, allocate_on));
  TRY(prepared->run(run_options));
  BoundRunResult result;
  result.outputs = prepared->outputs();
  for (size_t i = 0; i < result.outputs.size(); ++i) result.written_in_place.push_back(prepared->written_in_place(i));
  return result;
}

}  // namespace nxrt
