// Constant folding: runs the CPU kernel of a node whose inputs are all constants, once, at session creation.
#include <memory>
#include <set>
#include <string>

#include "ep/cpu/kernel.h"
#include "graph/shape_inference.h"
#include "optimizer/passes.h"
#include "optimizer/rewriter.h"

namespace nxrt::optimizer {

namespace {

using graph::kNoValue;

constexpr size_t kMaxFoldedBytes = size_t{64} << 20;
// Outputs larger than this and much larger than the inputs (Expand, Tile, ConstantOfShape...) stay computed at
// run time rather than growing the session's memory.
constexpr size_t kGrowthFloorBytes = size_t{1} << 20;
constexpr size_t kMaxGrowthFactor = 4;

bool is_nondeterministic(const graph::Node& node) {
  static const std::set<std::string> kOps = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                             "RandomUniformLike", "Bernoulli", "Multinomial", "Dropout"};
  return kOps.count(node.op_type) > 0;
}

bool has_subgraph(const graph::Node& node) {
  if (!node.implicit_inputs.empty()) return true;
  for (const graph::Attribute& attribute : node.attributes) {
    if (attribute.g || !attribute.graphs.empty()) return true;
  }
  return false;
}

// Shape and Size of a value whose shape is fully known.
std::optional<Tensor> fold_shape_query(Rewriter& rw, const graph::Node& node) {
  if (!node.domain.empty() || (node.op_type != "Shape" && node.op_type != "Size")) return std::nullopt;
  if (node.inputs.empty() || node.inputs[0] == kNoValue) return std::nullopt;
  const graph::TypeInfo& type = rw.value(node.inputs[0]).type;
  if (!type.is_tensor() || !type.shape) return std::nullopt;
  const auto shape = graph::concrete_shape_of(*type.shape);
  if (!shape) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(shape->size());
  if (node.op_type == "Size") {
    int64_t count = 1;
    for (int64_t d : *shape) count *= d;
    auto tensor = Tensor::allocate(DataType::kInt64, Shape{});
    if (!tensor) return std::nullopt;
    *tensor->data<int64_t>() = count;
    return std::move(*tensor);
  }
  auto start = node.attr_int("start", 0);
  auto end = node.attr_int("end", rank);
  if (!start || !end) return std::nullopt;
  const auto clamp = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t first = clamp(*start);
  const int64_t last = std::max(first, clamp(*end));
  auto tensor = Tensor::allocate(DataType::kInt64, Shape{last - first});
  if (!tensor) return std::nullopt;
  for (int64_t i = first; i < last; ++i) tensor->data<int64_t>()[i - first] = (*shape)[i];
  return std::move(*tensor);
}

// Evaluates `node` with its kernel; nullopt when it cannot or should not be folded.
std::optional<std::vector<Tensor>> evaluate(Rewriter& rw, const graph::Node& node, ThreadPool& pool) {
  const cpu::KernelDef* def = cpu::find_kernel(node.domain, node.op_type, node.opset);
  if (!def) return std::nullopt;
  cpu::KernelInfo info{node, {}, {}, {}, &rw.graph(), nullptr};
  std::vector<const Tensor*> inputs;
  size_t input_bytes = 0;
  for (int input : node.inputs) {
    const Tensor* constant = input == kNoValue ? nullptr : rw.constant(input);
    info.input_types.push_back(constant ? constant->dtype() : DataType::kUndefined);
    info.constant_inputs.push_back(constant);
    inputs.push_back(constant);
    if (constant) input_bytes += constant->storage_bytes();
  }
  for (int output : node.outputs) {
    const bool typed = output != kNoValue && rw.value(output).type.is_tensor();
    info.output_types.push_back(typed ? rw.value(output).type.elem_type : DataType::kUndefined);
  }
  if (def->type_input >= 0 && static_cast<size_t>(def->type_input) < info.input_types.size()) {
    const DataType type = info.input_types[def->type_input];
    if (type != DataType::kUndefined && !(def->types & (cpu::DataTypeMask{1} << static_cast<int>(type)))) {
      return std::nullopt;
    }
  }
  auto kernel = def->create(info);
  if (!kernel || (*kernel)->takes_values() || (*kernel)->constant_output()) return std::nullopt;
  std::vector<cpu::OutputDesc> descs;
  if (!(*kernel)->reshape(inputs, descs).is_ok() || descs.size() != node.outputs.size()) return std::nullopt;
  size_t output_bytes = 0;
  for (const cpu::OutputDesc& desc : descs) {
    const std::optional<int64_t> count = checked_numel(desc.shape);
    if (!count || *count > (int64_t{1} << 40)) return std::nullopt;  // also keeps the byte sum from overflowing
    output_bytes += data_type_storage_bytes(desc.dtype, *count);
  }
  if (output_bytes > kMaxFoldedBytes) return std::nullopt;
  if (output_bytes > kGrowthFloorBytes && output_bytes > kMaxGrowthFactor * input_bytes) return std::nullopt;
  std::vector<Tensor> outputs;
  if (const int alias = (*kernel)->alias_input(); alias >= 0) {
    if (static_cast<size_t>(alias) >= inputs.size() || !inputs[alias]) return std::nullopt;
    auto copy = Tensor::copy_of(*inputs[alias]);
    if (!copy) return std::nullopt;
    outputs.push_back(copy->reshaped(descs[0].shape));
    return outputs;
  }
  for (const cpu::OutputDesc& desc : descs) {
    auto tensor = Tensor::allocate(desc.dtype, desc.shape);
    if (!tensor) return std::nullopt;
    outputs.push_back(std::move(*tensor));
  }
  if (!(*kernel)->run(inputs, outputs, pool).is_ok()) return std::nullopt;
  return outputs;
}

bool foldable(Rewriter& rw, const graph::Node& node) {
  if (node.op_type == "Constant" || is_nondeterministic(node) || has_subgraph(node)) return false;
  bool any_input = false;
  for (int input : node.inputs) {
    if (input == kNoValue) continue;
    if (!rw.constant(input)) return false;
    any_input = true;
  }
  if (!any_input) return false;
  for (int output : node.outputs) {
    if (output != kNoValue && !rw.is_private(output)) return false;
  }
  return true;
}

}  // namespace

