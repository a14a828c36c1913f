#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

graph::Node ml_node(const NodeBuilder& builder) {
  graph::Node node = builder.node();
  node.domain = "ai.onnx.ml";
  return node;
}

TEST(LabelEncoder, StringToIntWithDefault) {
  const auto node = ml_node(NodeBuilder("LabelEncoder", 2)
                                .attr_strings("keys_strings", {"a", "b"})
                                .attr_ints("values_int64s", {10, 20})
                                .attr_int("default_int64", 42));
  const Tensor y = run_one(node, {make_tensor<std::string>({3}, {"b", "z", "a"})});
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{20, 42, 10}));
}

TEST(LabelEncoder, FloatKeysMatchNaNAndDefaultFloat) {
  const auto node = ml_node(NodeBuilder("LabelEncoder", 2)
                                .attr_floats("keys_floats", {1.5f, NAN})
                                .attr_strings("values_strings", {"x", "nan"}));
  const Tensor y = run_one(node, {make_tensor<float>({3}, {NAN, 1.5f, 2.0f})});
  EXPECT_EQ(to_vector<std::string>(y), (std::vector<std::string>{"nan", "x", "_Unused"}));
  auto bad = run_kernel(ml_node(NodeBuilder("LabelEncoder", 2)
                                    .attr_strings("keys_strings", {"a"})
                                    .attr_ints("values_int64s", {1, 2})),
                        {make_tensor<std::string>({1}, {"a"})});
  ASSERT_FALSE(bad.has_value());
}

TEST(LabelEncoder, Opset1MapsBothWays) {
  const auto node = ml_node(NodeBuilder("LabelEncoder", 1).attr_strings("classes_strings", {"x", "y"}));
  const Tensor ints = run_one(node, {make_tensor<std::string>({2}, {"y", "q"})});
  EXPECT_EQ(to_vector<int64_t>(ints), (std::vector<int64_t>{1, -1}));
  const Tensor strings = run_one(node, {make_tensor<int64_t>({2}, {0, 5})});
  EXPECT_EQ(to_vector<std::string>(strings), (std::vector<std::string>{"x", "_Unused"}));
}

TEST(Binarizer, Threshold) {
  const Tensor y = run_one(ml_node(NodeBuilder("Binarizer", 1).attr_float("threshold", 1.0f)),
                           {make_tensor<int64_t>({3}, {0, 1, 2})});
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{0, 0, 1}));
}

