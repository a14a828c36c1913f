#include "session/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <new>
#include <sstream>

#include "core/map_value.h"
#include "ep/cpu/run_limits.h"

namespace nxrt {

namespace {

// Messages follow ONNX Runtime's wording so that code matching on them keeps working.
Status check_feed(const graph::Value& value, const Tensor& tensor) {
  if (!tensor.is_valid()) {
    return make_error(StatusCode::kInvalidArgument, "Input '", value.name, "' is an empty tensor");
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

// Runs `call`, a kernel's reshape, execute or run_values. An exception escaping a kernel (std::bad_alloc from a
// buffer whose size the model decides) becomes a RUNTIME_EXCEPTION of the run instead of ending the process.
template <class Call>
Status call_kernel(const Call& call) {
  try {
    return call();
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kRuntimeException, "out of memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return make_error(StatusCode::kRuntimeException, "exception in the kernel: ", e.what());
  }
}

std::string value_type_string(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kTensor: return tensor_type_string(value.tensor().dtype());
    case Value::Kind::kSequence: return "seq(" + tensor_type_string(value.elem_type()) + ")";
    case Value::Kind::kNone: return "optional(none)";
    case Value::Kind::kMap: return map_type_string(value.map_key_type(), value.elem_type());
    case Value::Kind::kMapSequence: return "seq(" + map_type_string(value.map_key_type(), value.elem_type()) + ")";
    case Value::Kind::kUnset: break;
  }
  return "(no value)";
}

Status check_value_feed(const graph::Value& declared, const Value& value) {
  const graph::TypeInfo& type = declared.type;
  if (value.is_tensor() && (type.is_tensor() || type.kind == graph::TypeInfo::Kind::kUnknown)) {
    return check_feed(declared, value.tensor());
  }
  const auto mismatch = [&] {
    return make_error(StatusCode::kInvalidArgument, "Unexpected input data type. Actual: (", value_type_string(value),
                      ") , expected: (", type.to_string(), ")");
  };
  // A map's declared key and value types, when the declaration gives them.
  const auto map_matches = [&](const graph::TypeInfo& map_type) {
    const bool key_ok = map_type.map_key_type == DataType::kUndefined || map_type.map_key_type == value.map_key_type();
    const bool value_ok = !map_type.element || map_type.element->elem_type == DataType::kUndefined ||
                          map_type.element->elem_type == value.elem_type();
    return key_ok && value_ok;
  };
  switch (type.kind) {
    case graph::TypeInfo::Kind::kSequence:
      if (value.is_map_sequence() && type.element && type.element->kind == graph::TypeInfo::Kind::kMap) {
        return map_matches(*type.element) ? Status::ok() : mismatch();
      }
      if (!value.is_sequence()) return mismatch();
      return Status::ok();
    case graph::TypeInfo::Kind::kMap:
      return value.is_map() && map_matches(type) ? Status::ok() : mismatch();
    case graph::TypeInfo::Kind::kOptional:
      if (value.is_none()) return Status::ok();
      if (!type.element) return Status::ok();
      if (type.element->is_tensor() && value.is_tensor()) return check_feed(declared, value.tensor());
      if (type.element->kind == graph::TypeInfo::Kind::kSequence && value.is_sequence()) return Status::ok();
      return mismatch();
    case graph::TypeInfo::Kind::kUnknown:
      return value.is_set() ? Status::ok() : mismatch();
    default:
      return mismatch();
  }
}

// Sets every initializer the caller did not override.
void seed_initializers(const CompiledGraph& compiled, std::vector<Value>& values) {
  for (int id : compiled.initializer_ids) {
    if (!values[id].is_set()) values[id] = *compiled.graph().values[id].initializer;
  }
}

std::string node_where(std::string_view preposition, const graph::Node& node) {
  return std::string(preposition) + " " + node.op_type + " node '" + node.name + "'";
}

// One run's state: the pool and limits, each provider's stream, and subgraph execution for control-flow kernels.
// `state`: the run state of a main-graph run, whose planned block holds the plannable values of that graph and whose
// vectors the run reuses (subgraph runs use their own).
class Frame final : public ep::RunContext {
 public:
  Frame(ThreadPool& pool, const cpu::RunLimits& limits, const std::shared_ptr<TensorArena>& arena, RunState& state,
        const PlanRules& rules)
      : pool_(pool), limits_(limits), arena_(arena), state_(state), rules_(rules) {}

  ThreadPool& pool() override { return pool_; }

  // Creates each provider's stream for this run and tells the providers the run starts.
  Status start(const ProviderList& providers) {
    state_.streams.clear();
    for (const auto& provider : providers) {
      state_.streams.emplace_back(provider.get(), provider->create_stream());
      TRY(provider->run_started(state_.streams.back().second.get()));
    }
    return Status::ok();
  }

  // Waits for every provider's work: outputs on any device are complete after it.
  Status finish() {
    Status first = Status::ok();
    for (auto& [provider, stream] : state_.streams) {
      const Status status = provider->run_finished(stream.get());
      if (first.is_ok() && !status.is_ok()) first = status;
    }
    state_.streams.clear();
    return first;
  }

  Status run_subgraph(const ep::CompiledSubgraph& subgraph, std::span<const Value* const> inputs,
                      std::span<const Value* const> outer, std::vector<Value>& outputs) override {
    const auto& compiled = static_cast<const CompiledGraph&>(subgraph);
    const graph::Graph& graph = compiled.graph();
    if (inputs.size() != graph.inputs.size() || outer.size() != graph.outer_scope_inputs.size()) {
      return make_error(StatusCode::kFail, "subgraph '", graph.name, "' declares ", graph.inputs.size(),
                        " inputs and ", graph.outer_scope_inputs.size(), " outer-scope reads; got ", inputs.size(),
                        " and ", outer.size());
    }
    std::vector<Value> values(graph.values.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i]) values[graph.inputs[i]] = *inputs[i];
    }
    for (size_t i = 0; i < outer.size(); ++i) {
      if (outer[i]) values[graph.outer_scope_inputs[i]] = *outer[i];
    }
    seed_initializers(compiled, values);
    // Checked here too: a loop whose body has no nodes never reaches run_nodes' check.
    if (limits_.should_stop()) return limits_.stop_status("before a run of subgraph '" + graph.name + "'");
    NodeScratch scratch;
    TRY(run_nodes(compiled, values, scratch, nullptr));
    outputs.clear();
    for (int id : graph.outputs) {
      if (!values[id].is_set()) {
        return make_error(StatusCode::kRuntimeException, "subgraph '", graph.name, "' did not produce output '",
                          graph.values[id].name, "'");
      }
      outputs.push_back(values[id]);
    }
    return Status::ok();
  }

