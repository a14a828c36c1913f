#include <cmath>
#include <random>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

graph::Node det_node(int opset = 11) { return NodeBuilder("Det", opset).node(); }

// Cofactor expansion, exact for small integer matrices.
double cofactor_det(const std::vector<double>& m, int64_t n) {
  if (n == 0) return 1.0;
  if (n == 1) return m[0];
  double det = 0.0;
  for (int64_t c = 0; c < n; ++c) {
    std::vector<double> minor;
    for (int64_t r = 1; r < n; ++r) {
      for (int64_t k = 0; k < n; ++k) {
        if (k != c) minor.push_back(m[static_cast<size_t>(r * n + k)]);
      }
    }
    det += (c % 2 == 0 ? 1.0 : -1.0) * m[static_cast<size_t>(c)] * cofactor_det(minor, n - 1);
  }
  return det;
}

TEST(DetTest, SmallMatrices) {
  EXPECT_EQ(to_vector<float>(run_one(det_node(), {make_tensor<float>({2, 2}, {1, 2, 3, 4})})),
            (std::vector<float>{-2}));
  // Needs a row swap: zero in the leading position.
  const Tensor swap = make_tensor<double>({3, 3}, {0, 1, 2, 1, 0, 3, 4, -3, 8});
  EXPECT_NEAR(to_vector<double>(run_one(det_node(), {swap}))[0], -2.0, 1e-12);
  const Tensor singular = make_tensor<float>({3, 3}, {1, 2, 3, 2, 4, 6, 1, 1, 1});
  EXPECT_EQ(to_vector<float>(run_one(det_node(), {singular}))[0], 0.0f);
}

TEST(DetTest, BatchedMatchesCofactorExpansion) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(-5, 5);
  for (int64_t n : {1, 2, 3, 4, 5}) {
    const Shape shape{3, 7, n, n};
    std::vector<double> values(static_cast<size_t>(shape_numel(shape)));
    for (double& v : values) v = dist(rng);
    for (int threads : {1, 3}) {
      const Tensor y = run_one(det_node(22), {make_tensor<double>(shape, values)}, threads);
      ASSERT_EQ(y.shape(), (Shape{3, 7}));
      const std::vector<double> out = to_vector<double>(y);
      for (int64_t b = 0; b < 21; ++b) {
        std::vector<double> m(values.begin() + b * n * n, values.begin() + (b + 1) * n * n);
        EXPECT_NEAR(out[static_cast<size_t>(b)], cofactor_det(m, n), 1e-9) << "n " << n << " batch " << b;
      }
    }
  }
}

TEST(DetTest, EmptyMatrixAndEmptyBatch) {
  EXPECT_EQ(to_vector<float>(run_one(det_node(), {make_tensor<float>({2, 0, 0}, {})})), (std::vector<float>{1, 1}));
  EXPECT_EQ(run_one(det_node(), {make_tensor<float>({0, 3, 3}, {})}).shape(), (Shape{0}));
}

TEST(DetTest, HalfTypesAndPrecision) {
  const Tensor h = make_half_tensor<Float16>({2, 2}, {2, 1, 1, 3});
  const Tensor y = run_one(det_node(), {h});
  EXPECT_EQ(y.dtype(), DataType::kFloat16);
  EXPECT_EQ(to_float_vector(y), (std::vector<float>{5}));
  const Tensor b = make_half_tensor<BFloat16>({2, 2}, {2, 1, 1, 3});
  EXPECT_EQ(to_float_vector(run_one(det_node(22), {b})), (std::vector<float>{5}));
  auto old = run_kernel(det_node(11), {b});
  EXPECT_TRUE(old.has_value());  // bf16 is registered for every opset range Det has; kernel accepts it.
  // f64 keeps precision that f32 would lose.
  const double eps = 1e-10;
  const Tensor d = make_tensor<double>({2, 2}, {1 + eps, 1, 1, 1});
  EXPECT_NEAR(to_vector<double>(run_one(det_node(), {d}))[0], eps, 1e-16);  // f32 would give 0
  // Overflow in f16 gives inf, not UB.
  const Tensor big = make_half_tensor<Float16>({2, 2}, {60000, 0, 0, 60000});
  EXPECT_TRUE(std::isinf(to_float_vector(run_one(det_node(), {big}))[0]));
}

TEST(DetTest, NanPropagates) {
  const Tensor x = make_tensor<float>({2, 2}, {NAN, 1, 1, 1});
  EXPECT_TRUE(std::isnan(to_vector<float>(run_one(det_node(), {x}))[0]));
}

TEST(DetTest, RejectsNonSquare) {
  auto result = run_kernel(det_node(), {make_tensor<float>({2, 3}, std::vector<float>(6, 1.0f))});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("[2,3]"), std::string::npos);
  EXPECT_FALSE(run_kernel(det_node(), {make_tensor<float>({3}, {1, 2, 3})}).has_value());
  EXPECT_FALSE(run_kernel(det_node(), {make_tensor<int32_t>({1, 1}, {1})}).has_value());
}

}  // namespace
}  // namespace nxrt::cpu::testing
