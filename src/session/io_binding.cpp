// Session::run_bound: the IO-binding run. Graphs made only of tensor kernels run here node by node so that
// the producer of a bound output writes into the caller's buffer; anything else goes through execute() and
// copies its results into the bound buffers (see io_binding.h for the contract).
#include "session/io_binding.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>

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

bool writable_in_place(const Tensor& bound, std::span<const Tensor> feeds) {
  if (!bound.is_valid() || bound.device().type != DeviceType::kCpu || bound.dtype() == DataType::kString) return false;
  const size_t element_bytes = std::max<size_t>(data_type_storage_bytes(bound.dtype(), 1), 1);
  const size_t alignment = std::min<size_t>(element_bytes, alignof(std::max_align_t));
  if (reinterpret_cast<uintptr_t>(bound.raw_data()) % alignment != 0) return false;
  return std::none_of(feeds.begin(), feeds.end(), [&](const Tensor& feed) { return overlaps(bound, feed); });
}

Status copy_into_bound(const std::string& name, const Tensor& result, const Tensor& bound) {
  if (!same_layout(bound, result.dtype(), result.shape())) {
    return make_error(StatusCode::kInvalidArgument, "output '", name, "' is bound to a ",
                      tensor_type_string(bound.dtype()), " tensor of shape ", shape_to_string(bound.shape()),
                      " but the run produced ", tensor_type_string(result.dtype()), " of shape ",
                      shape_to_string(result.shape()));
  }
  if (bound.device().type != DeviceType::kCpu) {
    return make_error(StatusCode::kEpFail, "output '", name, "' is bound to ", device_name(bound.device()),
                      " memory, which this build cannot write");
  }
  if (result.raw_data() != bound.raw_data() && result.storage_bytes() > 0) {
    std::memmove(bound.raw_data(), result.raw_data(), result.storage_bytes());
  }
  return Status::ok();
}

// Wording follows executor.cpp's feed checks (ONNX Runtime's messages).
Status check_tensor_feed(const graph::Value& value, const Tensor& tensor) {
  if (!tensor.is_valid()) {
    return make_error(StatusCode::kInvalidArgument, "Input '", value.name, "' is an empty tensor");
  }
  if (tensor.device().type != DeviceType::kCpu) {
    return make_error(StatusCode::kInvalidArgument, "Input '", value.name, "' is on ", device_name(tensor.device()),
                      " but the session runs on Cpu");
  }
  const graph::TypeInfo& type = value.type;
  if (type.elem_type != DataType::kUndefined && tensor.dtype() != type.elem_type) {
    return make_error(StatusCode::kInvalidArgument, "Unexpected input data type. Actual: (",
                      tensor_type_string(tensor.dtype()), ") , expected: (", tensor_type_string(type.elem_type), ")");
  }
  if (!type.shape) return Status::ok();
  const graph::SymbolicShape& expected = *type.shape;
  if (expected.size() != tensor.rank()) {
    return make_error(StatusCode::kInvalidArgument, "Invalid rank for input: ", value.name, " Got: ", tensor.rank(),
                      " Expected: ", expected.size(), " Please fix either the inputs/outputs or the model.");
  }
  const auto wrong_dim = [&](size_t i) { return expected[i].is_known() && expected[i].value != tensor.shape()[i]; };
  bool dims_match = true;
  for (size_t i = 0; i < expected.size(); ++i) dims_match = dims_match && !wrong_dim(i);
  if (!dims_match) {
    std::ostringstream bad;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (!wrong_dim(i)) continue;
      bad << " index: " << i << " Got: " << tensor.shape()[i] << " Expected: " << expected[i].value << "\n";
    }
    return make_error(StatusCode::kInvalidArgument, "Got invalid dimensions for input: ", value.name,
                      " for the following indices\n", bad.str(), " Please fix either the inputs/outputs or the model.");
  }
  return Status::ok();
}

Status node_failure(const graph::Node& node, const Status& status) {
  return Status(status.code(), "Non-zero status code returned while running " + node.op_type + " node. Name:'" +
                                   node.name + "' Status Message: " + status.message());
}

bool runs_node_by_node(const Session::Impl& session) {
  for (int id : session.graph.inputs) {
    if (!session.graph.values[id].type.is_tensor()) return false;
  }
  return std::none_of(session.main.kernels.begin(), session.main.kernels.end(),
                      [](const auto& kernel) { return kernel->takes_values(); });
}

