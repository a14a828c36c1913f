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

TEST(Scaler, PerColumnAndTypeChecks) {
  const auto node = ml_node(NodeBuilder("Scaler", 1).attr_floats("offset", {1, 2}).attr_floats("scale", {2, 0.5f}));
  const Tensor y = run_one(node, {make_tensor<int64_t>({2, 2}, {1, 2, 3, 6})});
  EXPECT_EQ(y.dtype(), DataType::kFloat32);
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 0, 4, 2}));
  auto bad = run_kernel(node, {make_tensor<float>({1, 3}, {1, 2, 3})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(Normalizer, ModesAndZeroRow) {
  const Tensor x = make_tensor<float>({2, 2}, {3, -4, 0, 0});
  EXPECT_EQ(to_vector<float>(run_one(ml_node(NodeBuilder("Normalizer", 1).attr_string("norm", "L2")), {x})),
            (std::vector<float>{0.6f, -0.8f, 0, 0}));
  EXPECT_EQ(to_vector<float>(run_one(ml_node(NodeBuilder("Normalizer", 1).attr_string("norm", "L1")), {x})),
            (std::vector<float>{3.0f / 7, -4.0f / 7, 0, 0}));
  EXPECT_EQ(to_vector<float>(run_one(ml_node(NodeBuilder("Normalizer", 1)), {x})),
            (std::vector<float>{0.75f, -1.0f, 0, 0}));
}

TEST(Imputer, ReplacesNaNPerColumn) {
  const auto node = ml_node(NodeBuilder("Imputer", 1)
                                .attr_floats("imputed_value_floats", {7, 8})
                                .attr_float("replaced_value_float", NAN));
  const Tensor y = run_one(node, {make_tensor<float>({2, 2}, {NAN, 1, 2, NAN})});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{7, 1, 2, 8}));
}

TEST(OneHotEncoder, UnknownCategoryFollowsZeros) {
  const auto node = ml_node(NodeBuilder("OneHotEncoder", 1).attr_ints("cats_int64s", {4, 9}));
  const Tensor y = run_one(node, {make_tensor<double>({3}, {9.0, 4.0, 1.0})});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 1, 1, 0, 0, 0}));
  auto strict = run_kernel(ml_node(NodeBuilder("OneHotEncoder", 1).attr_ints("cats_int64s", {4}).attr_int("zeros", 0)),
                           {make_tensor<int64_t>({1}, {5})});
  ASSERT_FALSE(strict.has_value());
  EXPECT_EQ(strict.status().code(), StatusCode::kInvalidArgument);
}

TEST(FeatureVectorizer, CutsAndPads) {
  const auto node = ml_node(NodeBuilder("FeatureVectorizer", 1).attr_ints("inputdimensions", {1, 3}));
  const Tensor y = run_one(node, {make_tensor<float>({2, 2}, {1, 2, 3, 4}), make_tensor<int32_t>({2, 2}, {5, 6, 7, 8})});
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{1, 5, 6, 0, 3, 7, 8, 0}));
}

TEST(LinearRegressor, TwoTargetsWithLogistic) {
  const auto node = ml_node(NodeBuilder("LinearRegressor", 1)
                                .attr_floats("coefficients", {1, 0, 0, 1})
                                .attr_floats("intercepts", {0, 1})
                                .attr_int("targets", 2)
                                .attr_string("post_transform", "LOGISTIC"));
  const Tensor y = run_one(node, {make_tensor<float>({1, 2}, {0, -1})});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0.5f, 0.5f}));
}

TEST(LinearClassifier, BinaryAndMulticlassLabels) {
  const auto binary = ml_node(NodeBuilder("LinearClassifier", 1)
                                  .attr_floats("coefficients", {1, -1})
                                  .attr_floats("intercepts", {0})
                                  .attr_ints("classlabels_ints", {10, 20}));
  auto out = run_kernel(binary, {make_tensor<float>({2, 2}, {2, 1, 0, 3})});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(to_vector<int64_t>((*out)[0]), (std::vector<int64_t>{20, 10}));
  EXPECT_EQ(to_vector<float>((*out)[1]), (std::vector<float>{-1, 1, 3, -3}));

  const auto multi = ml_node(NodeBuilder("LinearClassifier", 1)
                                 .attr_floats("coefficients", {1, 0, 0, 1, -1, -1})
                                 .attr_strings("classlabels_strings", {"a", "b", "c"})
                                 .attr_string("post_transform", "SOFTMAX"));
  out = run_kernel(multi, {make_tensor<float>({1, 2}, {-5, -6})});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(to_vector<std::string>((*out)[0]), (std::vector<std::string>{"c"}));
}

}  // namespace
}  // namespace nxrt::cpu::testing