  // Runs every node of `compiled` over `values` (feeds, outer-scope values and initializers already set),
  // releasing each value after its last reader. `memory`: the planned block for the plannable values of the main
  // graph (null for subgraphs). `bound`: see BoundBuffers (main graph only). `node_ms`: when not empty, receives
  // each node's wall time (one entry per node).
  Status run_nodes(const CompiledGraph& compiled, std::vector<Value>& values, NodeScratch& scratch,
                   PlannedMemory* memory, BoundBuffers bound = {}, std::span<double> node_ms = {}) {
    const graph::Graph& graph = compiled.graph();
    std::chrono::steady_clock::time_point node_start;
    auto& [tensor_inputs, value_inputs, descs, tensor_outputs, value_outputs, planned_data] = scratch;
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const graph::Node& node = graph.nodes[n];
      if (limits_.should_stop()) return limits_.stop_status(node_where("before", node));
      const ep::Kernel& kernel = *compiled.kernels[n];
      if (!node_ms.empty()) node_start = std::chrono::steady_clock::now();
      if (kernel.takes_values()) {
        value_inputs.clear();
        for (int input : node.inputs) value_inputs.push_back(input == graph::kNoValue ? nullptr : &values[input]);
        for (int input : node.implicit_inputs) value_inputs.push_back(&values[input]);
        value_outputs.assign(node.outputs.size(), Value());
        const Status status = call_kernel(
            [&, &in = value_inputs, &out = value_outputs] { return kernel.run_values(in, out, *this); });
        if (!status.is_ok()) return node_failure(node, status);
        if (limits_.stopped()) return limits_.stop_status(node_where("while running", node));
        for (size_t o = 0; o < node.outputs.size(); ++o) {
          if (node.outputs[o] != graph::kNoValue) values[node.outputs[o]] = std::move(value_outputs[o]);
        }
      } else {
        tensor_inputs.clear();
        for (int input : node.inputs) {
          if (input == graph::kNoValue) {
            tensor_inputs.push_back(nullptr);
            continue;
          }
          const Value& value = values[input];
          if (!value.is_tensor()) {
            return node_failure(node, make_error(StatusCode::kRuntimeException, "input '", graph.values[input].name,
                                                 value.is_set() ? "' is a " + value_type_string(value) +
                                                                      ", not a tensor"
                                                                : std::string("' has no value")));
          }
          tensor_inputs.push_back(&value.tensor());
        }
        TRY(run_tensor_kernel(graph, node, kernel, *compiled.providers[n], compiled.host_outputs[n], tensor_inputs,
                              bound, memory, scratch));
        // A kernel whose parallel tasks saw the stop returns early with partial outputs: never use them.
        if (limits_.stopped()) return limits_.stop_status(node_where("while running", node));
        for (size_t o = 0; o < node.outputs.size(); ++o) {
          if (node.outputs[o] != graph::kNoValue) values[node.outputs[o]] = Value(std::move(tensor_outputs[o]));
        }
      }
      for (int input : node.inputs) {
        if (input != graph::kNoValue && compiled.last_use[input] == static_cast<int>(n)) values[input].reset();
      }
      for (int input : node.implicit_inputs) {
        if (compiled.last_use[input] == static_cast<int>(n)) values[input].reset();
      }
      if constexpr (PlannedMemory::kPoisons) {
        if (memory != nullptr) poison_dead_slots(n, node, *memory);
      }
      if (!node_ms.empty()) {
        node_ms[n] =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - node_start).count();
      }
    }
    return Status::ok();
  }

 private:
  // The planned values whose storage nobody reads after node n (sanitizer builds).
  void poison_dead_slots(size_t n, const graph::Node& node, PlannedMemory& memory) const {
    const auto dies_here = [&](int id) {
      if (id == graph::kNoValue) return;
      const int root = rules_.root[id];
      if (rules_.plannable[root] && rules_.last_node[root] == static_cast<int>(n)) memory.died(root);
    };
    for (int input : node.inputs) dies_here(input);
    for (int input : node.implicit_inputs) dies_here(input);
    for (int output : node.outputs) dies_here(output);
  }

  ep::Stream* stream_of(const ep::ExecutionProvider& provider) {
    for (auto& [owner, stream] : state_.streams) {
      if (owner == &provider) return stream.get();
    }
    return nullptr;
  }

  // Output storage on `device`: the session arena for host memory, the provider's allocator for a device.
  Expected<Tensor> allocate_output(const ep::ExecutionProvider& provider, bool host, DataType dtype, Shape shape) {
    if (host) return allocate_from_arena(arena_, dtype, std::move(shape));
    return Tensor::allocate(dtype, std::move(shape), provider.allocator());
  }

  Status run_tensor_kernel(const graph::Graph& graph, const graph::Node& node, const ep::Kernel& kernel,
                           const ep::ExecutionProvider& provider, ep::SlotMask host_outputs,
                           std::span<const Tensor* const> inputs, BoundBuffers bound, PlannedMemory* memory,
                           NodeScratch& scratch) {
    std::vector<ep::OutputDesc>& descs = scratch.descs;
    std::vector<Tensor>& outputs = scratch.tensor_outputs;
    descs.clear();
    Status status = call_kernel([&] { return kernel.reshape(inputs, descs); });
    if (!status.is_ok()) return node_failure(node, status);
    if (descs.size() < node.outputs.size()) {
      return node_failure(node, make_error(StatusCode::kRuntimeException, "kernel described ", descs.size(),
                                           " outputs, node has ", node.outputs.size()));
    }
    outputs.assign(node.outputs.size(), Tensor());
    const int alias = kernel.alias_input();
    if (const Tensor* constant = kernel.constant_output()) {
      outputs[0] = *constant;
      return Status::ok();
    }
    if (alias >= 0) {
      if (static_cast<size_t>(alias) >= inputs.size() || !inputs[alias]) {
        return node_failure(node, make_error(StatusCode::kRuntimeException, "aliased input ", alias, " is missing"));
      }
      outputs[0] = inputs[alias]->reshaped(descs[0].shape);
      return Status::ok();
    }
    const bool host_provider = ep::is_host(provider.device());
    scratch.planned_data.assign(node.outputs.size(), nullptr);
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const int id = node.outputs[o];
      const bool host = host_provider || (host_outputs >> o & 1u) != 0;
      const Device device = host ? Device{} : provider.device();
      const Tensor* target = bound.empty() || id == graph::kNoValue ? nullptr : bound[id];
      if (target && target->dtype() == descs[o].dtype && target->shape() == descs[o].shape &&
          target->device() == device) {
        outputs[o] = *target;
        continue;
      }
      const std::optional<size_t> bytes = cpu::tensor_storage_bytes(descs[o].dtype, descs[o].shape);
      if (!bytes || !limits_.allows_bytes(*bytes)) {
        const std::string output = id == graph::kNoValue ? "output " + std::to_string(o)
                                                         : "output '" + graph.values[id].name + "'";
        return node_failure(node, limits_.check_tensor_bytes(descs[o].dtype, descs[o].shape, output));
      }
      if (memory != nullptr && id != graph::kNoValue && rules_.plannable[id] &&
          descs[o].dtype != DataType::kString) {
        outputs[o] = memory->take(id, descs[o].dtype, descs[o].shape, *bytes);
        if (outputs[o].is_valid()) {
          scratch.planned_data[o] = outputs[o].raw_data();
          continue;
        }
      }
      auto allocated = allocate_output(provider, host, descs[o].dtype, std::move(descs[o].shape));
      if (!allocated) return node_failure(node, allocated.status());
      outputs[o] = std::move(allocated).value();
    }
    ep::KernelContext context{inputs, outputs, pool_, stream_of(provider), &state_.kernel_scratch,
                              &provider.allocator()};
    status = call_kernel([&] { return kernel.execute(context); });
    if (!status.is_ok()) return node_failure(node, status);
    if (memory != nullptr) TRY(keep_block_private(node, *memory, scratch));
    return Status::ok();
  }

  // A kernel may replace an output with a tensor of its own, or with one of its inputs. Only a planned output at
  // its own slot may lie in the planned block: a replaced planned output is copied into its slot, and any other
  // output showing the block is copied to the arena, so that no value outlives its slot.
  Status keep_block_private(const graph::Node& node, PlannedMemory& memory, NodeScratch& scratch) {
    for (size_t o = 0; o < scratch.tensor_outputs.size(); ++o) {
      Tensor& output = scratch.tensor_outputs[o];
      const void* slot = scratch.planned_data[o];
      if (slot != nullptr ? output.raw_data() == slot : !memory.holds(output)) continue;
      Tensor target;
      if (slot != nullptr) {
        const ep::OutputDesc& desc = scratch.descs[o];
        if (output.dtype() != desc.dtype || output.shape() != desc.shape) {
          return node_failure(node, make_error(StatusCode::kRuntimeException, "output ", o, " is ",
                                               tensor_type_string(output.dtype()), " ", shape_to_string(output.shape()),
                                               " but the kernel described ", tensor_type_string(desc.dtype), " ",
                                               shape_to_string(desc.shape)));
        }
        target = memory.take(node.outputs[o], desc.dtype, desc.shape, output.storage_bytes());
      } else {
        auto allocated = allocate_from_arena(arena_, output.dtype(), output.shape());
        if (!allocated) return node_failure(node, allocated.status());
        target = std::move(*allocated);
      }
      if (output.storage_bytes() > 0) std::memcpy(target.raw_data(), output.raw_data(), output.storage_bytes());
      output = std::move(target);
    }
    return Status::ok();
  }

  ThreadPool& pool_;
  const cpu::RunLimits& limits_;
  const std::shared_ptr<TensorArena>& arena_;
  RunState& state_;
  const PlanRules& rules_;
};

