// Core graph IR produced by the importer. Values are referenced by index into Graph::values; a node input
// of kNoValue is an omitted optional input. Subgraphs (If/Loop/Scan bodies) are nested Graphs that may read
// values of enclosing graphs by name (outer_scope_inputs).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "graph/type_info.h"

namespace nxrt::graph {

inline constexpr int kNoValue = -1;
inline constexpr const char* kOnnxDomain = "";
inline constexpr const char* kMsDomain = "com.microsoft";

struct Graph;

struct Attribute {
  enum class Type { kUndefined, kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings, kTensors,
                    kGraphs, kTypeProto, kTypeProtos, kSparseTensor, kSparseTensors };
  std::string name;
  Type type = Type::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::vector<TypeInfo> types;
};

const char* attribute_type_name(Attribute::Type type);

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;
  int opset = 0;  // opset version imported for `domain`
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::vector<Attribute> attributes;
  // Values of this graph that the node's subgraphs read from outer scope; they order and keep alive like inputs.
  std::vector<int> implicit_inputs;
  // The execution provider that runs the node (ExecutionProvider::name(), set by the session's partitioner);
  // empty before partitioning and in subgraphs, which run on the CPU provider.
  std::string provider;

  const Attribute* find_attribute(const std::string& attr_name) const;
  // Typed getters: `fallback` when absent; INVALID_GRAPH naming node and attribute on a type mismatch.
  Expected<int64_t> attr_int(const std::string& attr_name, int64_t fallback) const;
  Expected<float> attr_float(const std::string& attr_name, float fallback) const;
  Expected<std::string> attr_string(const std::string& attr_name, std::string fallback) const;
  Expected<std::vector<int64_t>> attr_ints(const std::string& attr_name, std::vector<int64_t> fallback) const;
  Expected<std::vector<float>> attr_floats(const std::string& attr_name, std::vector<float> fallback) const;
  // "Add node 'add_1'" for messages.
  std::string describe() const;
};

// Attribute builders (for nodes made by the optimizer and by kernels that compose other kernels).
Attribute make_int_attribute(std::string name, int64_t value);
Attribute make_float_attribute(std::string name, float value);
Attribute make_string_attribute(std::string name, std::string value);
Attribute make_ints_attribute(std::string name, std::vector<int64_t> values);
Attribute make_floats_attribute(std::string name, std::vector<float> values);
Attribute make_tensor_attribute(std::string name, Tensor value);

struct Value {
  std::string name;
  TypeInfo type;
  int producer = kNoValue;        // node index, or kNoValue for inputs / initializers / outer-scope values
  std::vector<int> consumers;     // node indices (a node appears once per input slot)
  std::optional<Tensor> initializer;
  bool is_graph_input = false;
  bool is_graph_output = false;
  bool is_outer_scope = false;    // read from an enclosing graph
};

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;  // topologically sorted after import
  std::vector<int> inputs;   // graph inputs, in declaration order (excludes pure initializers)
  std::vector<int> outputs;
  std::vector<int> outer_scope_inputs;
  std::map<std::string, int64_t> opsets;  // domain -> version
  std::unordered_map<std::string, int> value_index;  // name -> index into values; kept by add_value

  int find_value(const std::string& value_name) const;  // kNoValue when absent
  int add_value(std::string value_name);                // returns the existing index when present
};

// Orders nodes so that every value is produced before it is consumed; INVALID_GRAPH naming a node on a cycle
// or a value that no node, input, initializer or outer scope provides.
Status topological_sort(Graph& graph);
// Recomputes Value::producer / consumers from the nodes.
void rebuild_links(Graph& graph);

}  // namespace nxrt::graph
