#include "graph/graph.h"

#include <algorithm>

namespace nxrt::graph {

const char* attribute_type_name(Attribute::Type type) {
  switch (type) {
    case Attribute::Type::kUndefined: return "UNDEFINED";
    case Attribute::Type::kFloat: return "FLOAT";
    case Attribute::Type::kInt: return "INT";
    case Attribute::Type::kString: return "STRING";
    case Attribute::Type::kTensor: return "TENSOR";
    case Attribute::Type::kGraph: return "GRAPH";
    case Attribute::Type::kFloats: return "FLOATS";
    case Attribute::Type::kInts: return "INTS";
    case Attribute::Type::kStrings: return "STRINGS";
    case Attribute::Type::kTensors: return "TENSORS";
    case Attribute::Type::kGraphs: return "GRAPHS";
    case Attribute::Type::kTypeProto: return "TYPE_PROTO";
    case Attribute::Type::kTypeProtos: return "TYPE_PROTOS";
    case Attribute::Type::kSparseTensor: return "SPARSE_TENSOR";
    case Attribute::Type::kSparseTensors: return "SPARSE_TENSORS";
  }
  return "UNDEFINED";
}

const Attribute* Node::find_attribute(const std::string& attr_name) const {
  for (const Attribute& attribute : attributes) {
    if (attribute.name == attr_name) return &attribute;
  }
  return nullptr;
}

std::string Node::describe() const { return op_type + " node '" + name + "'"; }

namespace {

Status wrong_type(const Node& node, const Attribute& attribute, Attribute::Type expected) {
  return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute '", attribute.name, "' has type ",
                    attribute_type_name(attribute.type), ", expected ", attribute_type_name(expected));
}

}  // namespace

Expected<int64_t> Node::attr_int(const std::string& attr_name, int64_t fallback) const {
  const Attribute* attribute = find_attribute(attr_name);
  if (!attribute) return fallback;
  if (attribute->type != Attribute::Type::kInt) return wrong_type(*this, *attribute, Attribute::Type::kInt);
  return attribute->i;
}

Expected<float> Node::attr_float(const std::string& attr_name, float fallback) const {
  const Attribute* attribute = find_attribute(attr_name);
  if (!attribute) return fallback;
  if (attribute->type != Attribute::Type::kFloat) return wrong_type(*this, *attribute, Attribute::Type::kFloat);
  return attribute->f;
}

Expected<std::string> Node::attr_string(const std::string& attr_name, std::string fallback) const {
  const Attribute* attribute = find_attribute(attr_name);
  if (!attribute) return fallback;
  if (attribute->type != Attribute::Type::kString) return wrong_type(*this, *attribute, Attribute::Type::kString);
  return attribute->s;
}

Expected<std::vector<int64_t>> Node::attr_ints(const std::string& attr_name, std::vector<int64_t> fallback) const {
  const Attribute* attribute = find_attribute(attr_name);
  if (!attribute) return fallback;
  if (attribute->type != Attribute::Type::kInts) return wrong_type(*this, *attribute, Attribute::Type::kInts);
  return attribute->ints;
}

Expected<std::vector<float>> Node::attr_floats(const std::string& attr_name, std::vector<float> fallback) const {
  const Attribute* attribute = find_attribute(attr_name);
  if (!attribute) return fallback;
  if (attribute->type != Attribute::Type::kFloats) return wrong_type(*this, *attribute, Attribute::Type::kFloats);
  return attribute->floats;
}

int Graph::find_value(const std::string& value_name) const {
  const auto found = value_index.find(value_name);
  return found == value_index.end() ? kNoValue : found->second;
}

int Graph::add_value(std::string value_name) {
  const int existing = find_value(value_name);
  if (existing != kNoValue) return existing;
  const int index = static_cast<int>(values.size());
  value_index.emplace(value_name, index);
  values.push_back(Value{});
  values.back().name = std::move(value_name);
  return index;
}

void rebuild_links(Graph& graph) {
  for (Value& value : graph.values) {
    value.producer = kNoValue;
    value.consumers.clear();
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (int output : graph.nodes[n].outputs) {
      if (output != kNoValue) graph.values[output].producer = static_cast<int>(n);
    }
    for (int input : graph.nodes[n].inputs) {
      if (input != kNoValue) graph.values[input].consumers.push_back(static_cast<int>(n));
    }
    for (int input : graph.nodes[n].implicit_inputs) graph.values[input].consumers.push_back(static_cast<int>(n));
  }
}

Status topological_sort(Graph& graph) {
  rebuild_links(graph);
  const size_t count = graph.nodes.size();
  std::vector<int> pending(count, 0);
  std::vector<int> ready;
  for (size_t n = 0; n < count; ++n) {
    std::vector<int> reads = graph.nodes[n].inputs;
    reads.insert(reads.end(), graph.nodes[n].implicit_inputs.begin(), graph.nodes[n].implicit_inputs.end());
    for (int input : reads) {
      if (input == kNoValue) continue;
      const Value& value = graph.values[input];
      if (value.producer != kNoValue) {
        ++pending[n];
      } else if (!value.initializer && !value.is_graph_input && !value.is_outer_scope) {
        return make_error(StatusCode::kInvalidGraph, graph.nodes[n].describe(), ": input '", value.name,
                          "' is not a graph input, an initializer, or the output of any node");
      }
    }
    if (pending[n] == 0) ready.push_back(static_cast<int>(n));
  }
  std::vector<int> order;
  order.reserve(count);
  // Pop from the front in original order so that an already sorted graph keeps its order.
  for (size_t head = 0; head < ready.size(); ++head) {
    const int n = ready[head];
    order.push_back(n);
    for (int output : graph.nodes[n].outputs) {
      if (output == kNoValue) continue;
      for (int consumer : graph.values[output].consumers) {
        if (--pending[consumer] == 0) ready.push_back(consumer);
      }
    }
  }
  if (order.size() != count) {
    for (size_t n = 0; n < count; ++n) {
      if (pending[n] > 0) {
        return make_error(StatusCode::kInvalidGraph, "graph '", graph.name, "' has a cycle through ",
                          graph.nodes[n].describe());
      }
    }
  }
  std::vector<Node> sorted;
  sorted.reserve(count);
  for (int n : order) sorted.push_back(std::move(graph.nodes[n]));
  graph.nodes = std::move(sorted);
  rebuild_links(graph);
  return Status::ok();
}

Attribute make_int_attribute(std::string name, int64_t value) {
  Attribute a;
  a.name = std::move(name);
  a.type = Attribute::Type::kInt;
  a.i = value;
  return a;
}

Attribute make_float_attribute(std::string name, float value) {
  Attribute a;
  a.name = std::move(name);
  a.type = Attribute::Type::kFloat;
  a.f = value;
  return a;
}

Attribute make_string_attribute(std::string name, std::string value) {
  Attribute a;
  a.name = std::move(name);
  a.type = Attribute::Type::kString;
  a.s = std::move(value);
  return a;
}

Attribute make_ints_attribute(std::string name, std::vector<int64_t> values) {
  Attribute a;
  a.name = std::move(name);
  a.type = Attribute::Type::kInts;
  a.ints = std::move(values);
  return a;
}

Attribute make_floats_attribute(std::string name, std::vector<float> values) {
  Attribute a;
  a.name = std::move(name);
  a.type = Attribute::Type::kFloats;
  a.floats = std::move(values);
  return a;
}

Attribute make_tensor_attribute(std::string name, Tensor value) {
  Attribute a;
  a.name = std::move(name);
  a.type = Attribute::Type::kTensor;
  a.t = std::move(value);
  return a;
}

}  // namespace nxrt::graph