std::string session_devices(const Session::Impl& session) {
  std::string names;
  for (const auto& provider : session.providers) {
    names += (names.empty() ? "" : ", ") + device_name(provider->device());
  }
  return names;
}

}  // namespace

Status copy_into(const Session::Impl& session, const Tensor& source, const Tensor& target) {
  if (!ep::is_host(source.device()) && !ep::is_host(target.device()) && source.device() != target.device()) {
    TRY_ASSIGN(Tensor staged, copy_to_device(session, source, Device{}));
    return copy_into(session, staged, target);
  }
  // The provider of the device side of the copy (the CPU's for host to host).
  const Device device = ep::is_host(target.device()) ? source.device() : target.device();
  for (const auto& provider : session.providers) {
    if (provider->device() == device) return provider->copy(source, target, nullptr);
  }
  return make_error(StatusCode::kInvalidArgument, "a tensor on ", device_name(device),
                    " cannot be used by this session, which runs on ", session_devices(session));
}

Expected<Tensor> copy_to_device(const Session::Impl& session, const Tensor& tensor, Device target) {
  if (tensor.dtype() == DataType::kString && ep::is_host(tensor.device()) && ep::is_host(target)) {
    return Tensor::copy_of(tensor);
  }
  const Device device = ep::is_host(target) ? tensor.device() : target;
  const auto provider = std::find_if(session.providers.begin(), session.providers.end(),
                                     [&](const auto& candidate) { return candidate->device() == device; });
  if (provider == session.providers.end()) {
    return make_error(StatusCode::kInvalidArgument, "a tensor on ", device_name(device),
                      " cannot be used by this session, which runs on ", session_devices(session));
  }
  Allocator& allocator = ep::is_host(target) ? cpu_allocator() : (*provider)->allocator();
  TRY_ASSIGN(Tensor copy, Tensor::allocate(tensor.dtype(), tensor.shape(), allocator));
  TRY(copy_into(session, tensor, copy));
  return copy;
}

