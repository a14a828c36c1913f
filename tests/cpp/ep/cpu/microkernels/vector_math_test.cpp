// Vector math (vector_math.h) against double-precision std:: references: every ISA copy the CPU can run
// (the best one and the generic one), dense sweeps plus random values, odd lengths and special values.
#include "ep/cpu/microkernels/vector_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace nxrt::cpu {
namespace {

using VectorFn = void (*)(const float*, float*, int64_t);

struct Case {
  std::string name;
  VectorFn fn;
  std::function<double(double)> reference;
  double max_ulp;
  double max_abs;  // errors below this absolute bound are accepted regardless of ulp (cancellation near 0)
};

double gelu_erf_ref(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_ref(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

std::vector<Case> cases() {
  return {
      {"exp", vector_exp, [](double x) { return std::exp(x); }, 1.5, 0.0},
      {"tanh", vector_tanh, [](double x) { return std::tanh(x); }, 2.5, 0.0},
      {"sigmoid", vector_sigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 2.5, 0.0},
      {"erf", vector_erf, [](double x) { return std::erf(x); }, 3.0, 0.0},
      // 1 + erf(x) cancels for negative x: the float formula itself (and ONNX Runtime's) is off by ~1e-7 there.
      {"gelu_erf", vector_gelu_erf, gelu_erf_ref, 4.0, 2e-7},
      {"gelu_tanh", vector_gelu_tanh, gelu_tanh_ref, 4.0, 2e-7},
      {"silu", [](const float* in, float* out, int64_t n) { vector_swish(in, out, n, 1.0f); },
       [](double x) { return x / (1.0 + std::exp(-x)); }, 3.5, 0.0},
      // 1.702 x: the Swish form of QuickGelu; the rounding of alpha * x adds up to |1.702 x| ulp of the gate.
      {"swish_1.702", [](const float* in, float* out, int64_t n) { vector_swish(in, out, n, 1.702f); },
       [](double x) { return x / (1.0 + std::exp(-static_cast<double>(1.702f * static_cast<float>(x)))); }, 3.5, 0.0},
  };
}

double ulp_of(double value) {
  const float f = static_cast<float>(std::fabs(value));
  if (f >= std::numeric_limits<float>::max()) return std::numeric_limits<float>::max();
  return static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity()) - f);
}

std::vector<float> sweep_inputs() {
  std::vector<float> xs;
  for (double x = -20.0; x <= 20.0; x += 1.0 / 1024) xs.push_back(static_cast<float>(x));
  for (double x = -110.0; x <= 95.0; x += 0.03125) xs.push_back(static_cast<float>(x));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-8.0f, 8.0f);
  for (int i = 0; i < 20000; ++i) xs.push_back(unit(rng));
  for (float tiny : {1e-30f, 1e-20f, 1e-10f, 1e-6f, 1e-3f}) {
    xs.push_back(tiny);
    xs.push_back(-tiny);
  }
  xs.push_back(0.0f);
  xs.push_back(-0.0f);
  return xs;
}

void check_accuracy(const Case& c) {
  const std::vector<float> xs = sweep_inputs();
  std::vector<float> ys(xs.size());
  c.fn(xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
  double worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double expected = c.reference(xs[i]);
    const double rounded = static_cast<double>(static_cast<float>(expected));
    if (std::isinf(rounded)) {
      EXPECT_EQ(ys[i], static_cast<float>(rounded)) << c.name << "(" << xs[i] << ")";
      continue;
    }
    const double error = std::fabs(static_cast<double>(ys[i]) - expected);
    // Results in the subnormal range may flush (sigmoid of x < -88.7 is 0, as 1 / (1 + expf(-x)) gives).
    if (error <= c.max_abs || error <= std::numeric_limits<float>::min()) continue;
    const double ulps = error / ulp_of(expected);
    if (ulps > worst) {
      worst = ulps;
      worst_x = xs[i];
    }
  }
  EXPECT_LE(worst, c.max_ulp) << c.name << " worst at x = " << worst_x << " (" << vector_math_isa() << ")";
}

