#include "session/executor.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "ep/cpu/run_limits.h"

namespace nxrt {

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NXRT_EXECUTOR_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(NXRT_EXECUTOR_ASAN)
constexpr bool kReuseBlocks = false;
#else
constexpr bool kReuseBlocks = true;
#endif

class TensorArena {
 public:
  TensorArena() = default;
  TensorArena(const TensorArena&) = delete;
  TensorArena& operator=(const TensorArena&) = delete;
  ~TensorArena() {
    for (const auto& entry : cached_) std::free(entry.second.block);
  }

  // Called when a session run starts (not for subgraph runs): blocks given back in the previous run or this one
  // are the working set that the next requests will hit.
  void begin_run() {
    std::lock_guard lock(mutex_);
    ++runs_;
  }

  // A 64-byte aligned block of at least `bytes`; its usable size is written to `size`. Null when out of memory.
  void* take(size_t bytes, size_t& size) {
    size = std::max<size_t>((bytes + 63) / 64 * 64, 64);
    if (kReuseBlocks) {
      std::lock_guard lock(mutex_);
      auto it = cached_.lower_bound(size);
      if (it != cached_.end() && it->first <= size + size / 8) {
        void* block = it->second.block;
        size = it->first;
        in_use_ += size;
        cached_bytes_ -= size;
        cached_.erase(it);
        return block;
      }
      in_use_ += size;
      peak_in_use_ = std::max(peak_in_use_, in_use_);
      ++system_allocations_;
      trim_cache();
    }
    void* block = std::aligned_alloc(64, size);
    if (block == nullptr && kReuseBlocks) {
      std::lock_guard lock(mutex_);
      in_use_ -= size;
    }
    return block;
  }

  Session::ArenaStats stats() {
    std::lock_guard lock(mutex_);
    return {static_cast<int64_t>(system_allocations_), static_cast<int64_t>(cached_bytes_),
            static_cast<int64_t>(peak_in_use_)};
  }

  void give_back(void* block, size_t size) {
    if (!kReuseBlocks) {
      std::free(block);
      return;
    }
    std::lock_guard lock(mutex_);
    in_use_ -= size;
    cached_bytes_ += size;
    cached_.emplace(size, CachedBlock{block, runs_});
  }

 private:
  struct CachedBlock {
    void* block;
    uint64_t run;  // the run during which it was given back
  };

  // After a miss (mutex held): frees cached blocks, largest first, while the blocks held exceed the peak in use.
  // Blocks of the previous and the current run are spared up to kWorkingSetFactor x the peak: the blocks one run
  // touches add up to more than its peak in use (a block serves only requests of about its size), and freeing
  // them would make the next run miss and page-fault fresh memory again.
  void trim_cache() {
    const auto stale = [&](const CachedBlock& cached) { return cached.run + 1 < runs_; };
    for (auto it = cached_.end(); it != cached_.begin() && in_use_ + cached_bytes_ > peak_in_use_;) {
      --it;
      if (stale(it->second)) it = release(it);
    }
    while (!cached_.empty() && in_use_ + cached_bytes_ > kWorkingSetFactor * peak_in_use_) {
      release(std::prev(cached_.end()));
    }
  }

  // Frees a cached block (mutex held); returns the entry after it.
  std::multimap<size_t, CachedBlock>::iterator release(std::multimap<size_t, CachedBlock>::iterator it) {
    cached_bytes_ -= it->first;
    std::free(it->second.block);
    return cached_.erase(it);
  }

  static constexpr size_t kWorkingSetFactor = 3;
  std::mutex mutex_;
  std::multimap<size_t, CachedBlock> cached_;  // usable size -> block
  size_t cached_bytes_ = 0;
  size_t in_use_ = 0;
  size_t peak_in_use_ = 0;
  uint64_t runs_ = 0;
  uint64_t system_allocations_ = 0;
};

std::shared_ptr<TensorArena> make_tensor_arena() { return std::make_shared<TensorArena>(); }
void begin_arena_run(TensorArena& arena) { arena.begin_run(); }
Session::ArenaStats tensor_arena_stats(TensorArena& arena) { return arena.stats(); }

Expected<Tensor> allocate_from_arena(const std::shared_ptr<TensorArena>& arena, DataType dtype, Shape shape) {
  if (dtype == DataType::kString) return Tensor::allocate(dtype, std::move(shape));
  const auto count = checked_numel(shape);
  if (!count) return make_error(StatusCode::kInvalidArgument, "invalid tensor shape ", shape_to_string(shape));
  const int bits = data_type_bits(dtype);
  if (bits == 0) return make_error(StatusCode::kInvalidArgument, "cannot allocate a tensor of undefined type");
  size_t bits_total = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(*count), static_cast<size_t>(bits), &bits_total) ||
      bits_total > (size_t{1} << 62)) {
    return make_error(StatusCode::kInvalidArgument, "tensor of shape ", shape_to_string(shape), " is too large");
  }
  size_t size = 0;
  void* block = arena->take((bits_total + 7) / 8, size);
  if (block == nullptr) {
    return make_error(StatusCode::kRuntimeException, "failed to allocate ", (bits_total + 7) / 8,
                      " bytes for a tensor of shape ", shape_to_string(shape));
  }
  std::shared_ptr<void> owner(block, [arena, size](void* pointer) { arena->give_back(pointer, size); });
  return Tensor::wrap(dtype, std::move(shape), block, Device{}, std::move(owner));
}

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