LeasedRunState::LeasedRunState(const Session::Impl& session)
    : pool_(session.run_states), state_(pool_->acquire(session.plan_rules)) {
  state_->values.resize(session.graph.values.size());
}

LeasedRunState::~LeasedRunState() {
  for (Value& value : state_->values) value.reset();
  pool_->release(std::move(state_));
}

Status bind_feeds(const Session::Impl& session, std::span<const std::string> input_names,
                  std::span<const Value> inputs, RunState& state, std::vector<int>* ids) {
  const graph::Graph& graph = session.graph;
  if (input_names.size() != inputs.size()) {
    return make_error(StatusCode::kInvalidArgument, "got ", input_names.size(), " input names but ", inputs.size(),
                      " input values");
  }
  for (size_t i = 0; i < input_names.size(); ++i) {
    TRY_ASSIGN(const int id, feed_id(session, input_names[i]));
    if (state.values[id].is_set()) {
      return make_error(StatusCode::kInvalidArgument, "Input '", input_names[i], "' is fed more than once");
    }
    TRY(check_value_feed(graph.values[id], inputs[i]));
    state.values[id] = inputs[i];
    if (ids != nullptr) ids->push_back(id);
  }
  for (int id : graph.inputs) {
    if (!state.values[id].is_set()) {
      return make_error(StatusCode::kInvalidArgument, "Missing Input: ", graph.values[id].name);
    }
  }
  return Status::ok();
}