Expected<bool> fold_constants(graph::Graph& graph) {
  Rewriter rw(graph);
  std::unique_ptr<ThreadPool> pool;
  for (int n = 0; n < rw.node_count(); ++n) {
    if (rw.is_foreign(n)) continue;
    const graph::Node& node = rw.node(n);
    std::optional<std::vector<Tensor>> results;
    if (auto shape = fold_shape_query(rw, node); shape && node.outputs.size() == 1 && rw.is_private(node.outputs[0])) {
      results.emplace();
      results->push_back(std::move(*shape));
    } else if (foldable(rw, node)) {
      if (!pool) pool = std::make_unique<ThreadPool>(1);
      results = evaluate(rw, node, *pool);
    }
    if (!results) continue;
    const std::vector<int> outputs = node.outputs;
    rw.remove(n);
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i] == kNoValue) continue;
      graph::Value& value = rw.value(outputs[i]);
      value.type = graph::TypeInfo::tensor((*results)[i].dtype(), graph::symbolic_shape_of((*results)[i].shape()));
      value.initializer = std::move((*results)[i]);
    }
  }
  TRY(rw.finish());
  return rw.changed();
}

namespace {

// Gives `sub` its own copy (same buffer) of every value it reads from `graph` that is a constant there; returns
// whether any was taken.
bool take_outer_constants(const graph::Graph& graph, graph::Graph& sub) {
  bool taken = false;
  std::vector<int> still_outer;
  for (int id : sub.outer_scope_inputs) {
    graph::Value& value = sub.values[id];
    const Tensor* constant = graph::constant_value(graph, graph.find_value(value.name));
    if (!constant || value.producer != kNoValue) {
      still_outer.push_back(id);
      continue;
    }
    value.initializer = *constant;
    value.type = graph::TypeInfo::tensor(constant->dtype(), graph::symbolic_shape_of(constant->shape()));
    value.is_outer_scope = false;
    taken = true;
  }
  sub.outer_scope_inputs = std::move(still_outer);
  return taken;
}

}  // namespace

bool import_outer_constants(graph::Graph& graph) {
  bool changed = false;
  for (graph::Node& node : graph.nodes) {
    bool node_changed = false;
    for (graph::Attribute& attribute : node.attributes) {
      if (attribute.g) node_changed = take_outer_constants(graph, *attribute.g) || node_changed;
      for (auto& sub : attribute.graphs) node_changed = take_outer_constants(graph, *sub) || node_changed;
    }
    if (!node_changed) continue;
    node.implicit_inputs.clear();
    for (const std::string& name : graph::subgraph_outer_reads(node)) {
      const int outer = graph.find_value(name);
      if (outer != kNoValue) node.implicit_inputs.push_back(outer);
    }
    changed = true;
  }
  if (changed) graph::rebuild_links(graph);
  return changed;
}

}  // namespace nxrt::optimizer
