#include "optimizer/rewriter.h"

#include <algorithm>
#include <limits>

#include "graph/shape_inference.h"

namespace nxrt::optimizer {

using graph::kNoValue;

Rewriter::Rewriter(graph::Graph& graph, std::string_view owner) : graph_(graph), owner_(owner) {
  graph::rebuild_links(graph_);
  removed_.assign(graph_.nodes.size(), false);
  read_by_subgraph_.assign(graph_.values.size(), false);
  for (const graph::Node& node : graph_.nodes) {
    for (int value : node.implicit_inputs) read_by_subgraph_[value] = true;
  }
}

bool Rewriter::is_private(int value) const {
  if (value == kNoValue) return false;
  const graph::Value& v = graph_.values[value];
  return !v.is_graph_output && !read_by_subgraph_[value];
}

bool Rewriter::is_foreign(int node) const {
  const std::string& provider = graph_.nodes[node].provider;
  return !owner_.empty() && !provider.empty() && provider != owner_;
}

int Rewriter::sole_consumer(int value) const {
  if (!is_private(value)) return -1;
  const auto& consumers = graph_.values[value].consumers;
  if (consumers.size() != 1 || is_foreign(consumers[0])) return -1;
  const graph::Node& reader = graph_.nodes[consumers[0]];
  return std::count(reader.inputs.begin(), reader.inputs.end(), value) == 1 ? consumers[0] : -1;
}

int Rewriter::producer(int value) const {
  const int node = any_producer(value);
  return node >= 0 && is_foreign(node) ? -1 : node;
}

int Rewriter::any_producer(int value) const {
  if (value == kNoValue) return -1;
  const int node = graph_.values[value].producer;
  return node == kNoValue || removed_[node] ? -1 : node;
}

const Tensor* Rewriter::constant(int value) const {
  if (value == kNoValue) return nullptr;
  const graph::Value& v = graph_.values[value];
  if (v.initializer && !v.is_graph_input) return &*v.initializer;
  if (producer(value) < 0) return nullptr;
  return graph::constant_value(graph_, value);
}

std::optional<double> Rewriter::scalar_constant(int value) const {
  const Tensor* tensor = constant(value);
  if (!tensor || tensor->numel() != 1 || tensor->device().type != DeviceType::kCpu) return std::nullopt;
  switch (tensor->dtype()) {
    case DataType::kFloat32: return static_cast<double>(*tensor->data<float>());
    case DataType::kFloat64: return *tensor->data<double>();
    case DataType::kInt32: return static_cast<double>(*tensor->data<int32_t>());
    case DataType::kInt64: return static_cast<double>(*tensor->data<int64_t>());
    default: return std::nullopt;
  }
}

std::optional<std::pair<float, float>> Rewriter::clip_bounds(const graph::Node& clip) const {
  float low = -std::numeric_limits<float>::infinity();
  float high = std::numeric_limits<float>::infinity();
  if (clip.opset < 11) {
    const auto min = clip.attr_float("min", low);
    const auto max = clip.attr_float("max", high);
    if (!min || !max) return std::nullopt;
    return std::pair{*min, *max};
  }
  for (size_t i = 1; i < clip.inputs.size() && i < 3; ++i) {
    if (clip.inputs[i] == graph::kNoValue) continue;
    const auto bound = scalar_constant(clip.inputs[i]);
    if (!bound) return std::nullopt;
    (i == 1 ? low : high) = static_cast<float>(*bound);
  }
  return std::pair{low, high};
}

void Rewriter::unlink_input(int value, int node) {
  auto& consumers = graph_.values[value].consumers;
  const auto found = std::find(consumers.begin(), consumers.end(), node);
  if (found != consumers.end()) consumers.erase(found);
}

void Rewriter::remove(int node) {
  if (removed_[node]) return;
  removed_[node] = true;
  changed_ = true;
  graph::Node& n = graph_.nodes[node];
  for (int input : n.inputs) {
    if (input != kNoValue) unlink_input(input, node);
  }
  for (int input : n.implicit_inputs) unlink_input(input, node);
  for (int output : n.outputs) {
    if (output != kNoValue && graph_.values[output].producer == node) graph_.values[output].producer = kNoValue;
  }
}

int Rewriter::add(graph::Node node) {
  const int index = static_cast<int>(graph_.nodes.size());
  if (node.provider.empty()) node.provider = owner_;
  for (int input : node.inputs) {
    if (input != kNoValue) graph_.values[input].consumers.push_back(index);
  }
  for (int input : node.implicit_inputs) graph_.values[input].consumers.push_back(index);
  for (int output : node.outputs) {
    if (output != kNoValue) graph_.values[output].producer = index;
  }
  graph_.nodes.push_back(std::move(node));
  removed_.push_back(false);
  changed_ = true;
  return index;
}

void Rewriter::set_input(int node, size_t slot, int value) {
  int& input = graph_.nodes[node].inputs[slot];
  if (input != kNoValue) unlink_input(input, node);
  input = value;
  if (value != kNoValue) graph_.values[value].consumers.push_back(node);
  changed_ = true;
}

bool Rewriter::replace_value(int from, int to) {
  if (from == to) return false;
  if (is_private(from)) {
    const std::vector<int> readers = graph_.values[from].consumers;
    for (int reader : readers) {
      auto& inputs = graph_.nodes[reader].inputs;
      for (size_t slot = 0; slot < inputs.size(); ++slot) {
        if (inputs[slot] == from) set_input(reader, slot, to);
      }
    }
    changed_ = true;
    return true;
  }
  // `from` keeps its name (graph output or read by name from a subgraph): the producer of `to` takes it over.
  const int maker = producer(to);
  if (maker < 0 || !is_private(to) || read_by_subgraph_[from]) return false;
  const std::vector<int> readers = graph_.values[to].consumers;
  for (int reader : readers) {
    auto& inputs = graph_.nodes[reader].inputs;
    for (size_t slot = 0; slot < inputs.size(); ++slot) {
      if (inputs[slot] == to) set_input(reader, slot, from);
    }
  }
  const int old_maker = producer(from);
  if (old_maker >= 0) {
    for (int& output : graph_.nodes[old_maker].outputs) {
      if (output == from) output = kNoValue;
    }
  }
  for (int& output : graph_.nodes[maker].outputs) {
    if (output == to) output = from;
  }
  graph_.values[from].producer = maker;
  graph_.values[to].producer = kNoValue;
  changed_ = true;
  return true;
}

int Rewriter::new_value(const std::string& stem, const graph::TypeInfo& type) {
  std::string name = stem;
  for (int suffix = 1; graph_.find_value(name) != kNoValue; ++suffix) name = stem + "_" + std::to_string(suffix);
  const int index = graph_.add_value(name);
  graph_.values[index].type = type;
  read_by_subgraph_.resize(graph_.values.size(), false);
  return index;
}

int Rewriter::new_initializer(const std::string& stem, Tensor tensor) {
  const int index =
      new_value(stem, graph::TypeInfo::tensor(tensor.dtype(), graph::symbolic_shape_of(tensor.shape())));
  graph_.values[index].initializer = std::move(tensor);
  return index;
}

Status Rewriter::finish() {
  if (!changed_) return Status::ok();
  std::vector<graph::Node> kept;
  kept.reserve(graph_.nodes.size());
  for (size_t n = 0; n < graph_.nodes.size(); ++n) {
    if (!removed_[n]) kept.push_back(std::move(graph_.nodes[n]));
  }
  graph_.nodes = std::move(kept);
  removed_.assign(graph_.nodes.size(), false);
  TRY(graph::topological_sort(graph_));
  for (graph::Value& value : graph_.values) {
    if (value.initializer && !value.is_graph_input && !value.is_graph_output && value.consumers.empty()) {
      value.initializer.reset();
    }
  }
  return Status::ok();
}

bool same_static_or_symbolic_shape(const graph::TypeInfo& a, const graph::TypeInfo& b) {
  if (!a.is_tensor() || !b.is_tensor() || !a.shape || !b.shape || a.shape->size() != b.shape->size()) return false;
  for (size_t i = 0; i < a.shape->size(); ++i) {
    const graph::Dim& x = (*a.shape)[i];
    const graph::Dim& y = (*b.shape)[i];
    if (x.is_known() ? !(y.is_known() && x.value == y.value) : !(x.is_symbolic() && y.is_symbolic() && x.param == y.param)) {
      return false;
    }
  }
  return true;
}

void set_attribute(graph::Node& node, graph::Attribute attribute) {
  for (graph::Attribute& existing : node.attributes) {
    if (existing.name == attribute.name) {
      existing = std::move(attribute);
      return;
    }
  }
  node.attributes.push_back(std::move(attribute));
}

int imported_opset(const graph::Graph& graph, const std::string& domain) {
  const auto found = graph.opsets.find(domain);
  if (found != graph.opsets.end()) return static_cast<int>(found->second);
  if (domain == "ai.onnx") return imported_opset(graph, "");
  return 0;
}

}  // namespace nxrt::optimizer