Status bind_outputs(const Session::Impl& session, std::span<const std::string> output_names, RunState& state) {
  const graph::Graph& graph = session.graph;
  state.wanted.clear();
  if (output_names.empty()) state.wanted.assign(graph.outputs.begin(), graph.outputs.end());
  for (const std::string& name : output_names) {
    TRY_ASSIGN(const int id, output_id(session, name));
    state.wanted.push_back(id);
  }
  return Status::ok();
}

Expected<std::vector<Value>> execute(const Session::Impl& session, std::span<const std::string> input_names,
                                     std::span<const Value> inputs, std::span<const std::string> output_names,
                                     const RunOptions& run_options) {
  LeasedRunState state(session);
  TRY(bind_feeds(session, input_names, inputs, *state));
  TRY(bind_outputs(session, output_names, *state));
  std::vector<Value> results;
  TRY(run_main(session, *state, inputs, run_options, {}, {}, results));
  return results;
}

Expected<std::vector<Value>> execute_in_order(const Session::Impl& session, std::span<const Value> inputs,
                                              const RunOptions& run_options) {
  const graph::Graph& graph = session.graph;
  if (inputs.size() != graph.inputs.size()) {
    return make_error(StatusCode::kInvalidArgument, "the model has ", graph.inputs.size(), " inputs but ",
                      inputs.size(), " values were given");
  }
  LeasedRunState leased(session);
  RunState& state = *leased;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int id = graph.inputs[i];
    TRY(check_value_feed(graph.values[id], inputs[i]));
    state.values[id] = inputs[i];
  }
  TRY(bind_outputs(session, {}, state));
  std::vector<Value> results;
  TRY(run_main(session, state, inputs, run_options, {}, {}, results));
  return results;
}