void check_special_values(const Case& c) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> xs = {nan, inf, -inf, 200.0f, -200.0f, 0.0f};
  std::vector<float> ys(xs.size());
  c.fn(xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
  EXPECT_TRUE(std::isnan(ys[0])) << c.name << "(NaN) = " << ys[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    const float expected = static_cast<float>(c.reference(xs[i]));
    if (std::isnan(expected)) continue;  // gelu(-inf) = -inf * 0
    if (std::isinf(expected)) {
      EXPECT_EQ(ys[i], expected) << c.name << "(" << xs[i] << ")";
    } else {
      EXPECT_NEAR(ys[i], expected, 1e-30 + 1e-7 * std::fabs(expected)) << c.name << "(" << xs[i] << ")";
    }
  }
}

// Lengths around the vector widths and unaligned starts: every element must be computed, none beyond.
void check_lengths(const Case& c) {
  std::vector<float> xs(200);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) * 0.037f - 3.0f;
  for (int64_t offset : {0, 1, 3}) {
    for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100}) {
      std::vector<float> ys(xs.size() + 1, 12345.0f);
      c.fn(xs.data() + offset, ys.data() + offset, n);
      for (int64_t i = 0; i < n; ++i) {
        const double expected = c.reference(xs[offset + i]);
        EXPECT_NEAR(ys[offset + i], expected, 1e-6 * std::fabs(expected) + 2e-7) << c.name << " n=" << n;
      }
      EXPECT_EQ(ys[offset + n], 12345.0f) << c.name << " wrote past n=" << n;
    }
  }
}

// Parameter: the ISA copy under test; copies the CPU cannot run are skipped (GTEST_SKIP), the generic one always runs.
class VectorMathTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!vector_math_force_isa(GetParam())) GTEST_SKIP() << "CPU lacks " << GetParam();
  }
  void TearDown() override { vector_math_force_isa(""); }
};

TEST_P(VectorMathTest, AccurateOverSweeps) {
  for (const Case& c : cases()) check_accuracy(c);
}

TEST_P(VectorMathTest, SpecialValues) {
  for (const Case& c : cases()) check_special_values(c);
}

TEST_P(VectorMathTest, EveryLengthAndOffset) {
  for (const Case& c : cases()) check_lengths(c);
}

TEST_P(VectorMathTest, InPlace) {
  std::vector<float> xs(37);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) * 0.3f - 5.0f;
  std::vector<float> ys = xs;
  vector_tanh(ys.data(), ys.data(), static_cast<int64_t>(ys.size()));
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(ys[i], std::tanh(xs[i]), 2e-7);
}

TEST_P(VectorMathTest, ExpShiftedSum) {
  for (int64_t n : {0, 1, 15, 16, 17, 100, 1000}) {
    std::vector<float> xs(static_cast<size_t>(n));
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
    for (float& x : xs) x = dist(rng);
    std::vector<float> ys(xs.size());
    const float shift = 3.5f;
    const float sum = vector_exp_shifted_sum(xs.data(), ys.data(), n, shift);
    double expected_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double e = std::exp(static_cast<double>(xs[i] - shift));
      expected_sum += e;
      EXPECT_NEAR(ys[i], e, 2e-7 * e);
    }
    EXPECT_NEAR(sum, expected_sum, 1e-6 * expected_sum + 1e-30) << "n=" << n;
  }
}

TEST_P(VectorMathTest, RowMomentsAndNormalizeRowMatchDoubleReference) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t n : {1, 7, 16, 31, 32, 33, 192, 1000, 2500}) {
    for (float offset : {0.0f, 1000.0f}) {  // a large common offset: the variance must not cancel away
      std::vector<float> xs(static_cast<size_t>(n));
      std::vector<float> scale(xs.size());
      std::vector<float> bias(xs.size());
      for (size_t i = 0; i < xs.size(); ++i) {
        xs[i] = offset + dist(rng);
        scale[i] = dist(rng);
        bias[i] = dist(rng);
      }
      double mean_ref = 0;
      for (float x : xs) mean_ref += x;
      mean_ref /= static_cast<double>(n);
      double var_ref = 0;
      for (float x : xs) var_ref += (x - mean_ref) * (x - mean_ref);
      var_ref /= static_cast<double>(n);
      double mean = 0;
      double variance = 0;
      vector_row_moments(xs.data(), n, &mean, &variance);
      EXPECT_NEAR(mean, mean_ref, 1e-6 * (1.0 + std::fabs(mean_ref))) << "n=" << n;
      EXPECT_NEAR(variance, var_ref, 1e-5 * var_ref + 1e-12) << "n=" << n << " offset=" << offset;
      double mean_square_ref = 0;
      for (float x : xs) mean_square_ref += static_cast<double>(x) * x;
      mean_square_ref /= static_cast<double>(n);
      EXPECT_NEAR(vector_row_mean_square(xs.data(), n), mean_square_ref, 1e-6 * mean_square_ref) << "n=" << n;
      const float inv_std = static_cast<float>(1.0 / std::sqrt(variance + 1e-5));
      for (const float* b : {static_cast<const float*>(bias.data()), static_cast<const float*>(nullptr)}) {
        std::vector<float> ys(xs.size(), 12345.0f);
        ys.push_back(12345.0f);
        vector_normalize_row(xs.data(), static_cast<float>(mean), inv_std, scale.data(), b, ys.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          const double expected = (xs[i] - static_cast<float>(mean)) * static_cast<double>(inv_std) * scale[i] +
                                  (b != nullptr ? b[i] : 0.0);
          EXPECT_NEAR(ys[i], expected, 1e-5 * (1.0 + std::fabs(expected))) << "n=" << n << " i=" << i;
        }
        EXPECT_EQ(ys[static_cast<size_t>(n)], 12345.0f) << "wrote past n=" << n;
      }
    }
  }
}

