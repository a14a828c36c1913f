// The parser's nesting bounds (graph/model_limits.h): subgraphs and types at the limit parse, one level past
// it is INVALID_ARGUMENT naming the bound, the limit and where, and 100,000 nested levels (megabytes of
// nested length-delimited fields) fail the same way without deepening the stack.
#include <gtest/gtest.h>

#include "graph/model_limits.h"
#include "onnx/model_proto.h"
#include "onnx/nesting_models.h"

namespace nxrt::onnx {
namespace {

using testing::nest_messages;
using testing::nested_if_model;
using testing::nested_sequence_type;
using testing::with_value_info;
using wire::ProtoWriter;

constexpr int kDeep = 100000;

void expect_nesting_error(const Expected<ModelProto>& parsed, const std::vector<std::string>& needles) {
  ASSERT_FALSE(parsed.has_value()) << "accepted a model nested past the limit";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << parsed.status().to_string();
  for (const std::string& needle : needles) {
    EXPECT_NE(parsed.status().message().find(needle), std::string::npos)
        << "missing '" << needle << "' in: " << parsed.status().message();
  }
}

int graph_depth(const GraphProto& graph) {
  int depth = 0;
  for (const GraphProto* g = &graph; !g->node.empty() && !g->node[0].attribute.empty();) {
    g = g->node[0].attribute[0].g.get();
    if (!g) break;
    ++depth;
  }
  return depth;
}

int type_depth(const TypeProto& type) {
  int depth = 1;
  for (const TypeProto* t = &type; t->element; t = t->element.get()) ++depth;
  return depth;
}

std::string model_around_graph(std::string_view graph_bytes) {
  ProtoWriter model;
  model.int64_field(1, 9);
  model.bytes_field(7, graph_bytes);
  return model.take();
}

// A GraphProto whose node "deep" (op `op_type`) holds, in attribute `attribute` (field 6 GRAPH or 11 GRAPHS),
// the next graph, `levels` times around an empty graph.
std::string nested_graphs(int levels, uint32_t attribute_field) {
  ProtoWriter node;
  node.bytes_field(3, "deep");
  node.bytes_field(4, "If");
  ProtoWriter attribute;
  attribute.bytes_field(1, "then_branch");
  attribute.int64_field(20, attribute_field == 6 ? 5 : 10);
  return nest_messages({{"", 1}, {node.bytes(), 5}, {attribute.bytes(), attribute_field}}, levels, "");
}

TEST(GraphNestingLimit, NestedIfsAtTheLimitParse) {
  const std::string bytes = write::encode_model(nested_if_model(graph::kMaxGraphNesting));  // parsed views it
  auto parsed = parse_model(bytes);
  ASSERT_TRUE(parsed.has_value()) << parsed.status().to_string();
  EXPECT_EQ(graph_depth(*parsed->graph), graph::kMaxGraphNesting);
}

TEST(GraphNestingLimit, OnePastTheLimitNamesNodeAttributeAndLimit) {
  expect_nesting_error(parse_model(write::encode_model(nested_if_model(graph::kMaxGraphNesting + 1))),
                       {"If node 'if_65' attribute 'then_branch'", "subgraph nesting level 65",
                        "limit of 64", "byte offset"});
}

TEST(GraphNestingLimit, GraphsAttributesCountLikeGraphAttributes) {
  EXPECT_TRUE(parse_model(model_around_graph(nested_graphs(graph::kMaxGraphNesting, 11))).has_value());
  expect_nesting_error(parse_model(model_around_graph(nested_graphs(graph::kMaxGraphNesting + 1, 11))),
                       {"subgraph nesting level 65"});
}

TEST(GraphNestingLimit, HundredThousandLevelsFailWithoutRecursingPastTheLimit) {
  const std::string bytes = model_around_graph(nested_graphs(kDeep, 6));
  EXPECT_GT(bytes.size(), size_t{1} << 20);
  expect_nesting_error(parse_model(bytes), {"If node 'deep' attribute 'then_branch'", "limit of 64"});
}

TEST(GraphNestingLimit, FunctionBodiesStartAtLevelZero) {
  ProtoWriter function;
  function.bytes_field(1, "f");
  function.bytes_field(7, nest_messages({{std::string("\x22\x02If", 4), 5}, {std::string("\x0a\x01g", 3), 6},
                                         {"", 1}},
                                        graph::kMaxGraphNesting, std::string("\x22\x02If", 4)));
  ProtoWriter model;
  model.int64_field(1, 9);
  model.message_field(25, function);
  EXPECT_TRUE(parse_model(model.bytes()).has_value());

  ProtoWriter deep_function;
  deep_function.bytes_field(1, "f");
  deep_function.bytes_field(7, nest_messages({{std::string("\x22\x02If", 4), 5}, {std::string("\x0a\x01g", 3), 6},
                                              {"", 1}},
                                             kDeep, ""));
  ProtoWriter deep_model;
  deep_model.int64_field(1, 9);
  deep_model.message_field(25, deep_function);
  expect_nesting_error(parse_model(deep_model.bytes()), {"If node '' attribute 'g'", "limit of 64"});
}

TEST(TypeNestingLimit, SequenceTypesAtTheLimitParse) {
  write::Model model = nested_if_model(0);
  const std::string bytes = with_value_info(model, "deep", nested_sequence_type(graph::kMaxTypeNesting));
  auto parsed = parse_model(bytes);
  ASSERT_TRUE(parsed.has_value()) << parsed.status().to_string();
  ASSERT_EQ(parsed->graph->value_info.size(), 1u);
  EXPECT_EQ(type_depth(parsed->graph->value_info[0].type), graph::kMaxTypeNesting);
}

TEST(TypeNestingLimit, OnePastTheLimitNamesValueAndLimit) {
  write::Model model = nested_if_model(0);
  expect_nesting_error(parse_model(with_value_info(model, "deep", nested_sequence_type(graph::kMaxTypeNesting + 1))),
                       {"value 'deep'", "type nesting level 65", "limit of 64"});
}

TEST(TypeNestingLimit, HundredThousandLevelsFailWithoutRecursingPastTheLimit) {
  const std::string type = nested_sequence_type(kDeep);
  EXPECT_GT(type.size(), size_t{500000});
  expect_nesting_error(parse_model(with_value_info(nested_if_model(0), "deep", type)), {"value 'deep'", "limit of 64"});
}

TEST(TypeNestingLimit, OptionalAndMapTypesCountToo) {
  ProtoWriter tensor_type;
  tensor_type.int64_field(1, 1);
  ProtoWriter tensor;
  tensor.message_field(1, tensor_type);
  ProtoWriter optional_element;
  optional_element.message_field(1, tensor);
  ProtoWriter optional_of_tensor;
  optional_of_tensor.message_field(9, optional_element);
  // optional (9) -> elem_type (1), then map (5) with key_type int64 -> value_type (2): two levels per repeat.
  const std::vector<testing::NestingStep> steps = {{"", 9}, {"", 1}, {"", 5}, {std::string("\x08\x07", 2), 2}};
  const int repeats = (graph::kMaxTypeNesting - 2) / 2;
  const std::string at_limit = nest_messages(steps, repeats, optional_of_tensor.bytes());
  const std::string bytes = with_value_info(nested_if_model(0), "m", at_limit);
  auto parsed = parse_model(bytes);
  ASSERT_TRUE(parsed.has_value()) << parsed.status().to_string();
  EXPECT_EQ(type_depth(parsed->graph->value_info[0].type), graph::kMaxTypeNesting);
  const std::string past_limit = nest_messages(steps, repeats + 1, optional_of_tensor.bytes());
  expect_nesting_error(parse_model(with_value_info(nested_if_model(0), "m", past_limit)),
                       {"value 'm'", "type nesting level 65"});
}

TEST(TypeNestingLimit, TypeProtoAttributesNameNodeAndAttribute) {
  ProtoWriter attribute;
  attribute.bytes_field(1, "dtype");
  attribute.int64_field(20, 13);
  attribute.bytes_field(14, nested_sequence_type(graph::kMaxTypeNesting + 1));
  ProtoWriter node;
  node.bytes_field(3, "opt");
  node.bytes_field(4, "Optional");
  node.message_field(5, attribute);
  ProtoWriter graph;
  graph.message_field(1, node);
  expect_nesting_error(parse_model(model_around_graph(graph.bytes())),
                       {"Optional node 'opt' attribute 'dtype'", "type nesting level 65"});
}

TEST(NestedUnknownFields, AreSkippedWithoutRecursion) {
  // 100,000 nested unknown fields (GraphProto field 99) inside the main graph: skipped as one payload.
  ProtoWriter graph;
  graph.bytes_field(99, nest_messages({{"", 99}}, kDeep, "x"));
  graph.bytes_field(2, "main");
  const std::string bytes = model_around_graph(graph.bytes());  // the parsed model views these bytes
  auto parsed = parse_model(bytes);
  ASSERT_TRUE(parsed.has_value()) << parsed.status().to_string();
  EXPECT_EQ(parsed->graph->name, "main");
}

}  // namespace
}  // namespace nxrt::onnx
