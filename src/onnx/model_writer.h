// Encodes ONNX models from plain owned structs into protobuf bytes. Used for the embedded default models and
// by tests (including the malformed-model corpus). Field numbers follow onnx.proto. Encoding recurses once per
// subgraph level of the structs the caller built; it reads no untrusted input.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace nxrt::onnx::write {

struct Tensor {
  std::string name;
  int32_t data_type = 1;
  std::vector<int64_t> dims;
  std::string raw_data;  // little-endian element bytes
  // When non-empty the tensor is stored externally: (key, value) pairs such as {"location","w.bin"}.
  std::vector<std::pair<std::string, std::string>> external_data;
};

// Convenience: a float32/int64/double tensor whose raw_data holds `values`.
Tensor float_tensor(std::string name, std::vector<int64_t> dims, const std::vector<float>& values);
Tensor int64_tensor(std::string name, std::vector<int64_t> dims, const std::vector<int64_t>& values);
Tensor double_tensor(std::string name, std::vector<int64_t> dims, const std::vector<double>& values);

struct Graph;

struct Attribute {
  std::string name;
  int32_t type = 0;  // onnx AttributeType value
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::shared_ptr<Tensor> t;
  std::shared_ptr<Graph> g;
  std::string ref_attr_name;
  std::vector<Tensor> tensors;                 // TENSORS
  std::vector<std::shared_ptr<Graph>> graphs;  // GRAPHS
};

Attribute attr_int(std::string name, int64_t value);
Attribute attr_float(std::string name, float value);
Attribute attr_string(std::string name, std::string value);
Attribute attr_ints(std::string name, std::vector<int64_t> values);
Attribute attr_floats(std::string name, std::vector<float> values);
Attribute attr_tensor(std::string name, Tensor value);
Attribute attr_graph(std::string name, Graph value);

struct Node {
  std::string op_type;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;
  std::string name;
  std::string domain;
};

// A dim is a concrete size or a symbolic name.
using Dim = std::variant<int64_t, std::string>;

struct ValueInfo {
  std::string name;
  int32_t elem_type = 1;
  std::vector<Dim> dims;
  bool has_shape = true;  // false: no shape (unknown rank)
  bool has_type = true;
};

struct Graph {
  std::string name = "graph";
  std::vector<Node> nodes;
  std::vector<Tensor> initializers;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<ValueInfo> value_info;
};

struct OpsetId {
  std::string domain;
  int64_t version = 0;
};

struct Function {
  std::string name;
  std::string domain;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> attributes;
  std::vector<Node> nodes;
  std::vector<OpsetId> opset_imports;
};

struct Model {
  int64_t ir_version = 10;
  std::vector<OpsetId> opset_imports = {{"", 21}};
  std::string producer_name = "nxrt";
  std::string producer_version;
  std::string doc_string;
  Graph graph;
  std::vector<Function> functions;
  std::vector<std::pair<std::string, std::string>> metadata_props;
};

// Serialized ModelProto bytes.
std::string encode_model(const Model& model);

}  // namespace nxrt::onnx::write