TEST_P(VectorMathTest, SoftmaxRowMatchesDoubleReferenceAndSkipsNanInTheMax) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-30.0f, 30.0f);
  for (int64_t n : {1, 5, 15, 16, 17, 31, 197, 1000}) {
    std::vector<float> xs(static_cast<size_t>(n));
    for (float& x : xs) x = dist(rng);
    xs[static_cast<size_t>(n / 2)] = 40.0f;  // the max sits in a vector body or in the tail, depending on n
    std::vector<float> ys(xs.size());
    vector_softmax_row(xs.data(), ys.data(), n);
    // The reference takes the same float differences x - max; only exp, the sum and the division are exact.
    double sum = 0;
    for (float x : xs) sum += std::exp(static_cast<double>(x - 40.0f));
    for (int64_t i = 0; i < n; ++i) {
      const double expected = std::exp(static_cast<double>(xs[i] - 40.0f)) / sum;
      EXPECT_NEAR(ys[i], expected, 1e-6 * expected + 1e-30) << "n=" << n << " i=" << i;
    }
    vector_softmax_row(xs.data(), xs.data(), n);  // in place
    EXPECT_EQ(xs, ys) << "n=" << n;
  }
  std::vector<float> with_nan = {1.0f, std::nanf(""), 2.0f, 0.5f, 3.0f, -1.0f, 0.0f, 2.5f,
                                 1.0f, 1.0f,          1.0f, 1.0f, 1.0f, 1.0f,  1.0f, 1.0f, 7.0f};
  std::vector<float> out(with_nan.size());
  vector_softmax_row(with_nan.data(), out.data(), static_cast<int64_t>(with_nan.size()));
  for (float y : out) EXPECT_TRUE(std::isnan(y));
}

TEST_P(VectorMathTest, WeightedRowsMatchDoubleSumsAndSkipZeroWeightsOnlyWhenAsked) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t n : {1, 7, 16, 33, 64, 80, 128, 131}) {
    const int64_t rows = 37, ldv = n + 3;
    std::vector<float> p(static_cast<size_t>(rows)), v(static_cast<size_t>(rows * ldv));
    for (float& x : p) x = dist(rng);
    for (float& x : v) x = dist(rng);
    for (int64_t j = 0; j < rows; j += 5) {  // zero weights over rows of NaN
      p[static_cast<size_t>(j)] = 0.0f;
      std::fill_n(v.begin() + j * ldv, n, std::nanf(""));
    }
    std::vector<float> out(static_cast<size_t>(n) + 1, 12345.0f);
    vector_weighted_rows(p.data(), v.data(), rows, ldv, n, out.data(), /*skip_zero_weights=*/true);
    for (int64_t e = 0; e < n; ++e) {
      double expected = 0.0, magnitude = 0.0;
      for (int64_t j = 0; j < rows; ++j) {
        if (p[static_cast<size_t>(j)] == 0.0f) continue;
        const double term = double{p[static_cast<size_t>(j)]} * v[static_cast<size_t>(j * ldv + e)];
        expected += term;
        magnitude += std::fabs(term);
      }
      EXPECT_NEAR(out[static_cast<size_t>(e)], expected, 1e-6 * magnitude + 1e-7) << "n=" << n << " e=" << e;
    }
    EXPECT_EQ(out[static_cast<size_t>(n)], 12345.0f) << "wrote past n=" << n;
    // Without the skip every row is multiplied: 0 * NaN reaches every column.
    vector_weighted_rows(p.data(), v.data(), rows, ldv, n, out.data(), /*skip_zero_weights=*/false);
    for (int64_t e = 0; e < n; ++e) EXPECT_TRUE(std::isnan(out[static_cast<size_t>(e)])) << "n=" << n << " e=" << e;
    EXPECT_EQ(out[static_cast<size_t>(n)], 12345.0f) << "wrote past n=" << n;
  }
}