Expected<int> feed_id(const Session::Impl& session, const std::string& name) {
  const graph::Graph& graph = session.graph;
  const int id = graph.find_value(name);
  const bool overridable =
      id != graph::kNoValue && std::find(session.overridable_initializers.begin(),
                                         session.overridable_initializers.end(), id) != session.overridable_initializers.end();
  if (id == graph::kNoValue || (!graph.values[id].is_graph_input && !overridable)) {
    return make_error(StatusCode::kInvalidArgument, "Invalid input name: ", name);
  }
  return id;
}

Expected<int> output_id(const Session::Impl& session, const std::string& name) {
  const int id = session.graph.find_value(name);
  if (id == graph::kNoValue || !session.graph.values[id].is_graph_output) {
    return make_error(StatusCode::kInvalidArgument, "Invalid output name: ", name);
  }
  return id;
}

Status check_feed_value(const Session::Impl& session, int id, const Value& value) {
  return check_value_feed(session.graph.values[id], value);
}

Status run_main(const Session::Impl& session, RunState& state, std::span<const Value> feeds,
                const RunOptions& run_options, BoundBuffers bound, std::span<const Device> output_devices,
                std::vector<Value>& results) {
  struct EndOfRun {
    const Session::Impl& session;
    RunState& state;
    ~EndOfRun() {
      for (Value& value : state.values) value.reset();
      // The arena's cached blocks held this run's unplanned values, which the new layout will take over.
      if (state.memory.stale()) release_arena_cache(*session.arena);
      state.memory.finish_run(session.plan_rules);
    }
  } end_of_run{session, state};
  std::vector<Value>& values = state.values;
  const graph::Graph& graph = session.graph;
  if (run_options.run_timeout_ms < 0) {
    return make_error(StatusCode::kInvalidArgument, "run_timeout_ms must be >= 0 (0: the session's), got ",
                      run_options.run_timeout_ms);
  }
  const cpu::RunLimits limits(run_options.terminate,
                              run_options.run_timeout_ms > 0 ? run_options.run_timeout_ms : session.run_timeout_ms,
                              session.max_tensor_bytes);
  const cpu::RunLimitsScope limits_scope(limits);
  // Each feed moves to the device the partitioner placed its graph input on (a feed already there is used as is);
  // every other value a caller may feed (an overridable initializer) is read on the host.
  const auto move_feed = [&](int id, Device home) -> Status {
    if (!values[id].is_tensor() || values[id].tensor().device() == home) return Status::ok();
    auto moved = copy_to_device(session, values[id].tensor(), home);
    if (!moved) return moved.status().with_context("Input '" + graph.values[id].name + "': ");
    values[id] = Value(std::move(*moved));
    return Status::ok();
  };
  for (size_t i = 0; i < graph.inputs.size(); ++i) TRY(move_feed(graph.inputs[i], session.input_homes[i]));
  for (int id : session.overridable_initializers) TRY(move_feed(id, Device{}));
  seed_initializers(session.main, values);
  ThreadPool::RunScope run_scope(*session.pool);
  const ScratchScope scratch_scope(state.kernel_scratch);
  begin_arena_run(*session.arena);
  Frame frame(*session.pool, limits, session.arena, state, session.plan_rules);
  state.node_ms.assign(session.profile ? graph.nodes.size() : 0, 0.0);
  state.memory.begin_run();
  TRY(frame.start(session.providers));
  const Status ran = frame.run_nodes(session.main, values, state.scratch, &state.memory, bound, state.node_ms);
  const Status finished = frame.finish();
  TRY(ran);
  TRY(finished);
  if (session.profile) session.profile->add_run(graph, state.node_ms);

  // Outputs that alias a feed, an initializer or a Constant (Identity, Reshape of a weight) are copied: the caller may
  // write into its results, and initializers may live in read-only mapped memory. No output lies in the planned
  // block (graph outputs are never planned), which the check covers too.
  const auto is_borrowed = [&](const Tensor& tensor) {
    const Buffer* buffer = tensor.buffer().get();
    if (state.memory.holds(tensor) ||
        std::binary_search(session.main.persistent_buffers.begin(), session.main.persistent_buffers.end(), buffer)) {
      return true;
    }
    return std::any_of(feeds.begin(), feeds.end(), [&](const Value& input) {
      if (input.is_tensor()) return input.tensor().buffer().get() == buffer;
      return std::any_of(input.elements().begin(), input.elements().end(),
                         [&](const Tensor& element) { return element.buffer().get() == buffer; });
    });
  };
  // Results are returned on the device the caller asked for (the host by default).
  const auto owned = [&](const Tensor& tensor, Device target) -> Expected<Tensor> {
    if (tensor.device() != target || is_borrowed(tensor)) return copy_to_device(session, tensor, target);
    return tensor;
  };
  results.clear();
  results.reserve(state.wanted.size());
  for (size_t w = 0; w < state.wanted.size(); ++w) {
    const int id = state.wanted[w];
    const Value& value = values[id];
    if (!value.is_set()) {
      return make_error(StatusCode::kRuntimeException, "output '", graph.values[id].name, "' was not produced");
    }
    const Device target = w < output_devices.size() ? output_devices[w] : Device{};
    // A result written into its bound buffer stays there, even when that buffer is also a feed (a cache bound as
    // past and present, see bound_output_writable).
    const Tensor* in_bound = bound.empty() ? nullptr : bound[id];
    if (value.is_tensor() && in_bound != nullptr && value.tensor().raw_data() == in_bound->raw_data() &&
        value.tensor().device() == target) {
      results.emplace_back(value.tensor());
    } else if (value.is_tensor()) {
      TRY_ASSIGN(Tensor tensor, owned(value.tensor(), target));
      results.emplace_back(std::move(tensor));
    } else if (value.is_sequence()) {
      std::vector<Tensor> elements;
      for (const Tensor& element : value.elements()) {
        TRY_ASSIGN(Tensor tensor, owned(element, Device{}));
        elements.push_back(std::move(tensor));
      }
      results.push_back(Value::sequence(value.elem_type(), std::move(elements)));
    } else {
      results.push_back(value);
    }
  }
  return Status::ok();
}

}  // namespace nxrt
