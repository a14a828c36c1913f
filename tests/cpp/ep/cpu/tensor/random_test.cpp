#include <cmath>
#include <cstdint>
#include <vector>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

TEST(RandomUniform, SeededIsReproducibleAcrossThreadCounts) {
  const auto node = NodeBuilder("RandomUniform", 22)
                        .attr_ints("shape", {100, 300})
                        .attr_float("seed", 3.0f)
                        .attr_float("low", -2.0f)
                        .attr_float("high", 5.0f)
                        .node();
  const Tensor one = run_one(node, {}, 1);
  const Tensor four = run_one(node, {}, 4);
  const Tensor again = run_one(node, {}, 1);
  EXPECT_EQ(to_vector<float>(one), to_vector<float>(four));
  EXPECT_EQ(to_vector<float>(one), to_vector<float>(again));
  double sum = 0;
  for (float v : to_vector<float>(one)) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 5.0f);
    sum += v;
  }
  EXPECT_NEAR(sum / one.numel(), 1.5, 0.1);
}

TEST(RandomUniform, UnseededRunsDiffer) {
  const auto node = NodeBuilder("RandomUniform", 22).attr_ints("shape", {64}).node();
  EXPECT_NE(to_vector<float>(run_one(node, {})), to_vector<float>(run_one(node, {})));
}

TEST(RandomUniform, DifferentSeedsDiffer) {
  const auto a = NodeBuilder("RandomUniform", 22).attr_ints("shape", {64}).attr_float("seed", 1.0f).node();
  const auto b = NodeBuilder("RandomUniform", 22).attr_ints("shape", {64}).attr_float("seed", 2.0f).node();
  EXPECT_NE(to_vector<float>(run_one(a, {})), to_vector<float>(run_one(b, {})));
}

TEST(RandomNormal, MomentsAndDtype) {
  const auto node = NodeBuilder("RandomNormal", 22)
                        .attr_ints("shape", {200, 200})
                        .attr_int("dtype", static_cast<int>(DataType::kFloat64))
                        .attr_float("mean", 1.0f)
                        .attr_float("scale", 2.0f)
                        .attr_float("seed", 7.0f)
                        .node();
  const Tensor y = run_one(node, {}, 2);
  ASSERT_EQ(y.dtype(), DataType::kFloat64);
  double sum = 0;
  double squares = 0;
  for (double v : to_vector<double>(y)) {
    sum += v;
    squares += v * v;
  }
  const double mean = sum / y.numel();
  EXPECT_NEAR(mean, 1.0, 0.05);
  EXPECT_NEAR(std::sqrt(squares / y.numel() - mean * mean), 2.0, 0.05);
}

TEST(RandomNormalLike, TakesShapeAndTypeOfInput) {
  const Tensor x = make_half_tensor<Float16>({3, 0}, {});
  const Tensor y = run_one(NodeBuilder("RandomNormalLike", 22).node(), {x});
  EXPECT_EQ(y.dtype(), DataType::kFloat16);
  EXPECT_EQ(y.shape(), (Shape{3, 0}));
  auto bad = run_kernel(NodeBuilder("RandomUniformLike", 22).node(), {make_tensor<int32_t>({2}, {1, 2})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  const Tensor z = run_one(NodeBuilder("RandomUniformLike", 22).attr_int("dtype", 1).node(),
                           {make_tensor<int32_t>({2}, {1, 2})});
  EXPECT_EQ(z.dtype(), DataType::kFloat32);
}

TEST(Bernoulli, ExtremesAndSeed) {
  const Tensor p = make_tensor<float>({6}, {0.0f, 1.0f, 0.0f, 1.0f, 0.5f, 0.5f});
  const auto node = NodeBuilder("Bernoulli", 22).attr_float("seed", 0.0f).attr_int("dtype", 9).node();
  const Tensor y = run_one(node, {p}, 1);
  ASSERT_EQ(y.dtype(), DataType::kBool);
  const bool* v = y.data<bool>();
  EXPECT_FALSE(v[0]);
  EXPECT_TRUE(v[1]);
  EXPECT_FALSE(v[2]);
  EXPECT_TRUE(v[3]);
  const Tensor again = run_one(node, {p}, 3);
  EXPECT_EQ(to_vector<bool>(y), to_vector<bool>(again));
  auto bad = run_kernel(node, {make_tensor<float>({1}, {1.5f})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(Multinomial, SamplesOnlyPossibleClasses) {
  const Tensor logits = make_tensor<float>({2, 3}, {0.0f, -INFINITY, -INFINITY, -INFINITY, 0.0f, 0.0f});
  const auto node = NodeBuilder("Multinomial", 22).attr_int("sample_size", 50).attr_float("seed", 1.0f).node();
  const Tensor y = run_one(node, {logits});
  ASSERT_EQ(y.dtype(), DataType::kInt32);
  ASSERT_EQ(y.shape(), (Shape{2, 50}));
  const std::vector<int32_t> v = to_vector<int32_t>(y);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(v[static_cast<size_t>(i)], 0);
  int ones = 0;
  for (int i = 50; i < 100; ++i) {
    EXPECT_GE(v[static_cast<size_t>(i)], 1);
    ones += v[static_cast<size_t>(i)] == 1;
  }
  EXPECT_GT(ones, 5);
  EXPECT_LT(ones, 45);
  auto bad = run_kernel(NodeBuilder("Multinomial", 22).attr_int("dtype", 1).node(), {logits});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace nxrt::cpu::testing