// The node loop of executor.cpp for tensor kernels only, with bound graph outputs written in place.
// `slot_of_value[id]` is the index into `bound` of the output that value `id` is bound to, or -1.
Status run_tensor_nodes(const Session::Impl& session, const RunOptions& options, std::vector<Value>& values,
                        const std::vector<int>& slot_of_value, std::span<const Tensor> bound,
                        std::vector<bool>& written_in_place) {
  const graph::Graph& graph = session.graph;
  const CompiledGraph& compiled = session.main;
  std::vector<const Tensor*> inputs;
  std::vector<cpu::OutputDesc> descs;
  std::vector<Tensor> outputs;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (options.terminate && options.terminate->load(std::memory_order_relaxed)) {
      return make_error(StatusCode::kFail, "Exiting due to terminate flag being set to true.");
    }
    const graph::Node& node = graph.nodes[n];
    const cpu::Kernel& kernel = *compiled.kernels[n];
    inputs.clear();
    for (int input : node.inputs) {
      if (input == graph::kNoValue) {
        inputs.push_back(nullptr);
        continue;
      }
      if (!values[input].is_tensor()) {
        return node_failure(node, make_error(StatusCode::kRuntimeException, "input '", graph.values[input].name,
                                             "' has no tensor value"));
      }
      inputs.push_back(&values[input].tensor());
    }
    descs.clear();
    Status status = kernel.reshape(inputs, descs);
    if (!status.is_ok()) return node_failure(node, status);
    if (descs.size() < node.outputs.size()) {
      return node_failure(node, make_error(StatusCode::kRuntimeException, "kernel described ", descs.size(),
                                           " outputs, node has ", node.outputs.size()));
    }
    outputs.assign(node.outputs.size(), Tensor());
    const int alias = kernel.alias_input();
    if (const Tensor* constant = kernel.constant_output()) {
      outputs[0] = *constant;
    } else if (alias >= 0) {
      if (static_cast<size_t>(alias) >= inputs.size() || !inputs[alias]) {
        return node_failure(node, make_error(StatusCode::kRuntimeException, "aliased input ", alias, " is missing"));
      }
      outputs[0] = inputs[alias]->reshaped(descs[0].shape);
    } else {
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        const int id = node.outputs[o];
        const int slot = id == graph::kNoValue ? -1 : slot_of_value[id];
        if (slot >= 0 && same_layout(bound[slot], descs[o].dtype, descs[o].shape)) {
          outputs[o] = bound[slot];
          written_in_place[slot] = true;
          continue;
        }
        auto allocated = Tensor::allocate(descs[o].dtype, descs[o].shape);
        if (!allocated) return node_failure(node, allocated.status());
        outputs[o] = std::move(allocated).value();
      }
      status = kernel.run(inputs, outputs, *session.pool);
      if (!status.is_ok()) return node_failure(node, status);
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o] != graph::kNoValue) values[node.outputs[o]] = Value(std::move(outputs[o]));
    }
    for (int input : node.inputs) {
      if (input != graph::kNoValue && compiled.last_use[input] == static_cast<int>(n)) values[input].reset();
    }
  }
  return Status::ok();
}

}  // namespace

Expected<BoundRunResult> Session::run_bound(std::span<const std::string> input_names, std::span<const Tensor> inputs,
                                            std::span<const std::string> output_names,
                                            std::span<const Tensor> bound_outputs,
                                            const RunOptions& run_options) const {
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

  if (!runs_node_by_node(session)) {
    TRY_ASSIGN(std::vector<Tensor> tensors, run(input_names, inputs, output_names, run_options));
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (!bound_outputs[i].is_valid()) continue;
      TRY(copy_into_bound(name_of(i), tensors[i], bound_outputs[i]));
      tensors[i] = bound_outputs[i];
    }
    result.outputs = std::move(tensors);
    return result;
  }

  std::vector<Value> values(graph.values.size());
  std::vector<bool> fed(graph.values.size(), false);
  for (size_t i = 0; i < input_names.size(); ++i) {
    const int id = graph.find_value(input_names[i]);
    const auto& overridable = session.overridable_initializers;
    const bool may_feed = id != graph::kNoValue &&
                          (graph.values[id].is_graph_input ||
                           std::find(overridable.begin(), overridable.end(), id) != overridable.end());
    if (!may_feed) return make_error(StatusCode::kInvalidArgument, "Invalid input name: ", input_names[i]);
    if (fed[id]) return make_error(StatusCode::kInvalidArgument, "Input '", input_names[i], "' is fed more than once");
    TRY(check_tensor_feed(graph.values[id], inputs[i]));
    values[id] = Value(inputs[i]);
    fed[id] = true;
  }
  for (int id : graph.inputs) {
    if (!fed[id]) return make_error(StatusCode::kInvalidArgument, "Missing Input: ", graph.values[id].name);
  }
  for (size_t id = 0; id < graph.values.size(); ++id) {
    if (!fed[id] && graph.values[id].initializer) values[id] = *graph.values[id].initializer;
  }

  std::vector<int> slot_of_value(graph.values.size(), -1);
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (writable_in_place(bound_outputs[i], inputs) && slot_of_value[wanted[i]] < 0) slot_of_value[wanted[i]] = i;
  }
  TRY(run_tensor_nodes(session, run_options, values, slot_of_value, bound_outputs, result.written_in_place));

  for (size_t i = 0; i < wanted.size(); ++i) {
    const Value& value = values[wanted[i]];
    if (!value.is_tensor()) {
      return make_error(StatusCode::kRuntimeException, "output '", name_of(i), "' was not produced");
    }
    if (bound_outputs[i].is_valid()) {
      if (!result.written_in_place[i] || value.tensor().raw_data() != bound_outputs[i].raw_data()) {
        result.written_in_place[i] = false;
        TRY(copy_into_bound(name_of(i), value.tensor(), bound_outputs[i]));
      }
      result.outputs.push_back(bound_outputs[i]);
      continue;
    }
    // As in execute(): results never alias a feed, an initializer or a Constant.
    const Buffer* buffer = value.tensor().buffer().get();
    const bool borrowed =
        std::binary_search(session.main.persistent_buffers.begin(), session.main.persistent_buffers.end(), buffer) ||
        std::any_of(inputs.begin(), inputs.end(), [&](const Tensor& feed) { return feed.buffer().get() == buffer; });
    if (borrowed) {
      TRY_ASSIGN(Tensor copy, Tensor::copy_of(value.tensor()));
      result.outputs.push_back(std::move(copy));
    } else {
      result.outputs.push_back(value.tensor());
    }
  }
  return result;
}

}  // namespace nxrt
