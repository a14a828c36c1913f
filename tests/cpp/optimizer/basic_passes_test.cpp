// Level-1 passes: constant folding, redundant-node removal, Conv affine folding.
#include <algorithm>

#include "optimizer/optimizer.h"
#include "optimizer_test_util.h"

namespace nxrt::optimizer_test {
namespace {

w::Attribute ints(const char* name, std::vector<int64_t> values) { return w::attr_ints(name, std::move(values)); }

TEST(OptimizerPasses, LevelsSelectPasses) {
  EXPECT_TRUE(optimizer::pass_names(0).empty());
  // The device-neutral passes, then the CPU provider's (whose clean-up runs again after its fusions).
  EXPECT_EQ(optimizer::pass_names(1), (std::vector<std::string>{"type_completion", "constant_folding",
                                                                "redundant_nodes", "conv_affine_folding",
                                                                "redundant_nodes"}));
  const std::vector<std::string> all = optimizer::pass_names(99);
  EXPECT_EQ(all[all.size() - 2], "elementwise_fusion");
}

TEST(ConstantFolding, FoldsConstantSubgraphAndShape) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{2}, int64_t{3}}}};
  model.graph.outputs = {{"y", 1, {int64_t{2}, int64_t{3}}}, {"s", 7, {int64_t{2}}}};
  model.graph.initializers = {w::float_tensor("a", {3}, {1, 2, 3}), w::float_tensor("b", {3}, {4, 5, 6}),
                              w::int64_tensor("shape", {2}, {2, 3})};
  model.graph.nodes = {{"Add", {"a", "b"}, {"ab"}, {}, "add_const"},
                       {"Sqrt", {"ab"}, {"root"}, {}, "sqrt_const"},
                       {"Shape", {"x"}, {"x_shape"}, {}, "shape"},
                       {"Reshape", {"x", "x_shape"}, {"x2"}, {}, "reshape"},
                       {"Mul", {"x2", "root"}, {"y"}, {}, "mul"},
                       {"Identity", {"shape"}, {"s0"}, {}, "id"},
                       {"Add", {"s0", "x_shape"}, {"s"}, {}, "shape_sum"}};
  auto optimized = optimize_and_compare(model, 0);
  ASSERT_TRUE(optimized);
  // Everything but the Mul and the graph output `s` (computed from constants, but a graph output) folds away.
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Add", "Mul"}));
}

TEST(ConstantFolding, KeepsRandomOpsAndLevelZero) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{4}}}};
  model.graph.outputs = {{"y", 1, {int64_t{4}}}};
  model.graph.initializers = {w::float_tensor("a", {4}, {1, 2, 3, 4})};
  model.graph.nodes = {{"RandomUniformLike", {"a"}, {"r"}, {w::attr_int("dtype", 1)}, "random"},
                       {"Mul", {"r", "x"}, {"y0"}, {}, "mul"},
                       {"Neg", {"a"}, {"na"}, {}, "neg"},
                       {"Add", {"y0", "na"}, {"y"}, {}, "add"}};
  auto optimized = create_session(model, 1);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "RandomUniformLike"), 1);
  EXPECT_EQ(count_op(*optimized, "Neg"), 0);
  auto plain = create_session(model, 0);
  ASSERT_TRUE(plain);
  EXPECT_EQ(count_op(*plain, "Neg"), 1);
}

w::Tensor bool_scalar(const std::string& name, bool value) {
  w::Tensor tensor;
  tensor.name = name;
  tensor.data_type = 9;
  tensor.raw_data = std::string(1, value ? '\1' : '\0');
  return tensor;
}

// A branch graph with output `out` [2, 3] and no inputs.
w::Graph branch(const std::string& name, std::vector<w::Node> nodes, std::vector<w::Tensor> initializers,
                const std::string& out) {
  w::Graph graph;
  graph.name = name;
  graph.nodes = std::move(nodes);
  graph.initializers = std::move(initializers);
  graph.outputs = {{out, 1, {int64_t{2}, int64_t{3}}}};
  return graph;
}

const graph::Graph& branch_of(const graph::Node& node, const char* name) { return *node.find_attribute(name)->g; }

