// Nesting bounds past the parser (graph/model_limits.h): 64 nested Ifs load and run through a whole session
// (import, shape inference, optimizer, kernel creation, execution), 65 fail with the named error; a value
// typed 64 levels deep loads and prints; shape inference refuses hand-built graphs nested past the limit.
#include <gtest/gtest.h>

#include <memory>

#include "graph/model_limits.h"
#include "graph/shape_inference.h"
#include "onnx/nesting_models.h"
#include "session/session.h"

namespace nxrt::graph {
namespace {

using onnx::testing::nested_if_model;

Tensor floats_123() {
  Tensor x = Tensor::allocate(DataType::kFloat32, {3}).value();
  for (int i = 0; i < 3; ++i) x.data<float>()[i] = static_cast<float>(i + 1);
  return x;
}

Tensor scalar_bool(bool value) {
  Tensor tensor = Tensor::allocate(DataType::kBool, {}).value();
  tensor.data<bool>()[0] = value;
  return tensor;
}

std::vector<float> run_nested(const Session& session, bool condition) {
  auto outputs = session.run({{"c", "x"}}, {{scalar_bool(condition), floats_123()}}, {});
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  if (!outputs) return {};
  const float* y = (*outputs)[0].data<float>();
  return std::vector<float>(y, y + 3);
}

TEST(GraphNestingLimit, NestedIfsAtTheLimitLoadAndRun) {
  auto session = Session::create_from_bytes(onnx::write::encode_model(nested_if_model(kMaxGraphNesting)));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  EXPECT_EQ(run_nested(**session, true), (std::vector<float>{2, 3, 4}));   // x + 1 computed 64 levels down
  EXPECT_EQ(run_nested(**session, false), (std::vector<float>{1, 2, 3}));  // the outermost else branch
}

TEST(GraphNestingLimit, OnePastTheLimitFailsAtSessionCreation) {
  auto session = Session::create_from_bytes(onnx::write::encode_model(nested_if_model(kMaxGraphNesting + 1)));
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument) << session.status().to_string();
  EXPECT_NE(session.status().message().find("If node 'if_65' attribute 'then_branch'"), std::string::npos)
      << session.status().message();
  EXPECT_NE(session.status().message().find("subgraph nesting level 65 exceeds the limit of 64"), std::string::npos);
}

TEST(TypeNestingLimit, ValueTypedAtTheLimitLoadsAndRuns) {
  const std::string bytes = onnx::testing::with_value_info(nested_if_model(0), "unused_deep",
                                                            onnx::testing::nested_sequence_type(kMaxTypeNesting));
  auto session = Session::create_from_bytes(bytes);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  EXPECT_EQ(run_nested(**session, true), (std::vector<float>{2, 3, 4}));
  auto past = Session::create_from_bytes(onnx::testing::with_value_info(
      nested_if_model(0), "unused_deep", onnx::testing::nested_sequence_type(kMaxTypeNesting + 1)));
  ASSERT_FALSE(past.has_value());
  EXPECT_EQ(past.status().code(), StatusCode::kInvalidArgument) << past.status().to_string();
  EXPECT_NE(past.status().message().find("value 'unused_deep'"), std::string::npos) << past.status().message();
}

TEST(TypeNesting, ToStringPrintsEveryLevel) {
  TypeInfo type = TypeInfo::tensor(DataType::kFloat32);
  std::string expected = "tensor(float)";
  for (int level = 1; level < kMaxTypeNesting; ++level) {
    TypeInfo outer;
    outer.kind = level % 3 == 0 ? TypeInfo::Kind::kMap : level % 3 == 1 ? TypeInfo::Kind::kSequence
                                                                         : TypeInfo::Kind::kOptional;
    outer.map_key_type = DataType::kInt64;
    outer.element = std::make_shared<const TypeInfo>(std::move(type));
    type = std::move(outer);
    expected = (level % 3 == 0 ? "map(int64," : level % 3 == 1 ? "seq(" : "optional(") + expected + ")";
  }
  EXPECT_EQ(type.to_string(), expected);
  TypeInfo open_sequence;
  open_sequence.kind = TypeInfo::Kind::kSequence;
  EXPECT_EQ(open_sequence.to_string(), "seq(?)");
  EXPECT_EQ(TypeInfo{}.to_string(), "unknown");
}

// A graph::Graph built directly (as the optimizer or a kernel could), `levels` Ifs deep.
std::shared_ptr<Graph> hand_built_nesting(int levels) {
  auto graph = std::make_shared<Graph>();
  graph->name = "level_" + std::to_string(levels);
  for (int level = levels - 1; level >= 0; --level) {
    auto outer = std::make_shared<Graph>();
    outer->name = "level_" + std::to_string(level);
    Node node;
    node.op_type = "If";
    node.name = "if_" + std::to_string(level + 1);
    Attribute branch;
    branch.name = "then_branch";
    branch.type = Attribute::Type::kGraph;
    branch.g = std::move(graph);
    node.attributes.push_back(std::move(branch));
    outer->nodes.push_back(std::move(node));
    graph = std::move(outer);
  }
  return graph;
}

TEST(GraphNestingLimit, ShapeInferenceChecksBeforeRecursing) {
  EXPECT_TRUE(infer_shapes(*hand_built_nesting(kMaxGraphNesting)).is_ok());
  const Status status = infer_shapes(*hand_built_nesting(kMaxGraphNesting + 1));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  EXPECT_NE(status.message().find("shape inference: If node 'if_65' of graph 'level_64': subgraph nesting level 65"),
            std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace nxrt::graph