std::string value_type_string(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kTensor: return tensor_type_string(value.tensor().dtype());
    case Value::Kind::kSequence: return "seq(" + tensor_type_string(value.elem_type()) + ")";
    case Value::Kind::kNone: return "optional(none)";
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
  switch (type.kind) {
    case graph::TypeInfo::Kind::kSequence:
      if (!value.is_sequence()) return mismatch();
      return Status::ok();
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
class Frame final : public ep::RunContext {
 public:
  Frame(ThreadPool& pool, const cpu::RunLimits& limits, const std::shared_ptr<TensorArena>& arena)
      : pool_(pool), limits_(limits), arena_(arena) {}

  ThreadPool& pool() override { return pool_; }

  // Creates each provider's stream for this run and tells the providers the run starts.
  Status start(const ProviderList& providers) {
    for (const auto& provider : providers) {
      streams_.push_back(ProviderStream{provider.get(), provider->create_stream()});
      TRY(provider->run_started(streams_.back().stream.get()));
    }
    return Status::ok();
  }

  // Waits for every provider's work: outputs on any device are complete after it.
  Status finish() {
    Status first = Status::ok();
    for (ProviderStream& entry : streams_) {
      const Status status = entry.provider->run_finished(entry.stream.get());
      if (first.is_ok() && !status.is_ok()) first = status;
    }
    streams_.clear();
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
    TRY(run_nodes(compiled, values));
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
  // releasing each value after its last reader. `bound`: see BoundBuffers (main graph only). `node_ms`: when
  // not empty, receives each node's wall time (one entry per node).
  Status run_nodes(const CompiledGraph& compiled, std::vector<Value>& values, BoundBuffers bound = {},
                   std::span<double> node_ms = {}) {
    const graph::Graph& graph = compiled.graph();
    std::chrono::steady_clock::time_point node_start;
    std::vector<const Tensor*> tensor_inputs;
    std::vector<const Value*> value_inputs;
    std::vector<ep::OutputDesc> descs;
    std::vector<Tensor> tensor_outputs;
    std::vector<Value> value_outputs;
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
        const Status status = kernel.run_values(value_inputs, value_outputs, *this);
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
                              bound, descs, tensor_outputs));
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
      if (!node_ms.empty()) {
        node_ms[n] =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - node_start).count();
      }
    }
    return Status::ok();
  }

 private:
  struct ProviderStream {
    const ep::ExecutionProvider* provider;
    std::unique_ptr<ep::Stream> stream;
  };

  ep::Stream* stream_of(const ep::ExecutionProvider& provider) {
    for (ProviderStream& entry : streams_) {
      if (entry.provider == &provider) return entry.stream.get();
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
                           std::span<const Tensor* const> inputs, BoundBuffers bound,
                           std::vector<ep::OutputDesc>& descs, std::vector<Tensor>& outputs) {
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
      auto allocated = allocate_output(provider, host, descs[o].dtype, std::move(descs[o].shape));
      if (!allocated) return node_failure(node, allocated.status());
      outputs[o] = std::move(allocated).value();
    }
    ep::KernelContext context{inputs, outputs, pool_, stream_of(provider)};
    status = kernel.execute(context);
    if (!status.is_ok()) return node_failure(node, status);
    return Status::ok();
  }

  ThreadPool& pool_;
  const cpu::RunLimits& limits_;
  const std::shared_ptr<TensorArena>& arena_;
  std::vector<ProviderStream> streams_;
};

Expected<std::vector<Value>> run_fed(const Session::Impl& session, std::vector<Value>& values,
                                     std::span<const int> wanted, std::span<const Value> inputs,
                                     const RunOptions& run_options, BoundBuffers bound,
                                     std::span<const Device> output_devices);

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

void NodeProfile::add_run(const graph::Graph& graph, std::span<const double> node_ms) {
  std::lock_guard lock(mutex_);
  if (nodes_.size() != graph.nodes.size()) {
    nodes_.assign(graph.nodes.size(), NodeTiming());
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      nodes_[n].name = graph.nodes[n].name;
      nodes_[n].op_type = graph.nodes[n].op_type;
    }
  }
  for (size_t n = 0; n < node_ms.size() && n < nodes_.size(); ++n) {
    ++nodes_[n].calls;
    nodes_[n].total_ms += node_ms[n];
  }
  ++runs_;
}