// Weights sliced inside a branch from the main graph's initializer (as exporters write LSTM weights under If):
// two levels down, the Slice folds at session creation and the If nodes stop reading the weight.
TEST(ConstantFolding, FoldsOuterScopeConstantsInsideNestedSubgraphs) {
  const std::vector<w::Tensor> slice_args = {w::int64_tensor("starts", {1}, {1}), w::int64_tensor("ends", {1}, {3}),
                                             w::int64_tensor("axes", {1}, {0})};
  const w::Graph inner_then = branch("inner_then",
                                     {{"Slice", {"w", "starts", "ends", "axes"}, {"ws"}, {}, "slice_w"},
                                      {"Add", {"x", "ws"}, {"inner_out"}, {}, "add_w"}},
                                     slice_args, "inner_out");
  const w::Graph inner_else = branch("inner_else", {{"Neg", {"x"}, {"inner_neg"}, {}, "neg"}}, {}, "inner_neg");
  const w::Graph outer_then =
      branch("outer_then",
             {{"If", {"c"}, {"outer_out"}, {w::attr_graph("then_branch", inner_then),
                                            w::attr_graph("else_branch", inner_else)}, "inner_if"}},
             {}, "outer_out");
  const w::Graph outer_else = branch("outer_else", {{"Identity", {"x"}, {"outer_id"}, {}, "id"}}, {}, "outer_id");
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{2}, int64_t{3}}}};
  model.graph.outputs = {{"y", 1, {int64_t{2}, int64_t{3}}}};
  model.graph.initializers = {w::float_tensor("w", {4, 3}, ramp(12)), bool_scalar("c", true)};
  model.graph.nodes = {{"If", {"c"}, {"y"}, {w::attr_graph("then_branch", outer_then),
                                              w::attr_graph("else_branch", outer_else)}, "outer_if"}};
  auto optimized = optimize_and_compare(model, 0);
  ASSERT_TRUE(optimized);
  const graph::Graph& main = optimized->graph();
  const auto names_of = [](const graph::Graph& graph, const std::vector<int>& ids) {
    std::vector<std::string> names;
    for (int id : ids) names.push_back(graph.values[id].name);
    std::sort(names.begin(), names.end());
    return names;
  };
  ASSERT_EQ(main.nodes.size(), 1u);
  EXPECT_EQ(names_of(main, main.nodes[0].implicit_inputs), (std::vector<std::string>{"x"}));
  const graph::Graph& outer = branch_of(main.nodes[0], "then_branch");
  EXPECT_EQ(names_of(outer, outer.outer_scope_inputs), (std::vector<std::string>{"x"}));
  ASSERT_EQ(outer.nodes.size(), 1u);
  const graph::Graph& inner = branch_of(outer.nodes[0], "then_branch");
  EXPECT_EQ(names_of(inner, inner.outer_scope_inputs), (std::vector<std::string>{"x"}));
  ASSERT_EQ(inner.nodes.size(), 1u);
  EXPECT_EQ(inner.nodes[0].op_type, "Add");  // the Slice of `w` is an initializer of the inner branch now

  // Level 0 leaves the reads alone.
  auto plain = create_session(model, 0);
  ASSERT_TRUE(plain);
  EXPECT_EQ(names_of(plain->graph(), plain->graph().nodes[0].implicit_inputs),
            (std::vector<std::string>{"c", "w", "x"}));
}

TEST(RedundantNodes, RemovesNoOps) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{2}, int64_t{3}, int64_t{4}}}};
  model.graph.outputs = {{"y", 1, {int64_t{2}, int64_t{3}, int64_t{4}}}, {"z", 1, {int64_t{2}, int64_t{12}}}};
  model.graph.initializers = {w::int64_tensor("s1", {2}, {6, 4}), w::int64_tensor("s2", {2}, {2, 12}),
                              w::int64_tensor("axes", {1}, {1}), w::int64_tensor("same", {3}, {2, 1, 4})};
  model.graph.nodes = {
      {"Identity", {"x"}, {"a"}, {}, "identity"},
      {"Cast", {"a"}, {"b"}, {w::attr_int("to", 1)}, "cast_same"},
      {"Transpose", {"b"}, {"c"}, {ints("perm", {1, 2, 0})}, "t1"},
      {"Transpose", {"c"}, {"d"}, {ints("perm", {2, 0, 1})}, "t2"},
      {"Dropout", {"d"}, {"e"}, {}, "dropout"},
      {"Unsqueeze", {"e", "axes"}, {"f"}, {}, "unsqueeze"},
      {"Squeeze", {"f", "axes"}, {"g"}, {}, "squeeze"},
      {"Expand", {"g", "same"}, {"h"}, {}, "expand_same"},
      {"Relu", {"h"}, {"y"}, {}, "relu"},
      {"Reshape", {"x", "s1"}, {"r1"}, {}, "reshape1"},
      {"Reshape", {"r1", "s2"}, {"r2"}, {}, "reshape2"},
      {"Identity", {"r2"}, {"z"}, {}, "identity_out"},
  };
  auto optimized = optimize_and_compare(model, 0, 1);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Reshape", "Relu"}));
  EXPECT_EQ(optimized->outputs()[1].name, "z");
}

TEST(RedundantNodes, KeepsIdentityBetweenGraphInputAndOutput) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{3}}}};
  model.graph.outputs = {{"y", 1, {int64_t{3}}}, {"x_copy", 1, {int64_t{3}}}};
  model.graph.nodes = {{"Identity", {"x"}, {"x_copy"}, {}, "keep"}, {"Neg", {"x"}, {"y"}, {}, "neg"}};
  auto optimized = optimize_and_compare(model, 0);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "Identity"), 1);
}

