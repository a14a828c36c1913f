#include "session/session.h"

#include <algorithm>
#include <mutex>

#include "ep/cpu/cpu_provider.h"
#include "ep/cpu/kernel.h"
#include "ep/provider_factory.h"
#include "graph/shape_inference.h"
#include "import/importer.h"
#include "onnx/model_proto.h"
#include "optimizer/optimizer.h"
#include "optimizer/rewriter.h"
#include "session/executor.h"
#include "session/partitioner.h"
#include "session/session_impl.h"

namespace nxrt {

namespace {

// Fixes the graph inputs' free dims named in `overrides` (by symbolic name) or `by_denotation` (by the dim's
// denotation, from `denotations`: input name -> per-dim denotation).
void apply_free_dimension_overrides(graph::Graph& graph, const std::map<std::string, int64_t>& overrides,
                                    const std::map<std::string, int64_t>& by_denotation,
                                    const std::map<std::string, std::vector<std::string>>& denotations) {
  if (overrides.empty() && by_denotation.empty()) return;
  for (int input : graph.inputs) {
    auto& shape = graph.values[input].type.shape;
    if (!shape) continue;
    const auto marked = denotations.find(graph.values[input].name);
    for (size_t d = 0; d < shape->size(); ++d) {
      graph::Dim& dim = (*shape)[d];
      if (dim.is_known()) continue;
      const auto found = dim.is_symbolic() ? overrides.find(dim.param) : overrides.end();
      if (found != overrides.end()) {
        dim = graph::Dim::known(found->second);
      } else if (marked != denotations.end() && d < marked->second.size()) {
        const auto by_mark = by_denotation.find(marked->second[d]);
        if (by_mark != by_denotation.end()) dim = graph::Dim::known(by_mark->second);
      }
    }
  }
}

ModelMetadata metadata_of(const onnx::ModelProto& model) {
  ModelMetadata metadata;
  metadata.producer_name = std::string(model.producer_name);
  metadata.producer_version = std::string(model.producer_version);
  metadata.domain = std::string(model.domain);
  metadata.description = std::string(model.doc_string);
  metadata.version = model.model_version;
  metadata.ir_version = model.ir_version;
  if (model.graph) {
    metadata.graph_name = std::string(model.graph->name);
    metadata.graph_description = std::string(model.graph->doc_string);
  }
  for (const onnx::StringStringEntry& entry : model.metadata_props) {
    metadata.custom_metadata[std::string(entry.key)] = std::string(entry.value);
  }
  return metadata;
}

std::vector<ValueDesc> describe_values(const graph::Graph& graph, const std::vector<int>& ids) {
  std::vector<ValueDesc> descs;
  for (int id : ids) descs.push_back(ValueDesc{graph.values[id].name, graph.values[id].type});
  return descs;
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Expected<std::unique_ptr<Session>> Session::create_from_file(const std::string& path, const SessionOptions& options) {
  TRY_ASSIGN(auto bytes, onnx::map_model_file(path));
  TRY_ASSIGN(auto impl, SessionImplBuilder::build(std::move(bytes), options));
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Expected<std::unique_ptr<Session>> Session::create_from_bytes(std::string_view bytes, const SessionOptions& options) {
  TRY_ASSIGN(auto impl, SessionImplBuilder::build(onnx::model_bytes_from_buffer(bytes), options));
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Expected<std::unique_ptr<Session>> Session::create_from_model_bytes(std::shared_ptr<const onnx::ModelBytes> bytes,
                                                                   const SessionOptions& options) {
  TRY_ASSIGN(auto impl, SessionImplBuilder::build(std::move(bytes), options));
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::vector<ValueDesc>& Session::inputs() const { return impl_->inputs; }
const std::vector<ValueDesc>& Session::outputs() const { return impl_->outputs; }
const ModelMetadata& Session::metadata() const { return impl_->metadata; }
const std::map<std::string, int64_t>& Session::opsets() const { return impl_->graph.opsets; }
const graph::Graph& Session::graph() const { return impl_->graph; }
Session::ArenaStats Session::arena_stats() const {
  ArenaStats stats = tensor_arena_stats(*impl_->arena);
  stats.planned_block_bytes = static_cast<int64_t>(impl_->run_states->largest_block_bytes());
  return stats;
}
int Session::num_threads() const { return impl_->pool->num_threads(); }

std::vector<NodeAssignment> Session::node_assignments() const {
  std::vector<NodeAssignment> out;
  const graph::Graph& graph = *impl_->main.source;
  for (size_t i = 0; i < graph.nodes.size() && i < impl_->main.providers.size(); ++i) {
    const graph::Node& node = graph.nodes[i];
    std::string provider(impl_->main.providers[i]->name());
    // A fused elementwise chain reports the model's nodes it runs (its `ops` and `node_names`, ai.onnx ops).
    const graph::Attribute* ops = node.find_attribute("ops");
    const graph::Attribute* names = node.find_attribute("node_names");
    const bool fused_chain = node.domain == optimizer::kNxrtDomain && node.op_type == "FusedElementwise";
    if (fused_chain && ops != nullptr && names != nullptr && ops->strings.size() == names->strings.size()) {
      for (size_t m = 0; m < ops->strings.size(); ++m) {
        out.push_back({names->strings[m], ops->strings[m], "", provider});
      }
      continue;
    }
    out.push_back({node.name, node.op_type, node.domain, std::move(provider)});
  }
  return out;
}

std::vector<std::string> Session::providers() const {
  std::vector<std::string> names;
  for (const auto& provider : impl_->providers) names.emplace_back(provider->name());
  return names;
}

Expected<std::vector<Tensor>> Session::run(std::span<const std::string> input_names, std::span<const Tensor> inputs,
                                           std::span<const std::string> output_names,
                                           const RunOptions& run_options) const {
  const std::vector<Value> feeds(inputs.begin(), inputs.end());
  TRY_ASSIGN(std::vector<Value> results, execute(*impl_, input_names, feeds, output_names, run_options));
  std::vector<Tensor> tensors;
  tensors.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].is_tensor()) {
      const std::string& name = output_names.empty() ? impl_->outputs[i].name : output_names[i];
      return make_error(StatusCode::kInvalidArgument, "output '", name,
                        "' is a sequence, a map or an optional, not a tensor; use run_values");
    }
    tensors.push_back(std::move(results[i].tensor()));
  }
  return tensors;
}

Expected<std::vector<Value>> Session::run_in_order(std::span<const Value> inputs, const RunOptions& run_options) const {
  return execute_in_order(*impl_, inputs, run_options);
}

Expected<std::vector<Value>> Session::run_values(std::span<const std::string> input_names,
                                                 std::span<const Value> inputs,
                                                 std::span<const std::string> output_names,
                                                 const RunOptions& run_options) const {
  return execute(*impl_, input_names, inputs, output_names, run_options);
}

Expected<std::unique_ptr<Session::Impl>> SessionImplBuilder::build(std::shared_ptr<const onnx::ModelBytes> bytes,
                                                                   const SessionOptions& options) {
  if (options.run_timeout_ms < 0) {
    return make_error(StatusCode::kInvalidArgument, "run_timeout_ms must be >= 0 (0: no deadline), got ",
                      options.run_timeout_ms);
  }
  TRY_ASSIGN(ProviderList providers, ep::session_providers(options.execution_providers));
  TRY_ASSIGN(onnx::ModelProto model, onnx::parse_model(bytes->bytes()));
  TRY_ASSIGN(import::ImportedModel imported,
             import::import_model(model, bytes,
                                  import::ImportOptions{options.max_tensor_bytes,
                                                        options.initializers.empty() ? nullptr : &options.initializers}));
  auto impl = std::make_unique<Session::Impl>();
  impl->bytes = std::move(bytes);
  impl->graph = std::move(imported.graph);
  impl->overridable_initializers = std::move(imported.overridable_initializers);
  impl->metadata = metadata_of(model);
  graph::Graph& graph = impl->graph;
  apply_free_dimension_overrides(graph, options.free_dimension_overrides,
                                 options.free_dimension_overrides_by_denotation, imported.input_dim_denotations);
  if (options.edit_graph) TRY(options.edit_graph(graph));
  TRY(graph::infer_shapes(graph));
  TRY(optimizer::optimize(graph, options.graph_optimization_level));
  if (auto partitioned = partition(graph, providers, options.disable_cpu_fallback); !partitioned) {
    return partitioned.status();
  }
  for (const auto& provider : providers) TRY(provider->optimize(graph, options.graph_optimization_level));
  impl->inputs = describe_values(graph, graph.inputs);
  impl->outputs = describe_values(graph, graph.outputs);
  impl->providers = std::move(providers);
  // Asked again after the providers' passes, which may have replaced the readers partition() saw.
  for (int input : graph.inputs) impl->input_homes.push_back(graph_input_home(graph, input, impl->providers));
  TRY(compile(graph, impl->providers, impl->main));
  impl->plan_rules = make_plan_rules(impl->main, options.max_tensor_bytes);
  impl->pool = options.shared_thread_pool ? options.shared_thread_pool
                                          : std::make_shared<ThreadPool>(options.intra_op_num_threads);
  if (options.enable_profiling) impl->profile = options.profile ? options.profile : std::make_shared<NodeProfile>();
  impl->run_timeout_ms = options.run_timeout_ms;
  impl->max_tensor_bytes = options.max_tensor_bytes;
  return impl;
}

Status SessionImplBuilder::compile(const graph::Graph& graph, const ProviderList& providers,
                                   CompiledGraph& compiled) {
  compiled.source = &graph;
  for (const graph::Node& node : graph.nodes) {
    const ep::ExecutionProvider& provider = provider_of(node, providers);
    const ep::KernelDef* row = provider.registry().find(node.domain, node.op_type, node.opset);
    TRY_ASSIGN(auto kernel, create_kernel(graph, node, provider));
    compiled.kernels.push_back(std::move(kernel));
    compiled.providers.push_back(&provider);
    compiled.host_outputs.push_back(row != nullptr ? row->host_outputs : 0);
  }
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const graph::Value& value = graph.values[id];
    if (!value.initializer) continue;
    compiled.persistent_buffers.push_back(value.initializer->buffer().get());
    compiled.initializer_ids.push_back(static_cast<int>(id));
  }
  for (const auto& kernel : compiled.kernels) {
    if (const Tensor* constant = kernel->constant_output()) {
      compiled.persistent_buffers.push_back(constant->buffer().get());
    }
  }
  std::sort(compiled.persistent_buffers.begin(), compiled.persistent_buffers.end());
  compiled.last_use.assign(graph.values.size(), -1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (int input : graph.nodes[n].inputs) {
      if (input != graph::kNoValue) compiled.last_use[input] = static_cast<int>(n);
    }
    for (int input : graph.nodes[n].implicit_inputs) compiled.last_use[input] = static_cast<int>(n);
  }
  for (int output : graph.outputs) compiled.last_use[output] = static_cast<int>(graph.nodes.size());
  return Status::ok();
}

namespace {

// Subgraphs run on the CPU provider (see partitioner.h).
class SessionSubgraphCompiler final : public ep::SubgraphCompiler {
 public:
  Expected<std::shared_ptr<const ep::CompiledSubgraph>> compile(const graph::Graph& subgraph) const override {
    auto compiled = std::make_shared<CompiledGraph>();
    TRY(SessionImplBuilder::compile(subgraph, ProviderList{cpu::cpu_provider()}, *compiled));
    return std::shared_ptr<const ep::CompiledSubgraph>(std::move(compiled));
  }
};

const SessionSubgraphCompiler kSubgraphCompiler;

}  // namespace

Expected<std::unique_ptr<ep::Kernel>> SessionImplBuilder::create_kernel(const graph::Graph& graph,
                                                                        const graph::Node& node,
                                                                        const ep::ExecutionProvider& provider) {
  const ep::KernelDef* def = provider.registry().find(node.domain, node.op_type, node.opset);
  if (!def) return ep::missing_kernel_error(node);
  // Every operator has at least one output (ONNX Runtime rejects "output size 0" as well); kernels rely on it.
  if (node.outputs.empty()) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), " has no outputs; ", node.op_type,
                      " declares at least one");
  }
  ep::KernelInfo info{node, {}, {}, {}, &graph, &kSubgraphCompiler, &provider};
  for (int input : node.inputs) {
    const bool present = input != graph::kNoValue;
    info.input_types.push_back(present && graph.values[input].type.is_tensor() ? graph.values[input].type.elem_type
                                                                               : DataType::kUndefined);
    info.constant_inputs.push_back(present ? graph::constant_value(graph, input) : nullptr);
  }
  for (int output : node.outputs) {
    const bool present = output != graph::kNoValue;
    info.output_types.push_back(present && graph.values[output].type.is_tensor() ? graph.values[output].type.elem_type
                                                                                 : DataType::kUndefined);
  }
  if (def->type_input >= 0 && static_cast<size_t>(def->type_input) < info.input_types.size()) {
    const DataType type = info.input_types[def->type_input];
    if (!ep::accepts_input_type(*def, type)) {
      return ep::missing_kernel_error(node, "no kernel for input type " + tensor_type_string(type));
    }
  }
  auto kernel = def->create(info);
  if (!kernel) return kernel.status().with_context("Failed to create kernel for " + node.describe() + ": ");
  const auto type_input = static_cast<size_t>(def->type_input);
  if (def->type_input >= 0 &&
      (type_input >= info.input_types.size() || info.input_types[type_input] == DataType::kUndefined)) {
    return ep::with_input_type_check(*def, node, std::move(*kernel));  // the dtype is checked at run instead
  }
  return kernel;
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

}  // namespace nxrt
