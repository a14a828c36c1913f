#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

enum class Kind { kSoftmax, kLogSoftmax, kHardmax };

// Reference over `outer x n x inner` in double.
std::vector<double> reference(const std::vector<float>& x, int64_t outer, int64_t n, int64_t inner, Kind kind) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < inner; ++c) {
      auto at = [&](int64_t r) { return static_cast<size_t>((o * n + r) * inner + c); };
      double m = -INFINITY;
      int64_t arg = 0;
      for (int64_t r = 0; r < n; ++r) {
        if (x[at(r)] > m) {
          m = x[at(r)];
          arg = r;
        }
      }
      double sum = 0;
      for (int64_t r = 0; r < n; ++r) sum += std::exp(x[at(r)] - m);
      for (int64_t r = 0; r < n; ++r) {
        switch (kind) {
          case Kind::kSoftmax: y[at(r)] = std::exp(x[at(r)] - m) / sum; break;
          case Kind::kLogSoftmax: y[at(r)] = x[at(r)] - m - std::log(sum); break;
          case Kind::kHardmax: y[at(r)] = r == arg ? 1.0 : 0.0; break;
        }
      }
    }
  }
  return y;
}

const char* op_name(Kind kind) {
  switch (kind) {
    case Kind::kSoftmax: return "Softmax";
    case Kind::kLogSoftmax: return "LogSoftmax";
    default: return "Hardmax";
  }
}

struct SoftmaxCase {
  Shape shape;
  int64_t axis;
};

class SoftmaxMatchesReference : public ::testing::TestWithParam<std::tuple<SoftmaxCase, int>> {};

TEST_P(SoftmaxMatchesReference, AlongAxisAndFlattened) {
  const auto& [c, threads] = GetParam();
  const auto x = random_floats(static_cast<size_t>(shape_numel(c.shape)), 11);
  const int64_t rank = static_cast<int64_t>(c.shape.size());
  const size_t axis = static_cast<size_t>(c.axis < 0 ? c.axis + rank : c.axis);
  int64_t outer = 1;
  for (size_t d = 0; d < axis; ++d) outer *= c.shape[d];
  const int64_t total = shape_numel(c.shape);
  for (Kind kind : {Kind::kSoftmax, Kind::kLogSoftmax, Kind::kHardmax}) {
    for (int opset : {11, 13}) {
      const int64_t n = opset >= 13 ? c.shape[axis] : total / outer;
      const int64_t inner = total / (outer * n);
      const auto expected = reference(x, outer, n, inner, kind);
      Tensor out = run_one(NodeBuilder(op_name(kind), opset).attr_int("axis", c.axis).node(),
                           {make_tensor(c.shape, x)}, threads);
      ASSERT_EQ(out.shape(), c.shape);
      const auto got = to_vector<float>(out);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], expected[i], 1e-5) << op_name(kind) << " opset " << opset << " at " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, SoftmaxMatchesReference,
                         ::testing::Combine(::testing::Values(SoftmaxCase{{3, 5}, 1}, SoftmaxCase{{3, 5}, 0},
                                                              SoftmaxCase{{2, 3, 4}, 1}, SoftmaxCase{{2, 3, 4}, -1},
                                                              SoftmaxCase{{2, 3, 4}, 0}, SoftmaxCase{{3, 4, 600}, 1},
                                                              SoftmaxCase{{5000, 7}, 1}, SoftmaxCase{{1}, 0}),
                                            ::testing::Values(1, 3)));

TEST(Softmax, DefaultAxisDependsOnOpset) {
  const auto x = random_floats(24, 2);
  Tensor old_default = run_one(NodeBuilder("Softmax", 11).node(), {make_tensor<float>({2, 3, 4}, x)});
  const auto old_expected = reference(x, 2, 12, 1, Kind::kSoftmax);
  Tensor new_default = run_one(NodeBuilder("Softmax", 13).node(), {make_tensor<float>({2, 3, 4}, x)});
  const auto new_expected = reference(x, 6, 4, 1, Kind::kSoftmax);
  const auto a = to_vector<float>(old_default);
  const auto b = to_vector<float>(new_default);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(a[i], old_expected[i], 1e-6);
    EXPECT_NEAR(b[i], new_expected[i], 1e-6);
  }
}