TEST(RedundantNodes, TransposePairComposes) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{2}, int64_t{3}, int64_t{4}}}};
  model.graph.outputs = {{"y", 1, {int64_t{4}, int64_t{3}, int64_t{2}}}};
  model.graph.nodes = {{"Transpose", {"x"}, {"a"}, {ints("perm", {1, 0, 2})}, "t1"},
                       {"Transpose", {"a"}, {"y"}, {ints("perm", {2, 0, 1})}, "t2"}};
  auto optimized = optimize_and_compare(model, 0, 1);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Transpose"}));
}

// A fuzzed model: Transpose without inputs after a Reshape. The optimizer must leave it for kernel creation
// to reject instead of reading a missing input.
TEST(RedundantNodes, MalformedArityIsRejectedNotRewritten) {
  w::Model model;
  model.graph.inputs = {{"X", 1, {int64_t{3}, int64_t{4}}}};
  model.graph.outputs = {{"Y", 1, {int64_t{6}, int64_t{2}}}};
  model.graph.initializers = {w::int64_tensor("shape", {2}, {2, 6})};
  model.graph.nodes = {{"Reshape", {"X", "shape"}, {"R"}, {}, "reshape"},
                       {"Transpose", {}, {"Y"}, {ints("perm", {1, 0})}, "transpose"},
                       {"Transpose", {"R", "R"}, {"Z"}, {ints("perm", {1, 0})}, "transpose_two_inputs"}};
  for (int level : {1, 99}) {
    SessionOptions options;
    options.graph_optimization_level = level;
    auto session = Session::create_from_bytes(w::encode_model(model), options);
    ASSERT_TRUE(session) << session.status().to_string();  // arity is checked when the kernel runs
    EXPECT_EQ(op_types(**session), (std::vector<std::string>{"Reshape", "Transpose", "Transpose"}));
    auto x = Tensor::allocate(DataType::kFloat32, {3, 4});
    ASSERT_TRUE(x);
    std::fill_n(x->data<float>(), 12, 1.0f);
    const std::vector<std::string> names = {"X"};
    std::vector<Tensor> inputs;
    inputs.push_back(std::move(*x));
    auto outputs = (*session)->run(names, inputs, {});
    ASSERT_FALSE(outputs);
    EXPECT_NE(outputs.status().to_string().find("transpose"), std::string::npos) << outputs.status().to_string();
  }
}

w::Model conv_model(const std::vector<w::Node>& tail, const std::vector<w::Tensor>& extra, const std::string& out) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}}}};
  model.graph.outputs = {{out, 1, {int64_t{1}, int64_t{3}, int64_t{5}, int64_t{5}}}};
  model.graph.initializers = {w::float_tensor("W", {3, 2, 3, 3}, ramp(54)), w::float_tensor("B", {3}, {0.1f, -0.2f, 0.3f})};
  model.graph.initializers.insert(model.graph.initializers.end(), extra.begin(), extra.end());
  model.graph.nodes = {{"Conv", {"x", "W", "B"}, {"c"}, {ints("pads", {1, 1, 1, 1})}, "conv"}};
  model.graph.nodes.insert(model.graph.nodes.end(), tail.begin(), tail.end());
  return model;
}

TEST(ConvFolding, FoldsBatchNormalization) {
  auto model = conv_model({{"BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y"}, {}, "bn"}},
                          {w::float_tensor("scale", {3}, {1.5f, 0.5f, -2.0f}), w::float_tensor("bias", {3}, {0.1f, 0.2f, 0.3f}),
                           w::float_tensor("mean", {3}, {0.3f, -0.1f, 0.0f}), w::float_tensor("var", {3}, {0.5f, 2.0f, 1.0f})},
                          "y");
  auto optimized = optimize_and_compare(model, 1e-5, 1);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Conv"}));
}

TEST(ConvFolding, FoldsPerChannelMulAndAddButNotFullTensors) {
  auto model = conv_model({{"Mul", {"c", "m"}, {"cm"}, {}, "mul"}, {"Add", {"k", "cm"}, {"ca"}, {}, "add"},
                           {"Add", {"ca", "full"}, {"y"}, {}, "add_full"}},
                          {w::float_tensor("m", {3, 1, 1}, {2.0f, -1.0f, 0.5f}), w::float_tensor("k", {}, {0.25f}),
                           w::float_tensor("full", {1, 3, 5, 5}, ramp(75))},
                          "y");
  auto optimized = optimize_and_compare(model, 1e-5, 1);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Conv", "Add"}));
}

TEST(ConvFolding, KeepsConvWhoseOutputIsAlsoAGraphOutput) {
  auto model = conv_model({{"Mul", {"c", "m"}, {"y"}, {}, "mul"}}, {w::float_tensor("m", {3, 1, 1}, {2, 3, 4})}, "y");
  model.graph.outputs.push_back({"c", 1, {int64_t{1}, int64_t{3}, int64_t{5}, int64_t{5}}});
  auto optimized = optimize_and_compare(model, 0, 1);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Conv", "Mul"}));
}

}  // namespace
}  // namespace nxrt::optimizer_test
