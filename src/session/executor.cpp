#include "session/executor.h"

#include <algorithm>
#include <sstream>

namespace nxrt {

namespace {

// Messages follow ONNX Runtime's wording so that code matching on them keeps working.
Status check_feed(const graph::Value& value, const Tensor& tensor) {
  if (!tensor.is_valid()) {
    return make_error(StatusCode::kInvalidArgument, "Input '", value.name, "' is an empty tensor");
  }
  if (tensor.device().type != DeviceType::kCpu) {
    return make_error(StatusCode::kInvalidArgument, "Input '", value.name, "' is on ", device_name(tensor.device()),
                      " but the session runs on Cpu");
  }
  const graph::TypeInfo& type = value.type;
  if (!type.is_tensor()) return Status::ok();
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
  bool dims_match = true;
  for (size_t i = 0; i < expected.size(); ++i) {
    dims_match = dims_match && (!expected[i].is_known() || expected[i].value == tensor.shape()[i]);
  }
  if (!dims_match) {
    std::ostringstream bad;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (expected[i].is_known() && expected[i].value != tensor.shape()[i]) {
        bad << " index: " << i << " Got: " << tensor.shape()[i] << " Expected: " << expected[i].value << "\n";
      }
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

}  // namespace

Expected<std::vector<Tensor>> execute(const Session::Impl& session, std::span<const std::string> input_names,
                                      std::span<const Tensor> inputs, std::span<const std::string> output_names,
                                      const RunOptions& run_options) {
  const graph::Graph& graph = session.graph;
  if (input_names.size() != inputs.size()) {
    return make_error(StatusCode::kInvalidArgument, "got ", input_names.size(), " input names but ", inputs.size(),
                      " input values");
  }
  std::vector<Tensor> values(graph.values.size());
  std::vector<bool> fed(graph.values.size(), false);
  for (size_t i = 0; i < input_names.size(); ++i) {
    const int id = graph.find_value(input_names[i]);
    const bool overridable =
        id != graph::kNoValue && std::find(session.overridable_initializers.begin(),
                                           session.overridable_initializers.end(), id) != session.overridable_initializers.end();
    if (id == graph::kNoValue || (!graph.values[id].is_graph_input && !overridable)) {
      return make_error(StatusCode::kInvalidArgument, "Invalid input name: ", input_names[i]);
    }
    if (fed[id]) return make_error(StatusCode::kInvalidArgument, "Input '", input_names[i], "' is fed more than once");
    TRY(check_feed(graph.values[id], inputs[i]));
    values[id] = inputs[i];
    fed[id] = true;
  }
  for (int id : graph.inputs) {
    if (!fed[id]) return make_error(StatusCode::kInvalidArgument, "Missing Input: ", graph.values[id].name);
  }
  for (size_t id = 0; id < graph.values.size(); ++id) {
    if (!fed[id] && graph.values[id].initializer) values[id] = *graph.values[id].initializer;
  }

  std::vector<int> wanted;
  if (output_names.empty()) {
    wanted = graph.outputs;
  } else {
    for (const std::string& name : output_names) {
      const int id = graph.find_value(name);
      if (id == graph::kNoValue || !graph.values[id].is_graph_output) {
        return make_error(StatusCode::kInvalidArgument, "Invalid output name: ", name);
      }
      wanted.push_back(id);
    }
  }

  std::vector<const Tensor*> node_inputs;
  std::vector<cpu::OutputDesc> descs;
  std::vector<Tensor> node_outputs;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (run_options.terminate && run_options.terminate->load(std::memory_order_relaxed)) {
      return make_error(StatusCode::kFail, "Exiting due to terminate flag being set to true.");
    }
    const graph::Node& node = graph.nodes[n];
    const cpu::Kernel& kernel = *session.kernels[n];
    node_inputs.clear();
    for (int input : node.inputs) {
      if (input != graph::kNoValue && !values[input].is_valid()) {
        return node_failure(node, make_error(StatusCode::kRuntimeException, "input '", graph.values[input].name,
                                             "' has no value"));
      }
      node_inputs.push_back(input == graph::kNoValue ? nullptr : &values[input]);
    }
    descs.clear();
    Status status = kernel.reshape(node_inputs, descs);
    if (!status.is_ok()) return node_failure(node, status);
    if (descs.size() < node.outputs.size()) {
      return node_failure(node, make_error(StatusCode::kRuntimeException, "kernel described ", descs.size(),
                                           " outputs, node has ", node.outputs.size()));
    }
    node_outputs.assign(node.outputs.size(), Tensor());
    const int alias = kernel.alias_input();
    if (const Tensor* constant = kernel.constant_output()) {
      node_outputs[0] = *constant;
    } else if (alias >= 0) {
      if (static_cast<size_t>(alias) >= node_inputs.size() || !node_inputs[alias]) {
        return node_failure(node, make_error(StatusCode::kRuntimeException, "aliased input ", alias, " is missing"));
      }
      node_outputs[0] = node_inputs[alias]->reshaped(descs[0].shape);
    } else {
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        auto allocated = Tensor::allocate(descs[o].dtype, descs[o].shape);
        if (!allocated) return node_failure(node, allocated.status());
        node_outputs[o] = std::move(allocated).value();
      }
      status = kernel.run(node_inputs, node_outputs, *session.pool);
      if (!status.is_ok()) return node_failure(node, status);
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o] != graph::kNoValue) values[node.outputs[o]] = std::move(node_outputs[o]);
    }
    for (int input : node.inputs) {
      if (input != graph::kNoValue && session.last_use[input] == static_cast<int>(n)) values[input] = Tensor();
    }
  }

  // Outputs that alias a feed, an initializer or a Constant (Identity, Reshape of a weight) are copied: the caller may
  // write into its results, and initializers may live in read-only mapped memory.
  const auto is_borrowed = [&](const Buffer* buffer) {
    if (std::binary_search(session.persistent_buffers.begin(), session.persistent_buffers.end(), buffer)) return true;
    return std::any_of(inputs.begin(), inputs.end(), [&](const Tensor& input) { return input.buffer().get() == buffer; });
  };
  std::vector<Tensor> results;
  results.reserve(wanted.size());
  for (int id : wanted) {
    if (!values[id].is_valid()) {
      return make_error(StatusCode::kRuntimeException, "output '", graph.values[id].name, "' was not produced");
    }
    if (is_borrowed(values[id].buffer().get())) {
      TRY_ASSIGN(Tensor copy, Tensor::copy_of(values[id]));
      results.push_back(std::move(copy));
    } else {
      results.push_back(values[id]);
    }
  }
  return results;
}

}  // namespace nxrt
