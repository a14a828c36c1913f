// Models and raw messages that nest as deep as a test asks, for the nesting-limit tests of every layer
// (graph/model_limits.h): nested Ifs that run, nested sequence types, and megabyte-sized chains of nested
// length-delimited fields built in linear time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "onnx/model_writer.h"
#include "onnx/wire_writer.h"

namespace nxrt::onnx::testing {

inline constexpr int32_t kFloatElem = 1;
inline constexpr int32_t kBoolElem = 9;

// `levels` Ifs inside each other. The graph at level L (the main graph is 0) holds If node "if_<L+1>" whose
// then_branch is the graph at level L+1 and whose else_branch returns x; the graph at level `levels` computes
// x + one. Main-graph inputs c (bool scalar) and x (float[3]), initializer one = 1, output y_0; every subgraph
// reads c, x and one from the main graph. With c true the model returns x + 1 through every level.
inline write::Model nested_if_model(int levels) {
  write::Graph graph;
  graph.name = "level_" + std::to_string(levels);
  const std::string deepest_output = "y_" + std::to_string(levels);
  graph.nodes.push_back({"Add", {"x", "one"}, {deepest_output}, {}, "add_" + std::to_string(levels), ""});
  graph.outputs.push_back({deepest_output, kFloatElem, {int64_t{3}}});
  for (int level = levels - 1; level >= 0; --level) {
    const std::string inner = std::to_string(level + 1);
    write::Graph else_branch;
    else_branch.name = "else_" + inner;
    else_branch.nodes.push_back({"Identity", {"x"}, {"e_" + inner}, {}, "identity_" + inner, ""});
    else_branch.outputs.push_back({"e_" + inner, kFloatElem, {int64_t{3}}});
    write::Graph outer;
    outer.name = "level_" + std::to_string(level);
    const std::string output = "y_" + std::to_string(level);
    outer.nodes.push_back({"If", {"c"}, {output},
                           {write::attr_graph("then_branch", std::move(graph)),
                            write::attr_graph("else_branch", std::move(else_branch))},
                           "if_" + inner, ""});
    outer.outputs.push_back({output, kFloatElem, {int64_t{3}}});
    graph = std::move(outer);
  }
  graph.inputs = {{"c", kBoolElem, {}}, {"x", kFloatElem, {int64_t{3}}}};
  graph.initializers.push_back(write::float_tensor("one", {}, {1.0f}));
  write::Model model;
  model.graph = std::move(graph);
  return model;
}

inline size_t varint_size(uint64_t value) {
  size_t size = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++size;
  }
  return size;
}

// One level of a nesting chain: the bytes of a message's other fields, then a length-delimited field
// `number` that holds the next level.
struct NestingStep {
  std::string prefix;
  uint32_t number;
};

// The content of the outermost message of `repeat` copies of `steps` nested inside each other around
// `innermost`. Each length is computed from the sizes inside it, so this is linear in the output size.
inline std::string nest_messages(const std::vector<NestingStep>& steps, int repeat, std::string_view innermost) {
  const size_t total = steps.size() * static_cast<size_t>(repeat);
  std::vector<uint64_t> payload(total);
  uint64_t size = innermost.size();
  for (size_t k = total; k-- > 0;) {
    payload[k] = size;
    const NestingStep& step = steps[k % steps.size()];
    size += step.prefix.size() + varint_size(uint64_t{step.number} << 3) + varint_size(size);
  }
  wire::ProtoWriter out;
  for (size_t k = 0; k < total; ++k) {
    const NestingStep& step = steps[k % steps.size()];
    out.raw_bytes(step.prefix);
    out.raw_tag(step.number, 2);
    out.raw_varint(payload[k]);
  }
  out.raw_bytes(innermost);
  return out.take();
}

// TypeProto bytes of `levels` levels: `levels - 1` sequences around tensor(float).
inline std::string nested_sequence_type(int levels) {
  wire::ProtoWriter tensor_type;
  tensor_type.int64_field(1, kFloatElem);
  wire::ProtoWriter tensor;
  tensor.message_field(1, tensor_type);
  // TypeProto.sequence_type (4) -> TypeProto.Sequence.elem_type (1) -> TypeProto.
  return nest_messages({{"", 4}, {"", 1}}, levels - 1, tensor.bytes());
}

// `model` encoded with one more main-graph value_info named `name` of type `type_bytes`. The value_info
// travels in a second ModelProto.graph field, which protobuf (and the parser) merges into the first.
inline std::string with_value_info(const write::Model& model, std::string_view name, std::string_view type_bytes) {
  wire::ProtoWriter info;
  info.bytes_field(1, name);
  info.bytes_field(2, type_bytes);
  wire::ProtoWriter graph;
  graph.message_field(13, info);
  wire::ProtoWriter extra;
  extra.message_field(7, graph);
  return write::encode_model(model) + extra.bytes();
}

}  // namespace nxrt::onnx::testing
