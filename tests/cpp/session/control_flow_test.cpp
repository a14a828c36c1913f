// Control flow (If, Loop, Scan) and sequence values through a whole session: subgraphs reading outer-scope
// values (also two levels up), loop-carried state, scan outputs (also over zero iterations), sequences.
#include <gtest/gtest.h>

#include "onnx/model_writer.h"
#include "session/session.h"

namespace nxrt {
namespace {

namespace w = onnx::write;

constexpr int32_t kFloat = 1;
constexpr int32_t kBool = 9;
constexpr int32_t kInt64 = 7;

std::unique_ptr<Session> create(const w::Model& model) {
  auto session = Session::create_from_bytes(w::encode_model(model));
  EXPECT_TRUE(session.has_value()) << session.status().to_string();
  return session ? std::move(session).value() : nullptr;
}

Tensor floats(Shape shape, std::vector<float> values) {
  Tensor tensor = Tensor::allocate(DataType::kFloat32, std::move(shape)).value();
  std::copy(values.begin(), values.end(), tensor.data<float>());
  return tensor;
}

Tensor scalar_bool(bool v) {
  Tensor tensor = Tensor::allocate(DataType::kBool, {}).value();
  tensor.data<bool>()[0] = v;
  return tensor;
}

Tensor scalar_int64(int64_t v) {
  Tensor tensor = Tensor::allocate(DataType::kInt64, {}).value();
  tensor.data<int64_t>()[0] = v;
  return tensor;
}

std::vector<float> values_of(const Tensor& tensor) {
  return std::vector<float>(tensor.data<float>(), tensor.data<float>() + tensor.numel());
}

// y = If(c) then (x * x) else (x + offset), where offset is computed in the main graph.
w::Model if_model() {
  w::Graph then_branch;
  then_branch.name = "then";
  then_branch.nodes = {{"Mul", {"x", "x"}, {"sq"}}};
  then_branch.outputs = {{"sq", kFloat, {int64_t{3}}}};
  w::Graph else_branch;
  else_branch.name = "else";
  else_branch.nodes = {{"Add", {"x", "offset"}, {"shifted"}}};
  else_branch.outputs = {{"shifted", kFloat, {int64_t{3}}}};
  w::Model model;
  model.graph.inputs = {{"c", kBool, {}}, {"x", kFloat, {int64_t{3}}}};
  model.graph.outputs = {{"y", kFloat, {int64_t{3}}}};
  model.graph.initializers = {w::float_tensor("ten", {}, {10.0f})};
  model.graph.nodes = {
      {"If", {"c"}, {"y"}, {w::attr_graph("then_branch", then_branch), w::attr_graph("else_branch", else_branch)}},
      {"Identity", {"ten"}, {"offset"}},  // after the If in file order: implicit inputs order the nodes
  };
  return model;
}

TEST(ControlFlow, IfRunsTheChosenBranchWithOuterScopeValues) {
  auto session = create(if_model());
  ASSERT_TRUE(session);
  const Tensor x = floats({3}, {1, 2, 3});
  auto taken = session->run({{"c", "x"}}, {{scalar_bool(true), x}}, {});
  ASSERT_TRUE(taken) << taken.status().to_string();
  EXPECT_EQ(values_of((*taken)[0]), (std::vector<float>{1, 4, 9}));
  auto not_taken = session->run({{"c", "x"}}, {{scalar_bool(false), x}}, {});
  ASSERT_TRUE(not_taken) << not_taken.status().to_string();
  EXPECT_EQ(values_of((*not_taken)[0]), (std::vector<float>{11, 12, 13}));
}

// Loop M times: acc += x * step (step from the main graph); scan output collects acc each iteration.
w::Model loop_model() {
  w::Graph body;
  body.name = "body";
  body.inputs = {{"i", kInt64, {}}, {"cond_in", kBool, {}}, {"acc_in", kFloat, {int64_t{2}}}};
  body.outputs = {{"cond_out", kBool, {}}, {"acc_out", kFloat, {int64_t{2}}}, {"acc_scan", kFloat, {int64_t{2}}}};
  body.nodes = {
      {"Identity", {"cond_in"}, {"cond_out"}},
      {"Mul", {"x", "step"}, {"delta"}},
      {"Add", {"acc_in", "delta"}, {"acc_out"}},
      {"Identity", {"acc_out"}, {"acc_scan"}},
  };
  w::Model model;
  model.graph.inputs = {{"m", kInt64, {}}, {"x", kFloat, {int64_t{2}}}};
  model.graph.outputs = {{"final", kFloat, {int64_t{2}}}, {"history", kFloat, {std::string("N"), int64_t{2}}}};
  model.graph.initializers = {w::float_tensor("zero", {2}, {0, 0}), w::float_tensor("step", {}, {0.5f})};
  model.graph.nodes = {{"Loop", {"m", "", "zero"}, {"final", "history"}, {w::attr_graph("body", body)}}};
  return model;
}

TEST(ControlFlow, LoopCarriesStateAndStacksScanOutputs) {
  auto session = create(loop_model());
  ASSERT_TRUE(session);
  const Tensor x = floats({2}, {2, 4});
  auto outputs = session->run({{"m", "x"}}, {{scalar_int64(3), x}}, {});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  EXPECT_EQ(values_of((*outputs)[0]), (std::vector<float>{3, 6}));
  EXPECT_EQ((*outputs)[1].shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of((*outputs)[1]), (std::vector<float>{1, 2, 2, 4, 3, 6}));

  auto none = session->run({{"m", "x"}}, {{scalar_int64(0), x}}, {});
  ASSERT_TRUE(none) << none.status().to_string();
  EXPECT_EQ(values_of((*none)[0]), (std::vector<float>{0, 0}));
  EXPECT_EQ((*none)[1].shape(), (Shape{0, 2}));
}

// Scan (opset 9+) running sum over axis 0 of a [4, 2] input, scanned in reverse.
TEST(ControlFlow, ScanRunsOverSlicesInEitherDirection) {
  w::Graph body;
  body.name = "body";
  body.inputs = {{"sum_in", kFloat, {int64_t{2}}}, {"row", kFloat, {int64_t{2}}}};
  body.outputs = {{"sum_out", kFloat, {int64_t{2}}}, {"partial", kFloat, {int64_t{2}}}};
  body.nodes = {{"Add", {"sum_in", "row"}, {"sum_out"}}, {"Identity", {"sum_out"}, {"partial"}}};
  w::Model model;
  model.graph.inputs = {{"init", kFloat, {int64_t{2}}}, {"rows", kFloat, {int64_t{4}, int64_t{2}}}};
  model.graph.outputs = {{"total", kFloat, {int64_t{2}}}, {"partials", kFloat, {int64_t{4}, int64_t{2}}}};
  model.graph.nodes = {{"Scan", {"init", "rows"}, {"total", "partials"},
                        {w::attr_graph("body", body), w::attr_int("num_scan_inputs", 1),
                         w::attr_ints("scan_input_directions", {1})}}};
  auto session = create(model);
  ASSERT_TRUE(session);
  auto outputs = session->run({{"init", "rows"}}, {{floats({2}, {0, 0}), floats({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}},
                              {});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  EXPECT_EQ(values_of((*outputs)[0]), (std::vector<float>{16, 20}));
  EXPECT_EQ(values_of((*outputs)[1]), (std::vector<float>{7, 8, 12, 14, 15, 18, 16, 20}));
}

// A Loop inside an If branch reads a value of the main graph: implicit inputs reach through two levels.
TEST(ControlFlow, NestedSubgraphsReadValuesTwoLevelsUp) {
  w::Graph body;
  body.name = "body";
  body.inputs = {{"i", kInt64, {}}, {"cond_in", kBool, {}}, {"acc_in", kFloat, {int64_t{1}}}};
  body.outputs = {{"cond_out", kBool, {}}, {"acc_out", kFloat, {int64_t{1}}}};
  body.nodes = {{"Identity", {"cond_in"}, {"cond_out"}}, {"Add", {"acc_in", "outer_step"}, {"acc_out"}}};
  w::Graph then_branch;
  then_branch.name = "then";
  then_branch.nodes = {{"Loop", {"m", "", "start"}, {"looped"}, {w::attr_graph("body", body)}}};
  then_branch.outputs = {{"looped", kFloat, {int64_t{1}}}};
  w::Graph else_branch;
  else_branch.name = "else";
  else_branch.nodes = {{"Identity", {"start"}, {"kept"}}};
  else_branch.outputs = {{"kept", kFloat, {int64_t{1}}}};
  w::Model model;
  model.graph.inputs = {{"c", kBool, {}}, {"m", kInt64, {}}, {"start", kFloat, {int64_t{1}}}};
  model.graph.outputs = {{"y", kFloat, {int64_t{1}}}};
  model.graph.initializers = {w::float_tensor("two", {1}, {2.0f})};
  model.graph.nodes = {
      {"Identity", {"two"}, {"outer_step"}},
      {"If", {"c"}, {"y"}, {w::attr_graph("then_branch", then_branch), w::attr_graph("else_branch", else_branch)}},
  };
  auto session = create(model);
  ASSERT_TRUE(session);
  auto outputs = session->run({{"c", "m", "start"}}, {{scalar_bool(true), scalar_int64(4), floats({1}, {1})}}, {});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  EXPECT_EQ(values_of((*outputs)[0]), (std::vector<float>{9}));
}

TEST(ControlFlow, SubgraphReadingAnUnknownNameIsRejectedAtCreation) {
  w::Model model = if_model();
  model.graph.nodes.pop_back();  // nothing defines "offset" any more
  auto session = Session::create_from_bytes(w::encode_model(model));
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidGraph);
  EXPECT_NE(session.status().message().find("offset"), std::string::npos) << session.status().message();
}

TEST(Sequences, BuildInsertReadAndConcatenate) {
  w::Model model;
  model.graph.inputs = {{"a", kFloat, {int64_t{2}}}, {"b", kFloat, {int64_t{2}}}};
  w::ValueInfo untyped{"seq2", kFloat, {}, false, false};
  model.graph.outputs = {{"joined", kFloat, {int64_t{6}}}, {"length", kInt64, {}}, {"second", kFloat, {int64_t{2}}},
                         untyped};
  model.graph.initializers = {w::int64_tensor("one", {}, {1}), w::float_tensor("c", {2}, {5, 6})};
  model.graph.nodes = {
      {"SequenceConstruct", {"a", "b"}, {"seq"}},
      {"SequenceInsert", {"seq", "c", "one"}, {"seq2"}},
      {"SequenceLength", {"seq2"}, {"length"}},
      {"SequenceAt", {"seq2", "one"}, {"second"}},
      {"ConcatFromSequence", {"seq2"}, {"joined"}, {w::attr_int("axis", 0)}},
  };
  auto session = create(model);
  ASSERT_TRUE(session);
  const std::vector<Value> feeds = {floats({2}, {1, 2}), floats({2}, {3, 4})};
  auto outputs = session->run_values({{"a", "b"}}, feeds, {});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  EXPECT_EQ(values_of((*outputs)[0].tensor()), (std::vector<float>{1, 2, 5, 6, 3, 4}));
  EXPECT_EQ((*outputs)[1].tensor().data<int64_t>()[0], 3);
  EXPECT_EQ(values_of((*outputs)[2].tensor()), (std::vector<float>{5, 6}));
  ASSERT_TRUE((*outputs)[3].is_sequence());
  EXPECT_EQ((*outputs)[3].elements().size(), 3u);

  // run() serves tensors only and says what to use instead.
  auto tensors = session->run({{"a", "b"}}, {{floats({2}, {1, 2}), floats({2}, {3, 4})}}, {});
  ASSERT_FALSE(tensors.has_value());
  EXPECT_NE(tensors.status().message().find("run_values"), std::string::npos);
}

}  // namespace
}  // namespace nxrt