TEST(Softmax, LargeNumbersAreStable) {
  const Tensor x = make_tensor<float>({1, 3}, {10000, 10001, 10002});
  const auto soft = to_vector<float>(run_one(NodeBuilder("Softmax", 13).node(), {x}));
  EXPECT_NEAR(soft[2], 0.66524096f, 1e-6);
  const auto log_soft = to_vector<float>(run_one(NodeBuilder("LogSoftmax", 13).node(), {x}));
  EXPECT_NEAR(log_soft[0], -2.40760596f, 1e-5);
}

TEST(Softmax, HalfTypesComputeInFloat) {
  for (int threads : {1, 3}) {
    Tensor h = run_one(NodeBuilder("Softmax", 13).node(), {make_half_tensor<Float16>({2, 2}, {0, 0, 1, 1})}, threads);
    EXPECT_EQ(to_float_vector(h), (std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f}));
    Tensor b = run_one(NodeBuilder("LogSoftmax", 13).attr_int("axis", 0).node(),
                       {make_half_tensor<BFloat16>({2, 2}, {3, 3, 3, 3})}, threads);
    for (float v : to_float_vector(b)) EXPECT_NEAR(v, -0.6931f, 4e-3);
  }
  auto out = run_kernel(NodeBuilder("Softmax", 11).node(), {make_half_tensor<BFloat16>({1, 2}, {0, 0})});
  EXPECT_FALSE(out.has_value());
}

TEST(Softmax, DoublePrecision) {
  const Tensor x = make_tensor<double>({1, 2}, {0.0, 1e-12});
  const auto got = to_vector<double>(run_one(NodeBuilder("Softmax", 13).node(), {x}));
  EXPECT_NEAR(got[1] - got[0], 0.5e-12, 1e-16);
}

TEST(Hardmax, TiesPickTheFirstAndNanCountsAsMax) {
  const Tensor x = make_tensor<float>({2, 3}, {2, 5, 5, 1, std::numeric_limits<float>::quiet_NaN(), 9});
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Hardmax", 13).node(), {x})),
            (std::vector<float>{0, 1, 0, 0, 1, 0}));
  const Tensor y = make_tensor<float>({2, 2}, {4, 4, 4, 4});
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Hardmax", 13).attr_int("axis", 0).node(), {y})),
            (std::vector<float>{1, 1, 0, 0}));
}

TEST(Softmax, EmptyTensorsAndAxisErrors) {
  const Tensor empty = make_tensor<float>({0, 4}, {});
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    EXPECT_EQ(run_one(NodeBuilder(op, 13).node(), {empty}, 3).shape(), (Shape{0, 4}));
    EXPECT_EQ(run_one(NodeBuilder(op, 11).node(), {empty}).shape(), (Shape{0, 4}));
    const Tensor x = make_tensor<float>({2, 2}, {1, 2, 3, 4});
    auto out = run_kernel(NodeBuilder(op, 13).attr_int("axis", 2).node(), {x});
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find(op), std::string::npos);
    // The flattened form accepts axis == rank: every element is its own row.
    auto flat = run_kernel(NodeBuilder(op, 11).attr_int("axis", 2).node(), {x});
    ASSERT_TRUE(flat.has_value()) << flat.status().to_string();
    const auto v = to_vector<float>((*flat)[0]);
    const float expected = std::string(op) == "LogSoftmax" ? 0.0f : 1.0f;
    for (float e : v) EXPECT_EQ(e, expected);
    out = run_kernel(NodeBuilder(op, 11).attr_int("axis", -3).node(), {x});
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace nxrt::cpu::testing