TEST(ArrayFeatureExtractor, SelectsColumnsAndRejectsBadIndex) {
  const auto node = ml_node(NodeBuilder("ArrayFeatureExtractor", 1));
  const Tensor x = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor y = run_one(node, {x, make_tensor<int64_t>({2}, {2, 0})});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{3, 1, 6, 4}));
  auto bad = run_kernel(node, {x, make_tensor<int64_t>({1}, {3})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(TreeEnsemble, TwoTreesSumAndMembership) {
  // Tree 0: x0 <= 0.5 ? leaf 0 (1.0) : leaf 1 (2.0). Tree 1: x1 in {3, 4} ? leaf 2 (10) : leaf 3 (20).
  Tensor splits = make_tensor<float>({2}, {0.5f, 0.0f});
  Tensor modes = make_tensor<uint8_t>({2}, {0, 6});
  Tensor members = make_tensor<float>({3}, {3.0f, 4.0f, NAN});
  Tensor weights = make_tensor<float>({4}, {1.0f, 2.0f, 10.0f, 20.0f});
  const auto node = ml_node(NodeBuilder("TreeEnsemble", 5)
                                .attr_ints("nodes_featureids", {0, 1})
                                .attr_tensor("nodes_splits", splits)
                                .attr_tensor("nodes_modes", modes)
                                .attr_tensor("membership_values", members)
                                .attr_ints("nodes_truenodeids", {0, 2})
                                .attr_ints("nodes_falsenodeids", {1, 3})
                                .attr_ints("nodes_trueleafs", {1, 1})
                                .attr_ints("nodes_falseleafs", {1, 1})
                                .attr_ints("leaf_targetids", {0, 0, 1, 1})
                                .attr_tensor("leaf_weights", weights)
                                .attr_ints("tree_roots", {0, 1})
                                .attr_int("n_targets", 2));
  const Tensor x = make_tensor<float>({2, 2}, {0.0f, 4.0f, 1.0f, 5.0f});
  const Tensor y = run_one(node, {x});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{1, 10, 2, 20}));
  auto bad = run_kernel(node, {make_tensor<float>({1, 1}, {0.0f})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}


// One tree per op: x0 <= 0.5 ? leaf (node 1) : leaf (node 2); tree ids and node ids as converters write them.
NodeBuilder one_split_tree(const char* op, int opset) {
  return NodeBuilder(op, opset)
      .attr_ints("nodes_treeids", {0, 0, 0})
      .attr_ints("nodes_nodeids", {0, 1, 2})
      .attr_ints("nodes_featureids", {0, 0, 0})
      .attr_strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"})
      .attr_floats("nodes_values", {0.5f, 0.0f, 0.0f})
      .attr_ints("nodes_truenodeids", {1, 0, 0})
      .attr_ints("nodes_falsenodeids", {2, 0, 0});
}

TEST(TreeEnsembleRegressor, TwoTargetsAddBaseValuesAndReadUnreachedTargetsAsZero) {
  // Leaf 1 weighs target 0 only; leaf 2 weighs both targets.
  const auto node = ml_node(one_split_tree("TreeEnsembleRegressor", 3)
                                .attr_ints("target_treeids", {0, 0, 0})
                                .attr_ints("target_nodeids", {1, 2, 2})
                                .attr_ints("target_ids", {0, 0, 1})
                                .attr_floats("target_weights", {1.0f, 2.0f, 3.0f})
                                .attr_floats("base_values", {10.0f, 20.0f})
                                .attr_int("n_targets", 2));
  const Tensor y = run_one(node, {make_tensor<double>({2, 1}, {0.0, 1.0})});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{11, 0, 12, 23}));
  // The trees read feature 0: X needs at least one column.
  auto bad = run_kernel(node, {make_tensor<float>({1, 0}, {})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(TreeEnsembleClassifier, ThreeClassesTakeTheArgmaxLabelAndSoftmaxScores) {
  const auto node = ml_node(one_split_tree("TreeEnsembleClassifier", 1)
                                .attr_ints("class_treeids", {0, 0})
                                .attr_ints("class_nodeids", {1, 2})
                                .attr_ints("class_ids", {2, 0})
                                .attr_floats("class_weights", {1.0f, 1.0f})
                                .attr_strings("classlabels_strings", {"ant", "bee", "cat"})
                                .attr_string("post_transform", "SOFTMAX"));
  auto outputs = run_kernel(node, {make_tensor<int64_t>({2, 1}, {0, 1})});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().message();
  const Tensor& labels = (*outputs)[0];
  EXPECT_EQ(labels.data<std::string>()[0], "cat");
  EXPECT_EQ(labels.data<std::string>()[1], "ant");
  const std::vector<float> z = to_vector<float>((*outputs)[1]);
  const float big = std::exp(1.0f) / (std::exp(1.0f) + 2.0f), small = 1.0f / (std::exp(1.0f) + 2.0f);
  const std::vector<float> want = {small, small, big, big, small, small};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(z[i], want[i], 1e-6f) << i;
}

TEST(TreeEnsembleClassifier, BinaryModelWithPositiveWeightsWritesTheComplementPair) {
  const auto node = ml_node(one_split_tree("TreeEnsembleClassifier", 1)
                                .attr_ints("class_treeids", {0, 0})
                                .attr_ints("class_nodeids", {1, 2})
                                .attr_ints("class_ids", {0, 0})
                                .attr_floats("class_weights", {0.3f, 0.8f})
                                .attr_ints("classlabels_int64s", {4, 9}));
  auto outputs = run_kernel(node, {make_tensor<float>({2, 1}, {0.0f, 1.0f})});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().message();
  EXPECT_EQ(to_vector<int64_t>((*outputs)[0]), (std::vector<int64_t>{4, 9}));
  const std::vector<float> z = to_vector<float>((*outputs)[1]);
  const std::vector<float> want = {0.7f, 0.3f, 0.2f, 0.8f};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(z[i], want[i], 1e-6f) << i;
}

TEST(TreeEnsembleClassifier, MalformedForestsAreRefused) {
  const auto base = [] {
    return one_split_tree("TreeEnsembleClassifier", 1)
        .attr_ints("class_treeids", {0, 0})
        .attr_ints("class_nodeids", {1, 2})
        .attr_floats("class_weights", {1.0f, 1.0f});
  };
  // A class id past the labels, a branch to a missing node, a single label.
  const graph::Node out_of_range =
      ml_node(base().attr_ints("class_ids", {0, 2}).attr_ints("classlabels_int64s", {0, 1}));
  graph::Node missing_node = ml_node(base().attr_ints("class_ids", {0, 1}).attr_ints("classlabels_int64s", {0, 1}));
  for (auto& a : missing_node.attributes) {
    if (a.name == "nodes_truenodeids") a.ints = {7, 0, 0};
  }
  const graph::Node one_label = ml_node(base().attr_ints("class_ids", {0, 0}).attr_ints("classlabels_int64s", {0}));
  for (const graph::Node* node : std::vector<const graph::Node*>{&out_of_range, &missing_node, &one_label}) {
    auto result = run_kernel(*node, {make_tensor<float>({1, 1}, {0.0f})});
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidGraph) << result.status().message();
  }
}

// Trees that are a single leaf read no feature: X may have no columns, for one row or for a block of many.
TEST(TreeEnsembleRegressor, SingleLeafTreesNeedNoFeatures) {
  const auto node = ml_node(NodeBuilder("TreeEnsembleRegressor", 1)
                                .attr_ints("nodes_treeids", {0, 1})
                                .attr_ints("nodes_nodeids", {0, 0})
                                .attr_ints("nodes_featureids", {0, 0})
                                .attr_strings("nodes_modes", {"LEAF", "LEAF"})
                                .attr_floats("nodes_values", {0.0f, 0.0f})
                                .attr_ints("nodes_truenodeids", {0, 0})
                                .attr_ints("nodes_falsenodeids", {0, 0})
                                .attr_ints("target_treeids", {0, 1})
                                .attr_ints("target_nodeids", {0, 0})
                                .attr_ints("target_ids", {0, 0})
                                .attr_floats("target_weights", {1.5f, 2.0f})
                                .attr_int("n_targets", 1));
  for (int64_t rows : {1, 70}) {
    const Tensor y = run_one(node, {*Tensor::allocate(DataType::kFloat32, Shape{rows, 0})});
    EXPECT_EQ(y.shape(), (Shape{rows, 1}));
    for (float v : to_vector<float>(y)) EXPECT_EQ(v, 3.5f);
  }
}

TEST(SVMRegressor, RbfSupportVectorsAndOneClass) {
  // y = 2 exp(-0.5 |x - (0, 0)|^2) - 1 exp(-0.5 |x - (1, 1)|^2) + 0.25
  NodeBuilder builder("SVMRegressor", 1);
  builder.attr_int("n_supports", 2)
      .attr_floats("support_vectors", {0, 0, 1, 1})
      .attr_floats("coefficients", {2, -1})
      .attr_floats("rho", {0.25f})
      .attr_string("kernel_type", "RBF")
      .attr_floats("kernel_params", {0.5f, 0, 0});
  const Tensor x = make_tensor<float>({2, 2}, {0, 0, 1, 1});
  const std::vector<float> y = to_vector<float>(run_one(ml_node(builder), {x}));
  const double e1 = std::exp(-1.0);  // exp(-0.5 * 2)
  EXPECT_NEAR(y[0], 2 - e1 + 0.25, 1e-6);
  EXPECT_NEAR(y[1], 2 * e1 - 1 + 0.25, 1e-6);
  builder.attr_int("one_class", 1);
  EXPECT_EQ(to_vector<float>(run_one(ml_node(builder), {x})), (std::vector<float>{1, -1}));  // 2/e - 0.75 < 0
  auto bad = run_kernel(ml_node(builder), {make_tensor<float>({1, 3}, {0, 0, 0})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(SVMClassifier, OneVsOneVotesPickTheLabelAndLinearFormScoresEachClass) {
  // Three classes, one support vector each at 0, 1 and 2 (linear kernel, one feature); coefficients [2 x 3].
  const auto node = ml_node(NodeBuilder("SVMClassifier", 1)
                                .attr_ints("vectors_per_class", {1, 1, 1})
                                .attr_floats("support_vectors", {0, 1, 2})
                                .attr_floats("coefficients", {1, -1, -1, 1, 1, -1})
                                .attr_floats("rho", {0.5f, 0.5f, 0.5f})
                                .attr_ints("classlabels_ints", {10, 20, 30}));
  auto outputs = run_kernel(node, {make_tensor<float>({1, 1}, {2.0f})});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().message();
  // At x = 2 the kernels are (0, 2, 4): d01 = coef[0][0] k0 + coef[0][1] k1 + 0.5 = -1.5 (a vote for class 1),
  // d02 = coef[1][0] k0 + coef[0][2] k2 + 0.5 = -3.5 and d12 = coef[1][1] k1 + coef[1][2] k2 + 0.5 = -1.5 (class 2
  // twice): label 30.
  EXPECT_EQ(to_vector<int64_t>((*outputs)[0]), (std::vector<int64_t>{30}));
  EXPECT_EQ(to_vector<float>((*outputs)[1]), (std::vector<float>{-1.5f, -3.5f, -1.5f}));
  const auto linear = ml_node(NodeBuilder("SVMClassifier", 1)
                                  .attr_floats("coefficients", {1, -1, -1, 1})
                                  .attr_floats("rho", {0})
                                  .attr_strings("classlabels_strings", {"no", "yes"}));
  auto scored = run_kernel(linear, {make_tensor<double>({2, 2}, {1, 0, 0, 1})});
  ASSERT_TRUE(scored.has_value()) << scored.status().message();
  EXPECT_EQ((*scored)[0].data<std::string>()[0], "yes");  // mixed coefficients: a positive top score picks class 1
  EXPECT_EQ((*scored)[0].data<std::string>()[1], "yes");
  EXPECT_EQ(to_vector<float>((*scored)[1]), (std::vector<float>{1, -1, -1, 1}));
}
}  // namespace
}  // namespace nxrt::cpu::testing