TEST_P(VectorMathTest, SquaredDistancesMatchDoubleDifferencesAcrossTiles) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  for (int64_t count : {1, 7, 511, 512, 513, 1100}) {
    for (int64_t features : {1, 3, 20}) {
      const int64_t ld = count + 5;
      std::vector<float> x(static_cast<size_t>(features)), vt(static_cast<size_t>(features * ld));
      for (float& v : x) v = dist(rng);
      for (float& v : vt) v = dist(rng);
      vt[0] = x[0] + 1e-7f;  // nearby vectors keep their small distance (no cancellation)
      std::vector<double> out(static_cast<size_t>(count) + 1, 12345.0);
      vector_squared_distances(x.data(), vt.data(), features, count, ld, out.data());
      for (int64_t j = 0; j < count; ++j) {
        double expected = 0.0;
        for (int64_t f = 0; f < features; ++f) {
          const double d = static_cast<double>(x[static_cast<size_t>(f)]) - vt[static_cast<size_t>(f * ld + j)];
          expected += d * d;
        }
        EXPECT_NEAR(out[static_cast<size_t>(j)], expected, 1e-14 * expected) << "count=" << count << " j=" << j;
      }
      EXPECT_EQ(out[static_cast<size_t>(count)], 12345.0) << "wrote past count=" << count;
    }
  }
}

// Integers behind cancelling pairs of large values (a plain float sum loses them): the compensated pair adds up
// to their sum exactly, for every length around the vector widths, as a row and as columns of strided rows.
template <class F>
void expect_compensated_sums_exact(int big_exponent) {
  std::mt19937 rng(23);
  for (int64_t triples : {0, 1, 2, 3, 5, 11, 21, 43, 700}) {
    const int64_t n = 3 * triples;
    std::vector<F> x(static_cast<size_t>(n));
    F expected = 0;
    for (int64_t i = 0; i < n; i += 3) {
      const F big = std::ldexp(static_cast<F>(1 + rng() % 7), big_exponent);
      x[static_cast<size_t>(i)] = big;
      x[static_cast<size_t>(i + 1)] = static_cast<F>(1 + rng() % 9);
      x[static_cast<size_t>(i + 2)] = -big;
      expected += x[static_cast<size_t>(i + 1)];
    }
    std::shuffle(x.begin(), x.end(), rng);
    F sum = -1, lost = -1;
    vector_compensated_sum(x.data(), n, &sum, &lost);
    EXPECT_EQ(sum + lost, expected) << "row of n=" << n;
    // The same values as one column of n rows (stride 5; columns 1..4 hold copies), 5 columns summed at once.
    std::vector<F> strided(static_cast<size_t>(5 * n));
    std::vector<int64_t> offsets(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < 5; ++c) strided[static_cast<size_t>(5 * r + c)] = x[static_cast<size_t>(r)];
      offsets[static_cast<size_t>(r)] = 5 * r;
    }
    std::vector<F> sums(6, -1), losts(6, -1);
    vector_compensated_column_sums(strided.data(), offsets.data(), n, 5, sums.data(), losts.data());
    for (int c = 0; c < 5; ++c) EXPECT_EQ(sums[c] + losts[c], expected) << "column " << c << " of n=" << n;
    EXPECT_EQ(sums[5], -1) << "wrote past the columns";
  }
}

TEST_P(VectorMathTest, CompensatedSumsKeepTermsThatCancellingPairsHide) {
  expect_compensated_sums_exact<float>(90);
  expect_compensated_sums_exact<double>(600);
}

INSTANTIATE_TEST_SUITE_P(Isa, VectorMathTest, ::testing::Values("generic", "avx2", "avx512"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

TEST(VectorMath, UnknownIsaIsRefused) {
  EXPECT_FALSE(vector_math_force_isa("sse9"));
  EXPECT_TRUE(vector_math_force_isa(""));
}

}  // namespace
}  // namespace nxrt::cpu