std::vector<NodeTiming> NodeProfile::nodes() const {
  std::lock_guard lock(mutex_);
  return nodes_;
}

int64_t NodeProfile::runs() const {
  std::lock_guard lock(mutex_);
  return runs_;
}

Expected<std::vector<Value>> execute(const Session::Impl& session, std::span<const std::string> input_names,
                                     std::span<const Value> inputs, std::span<const std::string> output_names,
                                     const RunOptions& run_options, BoundBuffers bound,
                                     std::span<const Device> output_devices) {
  const graph::Graph& graph = session.graph;
  if (input_names.size() != inputs.size()) {
    return make_error(StatusCode::kInvalidArgument, "got ", input_names.size(), " input names but ", inputs.size(),
                      " input values");
  }
  std::vector<Value> values(graph.values.size());
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
    TRY(check_value_feed(graph.values[id], inputs[i]));
    values[id] = inputs[i];
    fed[id] = true;
  }
  for (int id : graph.inputs) {
    if (!fed[id]) return make_error(StatusCode::kInvalidArgument, "Missing Input: ", graph.values[id].name);
  }

  std::vector<int> selected;
  for (const std::string& name : output_names) {
    const int id = graph.find_value(name);
    if (id == graph::kNoValue || !graph.values[id].is_graph_output) {
      return make_error(StatusCode::kInvalidArgument, "Invalid output name: ", name);
    }
    selected.push_back(id);
  }
  return run_fed(session, values, output_names.empty() ? std::span<const int>(graph.outputs) : selected, inputs,
                 run_options, bound, output_devices);
}

Expected<std::vector<Value>> execute_in_order(const Session::Impl& session, std::span<const Value> inputs,
                                              const RunOptions& run_options) {
  const graph::Graph& graph = session.graph;
  if (inputs.size() != graph.inputs.size()) {
    return make_error(StatusCode::kInvalidArgument, "the model has ", graph.inputs.size(), " inputs but ",
                      inputs.size(), " values were given");
  }
  std::vector<Value> values(graph.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int id = graph.inputs[i];
    TRY(check_value_feed(graph.values[id], inputs[i]));
    values[id] = inputs[i];
  }
  return run_fed(session, values, graph.outputs, inputs, run_options, {}, {});
}

namespace {

Expected<std::vector<Value>> run_fed(const Session::Impl& session, std::vector<Value>& values,
                                     std::span<const int> wanted, std::span<const Value> inputs,
                                     const RunOptions& run_options, BoundBuffers bound,
                                     std::span<const Device> output_devices) {
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
  begin_arena_run(*session.arena);
  Frame frame(*session.pool, limits, session.arena);
  std::vector<double> node_ms(session.profile ? graph.nodes.size() : 0);
  TRY(frame.start(session.providers));
  const Status ran = frame.run_nodes(session.main, values, bound, node_ms);
  const Status finished = frame.finish();
  TRY(ran);
  TRY(finished);
  if (session.profile) session.profile->add_run(graph, node_ms);

  // Outputs that alias a feed, an initializer or a Constant (Identity, Reshape of a weight) are copied: the caller may
  // write into its results, and initializers may live in read-only mapped memory.
  const auto is_borrowed = [&](const Buffer* buffer) {
    if (std::binary_search(session.main.persistent_buffers.begin(), session.main.persistent_buffers.end(), buffer)) {
      return true;
    }
    return std::any_of(inputs.begin(), inputs.end(), [&](const Value& input) {
      if (input.is_tensor()) return input.tensor().buffer().get() == buffer;
      return std::any_of(input.elements().begin(), input.elements().end(),
                         [&](const Tensor& element) { return element.buffer().get() == buffer; });
    });
  };
  // Results are returned on the device the caller asked for (the host by default).
  const auto owned = [&](const Tensor& tensor, Device target) -> Expected<Tensor> {
    if (tensor.device() != target || is_borrowed(tensor.buffer().get())) {
      return copy_to_device(session, tensor, target);
    }
    return tensor;
  };
  std::vector<Value> results;
  results.reserve(wanted.size());
  for (size_t w = 0; w < wanted.size(); ++w) {
    const int id = wanted[w];
    const Value& value = values[id];
    if (!value.is_set()) {
      return make_error(StatusCode::kRuntimeException, "output '", graph.values[id].name, "' was not produced");
    }
    const Device target = w < output_devices.size() ? output_devices[w] : Device{};
    if (value.is_tensor()) {
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
  return results;
}

}  // namespace

}  // namespace nxrt
