#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> random_doubles(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

double softplus(double x) { return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct ActivationCase {
  const char* name;
  std::function<NodeBuilder()> node;
  std::function<double(double)> reference;
};

std::vector<ActivationCase> activation_cases() {
  return {
      {"LeakyRelu", [] { return NodeBuilder("LeakyRelu", 16).attr_float("alpha", 0.1f); },
       [](double x) { return x < 0 ? double{0.1f} * x : x; }},
      {"LeakyReluDefault", [] { return NodeBuilder("LeakyRelu", 16); },
       [](double x) { return x < 0 ? double{0.01f} * x : x; }},
      {"Elu", [] { return NodeBuilder("Elu", 22).attr_float("alpha", 2.0f); },
       [](double x) { return x > 0 ? x : 2.0 * (std::exp(x) - 1); }},
      {"Selu", [] { return NodeBuilder("Selu", 22); },
       [](double x) {
         const double a = double{1.67326319217681884765625f}, g = double{1.05070102214813232421875f};
         return x > 0 ? g * x : g * a * (std::exp(x) - 1);
       }},
      {"Celu", [] { return NodeBuilder("Celu", 28).attr_float("alpha", 2.0f); },
       [](double x) { return std::max(0.0, x) + std::min(0.0, 2.0 * (std::exp(x / 2.0) - 1)); }},
      {"Gelu", [] { return NodeBuilder("Gelu", 20); },
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"GeluTanh", [] { return NodeBuilder("Gelu", 20).attr_string("approximate", "tanh"); },
       [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }},
      {"Mish", [] { return NodeBuilder("Mish", 22); }, [](double x) { return x * std::tanh(softplus(x)); }},
      {"Softplus", [] { return NodeBuilder("Softplus", 22); }, softplus},
      {"Softsign", [] { return NodeBuilder("Softsign", 22); }, [](double x) { return x / (1 + std::fabs(x)); }},
      {"HardSigmoid", [] { return NodeBuilder("HardSigmoid", 22).attr_float("alpha", 0.3f).attr_float("beta", 0.4f); },
       [](double x) { return std::clamp(double{0.3f} * x + double{0.4f}, 0.0, 1.0); }},
      {"HardSwish", [] { return NodeBuilder("HardSwish", 22); },
       [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }},
      {"ThresholdedRelu", [] { return NodeBuilder("ThresholdedRelu", 22).attr_float("alpha", 0.5f); },
       [](double x) { return x > 0.5 ? x : 0.0; }},
      {"Swish", [] { return NodeBuilder("Swish", 24).attr_float("alpha", 1.5f); },
       [](double x) { return x * sigmoid(1.5 * x); }},
      {"Shrink", [] { return NodeBuilder("Shrink", 9).attr_float("lambd", 1.5f).attr_float("bias", 0.25f); },
       [](double x) { return x < -1.5 ? x + 0.25 : (x > 1.5 ? x - 0.25 : 0.0); }},
      {"Clip", [] { return NodeBuilder("Clip", 6).attr_float("min", -1.0f).attr_float("max", 2.0f); },
       [](double x) { return std::clamp(x, -1.0, 2.0); }},
  };
}

class ActivationTest : public ::testing::TestWithParam<std::tuple<size_t, int>> {};

TEST_P(ActivationTest, MatchesReferenceInEveryFloatType) {
  const auto [index, threads] = GetParam();
  const ActivationCase c = activation_cases()[index];
  const size_t n = 40000;
  const auto xd = random_doubles(n, -8, 8, 11);
  const graph::Node node = c.node().node();

  auto got_d = to_vector<double>(run_one(node, {make_tensor<double>({8, 5000}, xd)}, threads));
  ASSERT_EQ(got_d.size(), n);
  for (size_t i = 0; i < n; ++i) {
    const double expected = c.reference(xd[i]);
    ASSERT_NEAR(got_d[i], expected, 1e-13 * std::max(1.0, std::fabs(expected))) << c.name << " f64 at " << xd[i];
  }

  std::vector<float> xf(xd.begin(), xd.end());
  auto got_f = to_vector<float>(run_one(node, {make_tensor<float>({n}, xf)}, threads));
  for (size_t i = 0; i < n; ++i) {
    const double expected = c.reference(xf[i]);
    ASSERT_NEAR(got_f[i], expected, 3e-6 * std::max(1.0, std::fabs(expected))) << c.name << " f32 at " << xf[i];
  }

  std::vector<float> small(xf.begin(), xf.begin() + 64);
  for (const bool bf16 : {false, true}) {
    if (bf16 && std::string(c.name) == "Clip") continue;  // Clip takes attributes only before bfloat16 came in
    Tensor input = bf16 ? make_half_tensor<BFloat16>({64}, small) : make_half_tensor<Float16>({64}, small);
    const auto in = to_float_vector(input);
    const auto got = to_float_vector(run_one(node, {input}, threads));
    const double tolerance = bf16 ? 1e-2 : 2e-3;
    for (size_t i = 0; i < in.size(); ++i) {
      const double expected = c.reference(in[i]);
      ASSERT_NEAR(got[i], expected, tolerance * std::max(1.0, std::fabs(expected))) << c.name << " half at " << in[i];
    }
  }

  auto nan = to_vector<float>(run_one(node, {make_tensor<float>({1}, {kNaNf})}, threads));
  if (std::string(c.name) == "ThresholdedRelu" || std::string(c.name) == "Shrink") {
    EXPECT_EQ(nan[0], 0.0f) << c.name << ": NaN takes the zero branch, as in the ONNX reference";
  } else {
    EXPECT_TRUE(std::isnan(nan[0])) << c.name << " must propagate NaN";
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, ActivationTest,
                         ::testing::Combine(::testing::Range<size_t>(0, 16), ::testing::Values(1, 3)),
                         [](const auto& info) {
                           return std::string(activation_cases()[std::get<0>(info.param)].name) + "_t" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(ActivationTest, ExtremeInputsStayFinite) {
  const std::vector<double> x = {-1000, -50, 50, 1000, kInf, -kInf};
  auto softplus_y = to_vector<double>(run_one(NodeBuilder("Softplus", 1).node(), {make_tensor<double>({6}, x)}));
  EXPECT_EQ(softplus_y[0], 0.0);
  EXPECT_EQ(softplus_y[3], 1000.0);
  EXPECT_EQ(softplus_y[4], kInf);
  EXPECT_EQ(softplus_y[5], 0.0);
  auto mish_y = to_vector<double>(run_one(NodeBuilder("Mish", 18).node(), {make_tensor<double>({6}, x)}));
  EXPECT_EQ(mish_y[3], 1000.0);
  EXPECT_NEAR(mish_y[0], 0.0, 1e-300);
  auto swish_y = to_vector<float>(run_one(NodeBuilder("Swish", 24).node(), {make_tensor<float>({2}, {-200.0f, 200.0f})}));
  EXPECT_EQ(swish_y[1], 200.0f);
  EXPECT_NEAR(swish_y[0], 0.0f, 1e-30f);
}

TEST(ActivationTest, SeluOpset1UsesItsOwnDefaults) {
  auto y1 = to_vector<double>(run_one(NodeBuilder("Selu", 1).node(), {make_tensor<double>({1}, {-1.0})}));
  EXPECT_NEAR(y1[0], double{1.0507f} * double{1.6732f} * std::expm1(-1.0), 1e-12);
  auto y6 = to_vector<double>(run_one(NodeBuilder("Selu", 6).node(), {make_tensor<double>({1}, {-1.0})}));
  EXPECT_NE(y1[0], y6[0]);
}

TEST(ActivationTest, InvalidAttributesFailAtCreate) {
  auto gelu = run_kernel(NodeBuilder("Gelu", 20).name("g").attr_string("approximate", "fast").node(),
                         {make_tensor<float>({1}, {1})});
  ASSERT_FALSE(gelu.has_value());
  EXPECT_NE(gelu.status().to_string().find("fast"), std::string::npos);
  EXPECT_FALSE(run_kernel(NodeBuilder("Celu", 12).attr_float("alpha", 0.0f).node(), {make_tensor<float>({1}, {1})})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Celu", 12).node(), {make_tensor<double>({1}, {1})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Swish", 23).node(), {make_tensor<float>({1}, {1})}).has_value());
}

TEST(ActivationTest, ShrinkOnIntegersSaturates) {
  auto y = to_vector<int8_t>(run_one(NodeBuilder("Shrink", 9).attr_float("lambd", 1.0f).attr_float("bias", -200.0f).node(),
                                     {make_tensor<int8_t>({4}, {-128, -1, 0, 127})}));
  EXPECT_EQ(y, (std::vector<int8_t>{-128, 0, 0, 127}));
  auto u = to_vector<uint8_t>(run_one(NodeBuilder("Shrink", 9).attr_float("lambd", 1.0f).attr_float("bias", 5.0f).node(),
                                      {make_tensor<uint8_t>({3}, {0, 3, 255})}));
  EXPECT_EQ(u, (std::vector<uint8_t>{0, 0, 250}));
  auto big = to_vector<int64_t>(run_one(NodeBuilder("Shrink", 9).attr_float("bias", -1e30f).node(),
                                        {make_tensor<int64_t>({1}, {5})}));
  EXPECT_EQ(big[0], std::numeric_limits<int64_t>::max());
}

// ---- PRelu ----

TEST(PReluTest, SlopeBroadcastsUnidirectionally) {
  const Shape x_shape = {2, 3, 4};
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 2 ? -1.0f : 1.0f) * static_cast<float>(i);
  struct SlopeCase {
    Shape shape;
    std::function<size_t(size_t n, size_t c, size_t w)> index;
  };
  const SlopeCase cases[] = {
      {{1}, [](size_t, size_t, size_t) { return size_t{0}; }},
      {{}, [](size_t, size_t, size_t) { return size_t{0}; }},
      {{4}, [](size_t, size_t, size_t w) { return w; }},
      {{3, 1}, [](size_t, size_t c, size_t) { return c; }},
      {{2, 1, 1}, [](size_t n, size_t, size_t) { return n; }},
      {{2, 1, 4}, [](size_t n, size_t, size_t w) { return n * 4 + w; }},
      {{2, 3, 4}, [](size_t n, size_t c, size_t w) { return (n * 3 + c) * 4 + w; }},
  };
  for (const auto& c : cases) {
    std::vector<float> slope(static_cast<size_t>(shape_numel(c.shape)));
    for (size_t i = 0; i < slope.size(); ++i) slope[i] = 0.5f + static_cast<float>(i);
    for (int threads : {1, 3}) {
      auto y = to_vector<float>(run_one(NodeBuilder("PRelu", 16).node(),
                                        {make_tensor<float>(x_shape, x), make_tensor<float>(c.shape, slope)}, threads));
      for (size_t n = 0; n < 2; ++n) {
        for (size_t ch = 0; ch < 3; ++ch) {
          for (size_t w = 0; w < 4; ++w) {
            const size_t i = (n * 3 + ch) * 4 + w;
            const float expected = x[i] < 0 ? x[i] * slope[c.index(n, ch, w)] : x[i];
            ASSERT_EQ(y[i], expected) << shape_to_string(c.shape) << " at " << i;
          }
        }
      }
    }
  }
}

TEST(PReluTest, LargePerChannelSlopeWithThreads) {
  const int64_t n = 2, c = 16, hw = 4096;
  const auto xd = random_doubles(static_cast<size_t>(n * c * hw), -1, 1, 3);
  const auto sd = random_doubles(static_cast<size_t>(c), 0, 1, 4);
  auto y = to_vector<double>(
      run_one(NodeBuilder("PRelu", 9).node(), {make_tensor<double>({n, c, hw}, xd), make_tensor<double>({c, 1}, sd)}, 3));
  for (size_t i = 0; i < xd.size(); ++i) {
    const double s = sd[(i / hw) % c];
    ASSERT_EQ(y[i], xd[i] < 0 ? xd[i] * s : xd[i]) << i;
  }
}

TEST(PReluTest, IntegersWrapAndUnsignedPassesThrough) {
  const int32_t min32 = std::numeric_limits<int32_t>::min();
  auto y = to_vector<int32_t>(run_one(NodeBuilder("PRelu", 9).node(),
                                      {make_tensor<int32_t>({3}, {min32, -3, 4}), make_tensor<int32_t>({1}, {2})}));
  EXPECT_EQ(y, (std::vector<int32_t>{0, -6, 4}));
  auto u = to_vector<uint64_t>(run_one(NodeBuilder("PRelu", 16).node(),
                                       {make_tensor<uint64_t>({2}, {0, 9}), make_tensor<uint64_t>({1}, {7})}));
  EXPECT_EQ(u, (std::vector<uint64_t>{0, 9}));
  EXPECT_FALSE(run_kernel(NodeBuilder("PRelu", 8).node(), {make_tensor<int32_t>({1}, {1}), make_tensor<int32_t>({1}, {1})})
                   .has_value());
}

TEST(PReluTest, RejectsSlopesThatDoNotBroadcastToX) {
  auto wrong = run_kernel(NodeBuilder("PRelu", 16).name("p").node(),
                          {make_tensor<float>({2, 3}, std::vector<float>(6)), make_tensor<float>({2}, {1, 1})});
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.status().to_string().find("'p'"), std::string::npos) << wrong.status().to_string();
  EXPECT_FALSE(run_kernel(NodeBuilder("PRelu", 16).node(),
                          {make_tensor<float>({3}, std::vector<float>(3)), make_tensor<float>({2, 3}, std::vector<float>(6))})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("PRelu", 16).node(), {make_tensor<float>({1}, {1}), make_tensor<double>({1}, {1})})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("PRelu", 16).node(), {make_tensor<float>({1}, {1})}).has_value());
  Tensor empty = run_one(NodeBuilder("PRelu", 16).node(), {make_tensor<float>({0, 3}, {}), make_tensor<float>({3}, {1, 2, 3})});
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
}

// ---- Clip ----

TEST(ClipTest, BoundsFromInputsFromOpset11) {
  const std::vector<float> x = {-3, -1, 0, 1, 3, kNaNf};
  auto clip = [&](Tensor lo, Tensor hi) {
    return to_vector<float>(run_one(NodeBuilder("Clip", 13).node(), {make_tensor<float>({6}, x), lo, hi}));
  };
  auto both = clip(make_tensor<float>({}, {-2}), make_tensor<float>({}, {2}));
  EXPECT_EQ(std::vector<float>(both.begin(), both.end() - 1), (std::vector<float>{-2, -1, 0, 1, 2}));
  EXPECT_TRUE(std::isnan(both[5]));
  auto only_max = clip(Tensor(), make_tensor<float>({1}, {0.5f}));
  EXPECT_EQ(std::vector<float>(only_max.begin(), only_max.end() - 1), (std::vector<float>{-3, -1, 0, 0.5f, 0.5f}));
  auto only_min = clip(make_tensor<float>({}, {0}), Tensor());
  EXPECT_EQ(std::vector<float>(only_min.begin(), only_min.end() - 1), (std::vector<float>{0, 0, 0, 1, 3}));
  auto crossed = clip(make_tensor<float>({}, {2}), make_tensor<float>({}, {1}));
  EXPECT_EQ(std::vector<float>(crossed.begin(), crossed.end() - 1), (std::vector<float>(5, 1.0f)));
  auto none = to_vector<float>(run_one(NodeBuilder("Clip", 11).node(), {make_tensor<float>({6}, x)}));
  EXPECT_EQ(std::vector<float>(none.begin(), none.end() - 1), (std::vector<float>{-3, -1, 0, 1, 3}));
}

TEST(ClipTest, AttributesBeforeOpset11) {
  auto y = to_vector<double>(run_one(NodeBuilder("Clip", 6).attr_float("min", -1.0f).node(),
                                     {make_tensor<double>({3}, {-5, 1e300, 0.5})}));
  EXPECT_EQ(y, (std::vector<double>{-1, double{std::numeric_limits<float>::max()}, 0.5}));
  auto y1 = to_vector<double>(run_one(NodeBuilder("Clip", 1).attr_float("max", 1.0f).node(),
                                      {make_tensor<double>({2}, {-1e300, 5})}));
  EXPECT_EQ(y1, (std::vector<double>{-1e300, 1}));
}

TEST(ClipTest, IntegerTypesFromOpset12) {
  auto y = to_vector<int8_t>(run_one(NodeBuilder("Clip", 12).node(),
                                     {make_tensor<int8_t>({4}, {-128, -5, 5, 127}), Tensor(), make_tensor<int8_t>({}, {4})}));
  EXPECT_EQ(y, (std::vector<int8_t>{-128, -5, 4, 4}));
  auto u = to_vector<uint64_t>(run_one(NodeBuilder("Clip", 13).node(),
                                       {make_tensor<uint64_t>({2}, {1, ~uint64_t{0}}), make_tensor<uint64_t>({}, {2})}));
  EXPECT_EQ(u, (std::vector<uint64_t>{2, ~uint64_t{0}}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Clip", 11).node(), {make_tensor<int32_t>({1}, {1})}).has_value());
  auto bf = to_float_vector(run_one(NodeBuilder("Clip", 13).node(),
                                    {make_half_tensor<BFloat16>({2}, {-4, 4}), make_half_tensor<BFloat16>({}, {-1})}));
  EXPECT_EQ(bf, (std::vector<float>{-1, 4}));
}

TEST(ClipTest, LargeInputWithThreads) {
  const auto xd = random_doubles(50000, -3, 3, 5);
  std::vector<float> xf(xd.begin(), xd.end());
  auto y = to_vector<float>(run_one(NodeBuilder("Clip", 13).node(),
                                    {make_tensor<float>({50000}, xf), make_tensor<float>({}, {-1}), make_tensor<float>({}, {1})},
                                    3));
  for (size_t i = 0; i < xf.size(); ++i) ASSERT_EQ(y[i], std::clamp(xf[i], -1.0f, 1.0f));
}

TEST(ClipTest, RejectsNonScalarOrMistypedBounds) {
  auto wide = run_kernel(NodeBuilder("Clip", 13).name("c").node(),
                         {make_tensor<float>({2}, {1, 2}), make_tensor<float>({2}, {0, 0})});
  ASSERT_FALSE(wide.has_value());
  EXPECT_NE(wide.status().to_string().find("min"), std::string::npos) << wide.status().to_string();
  EXPECT_FALSE(run_kernel(NodeBuilder("Clip", 13).node(),
                          {make_tensor<float>({2}, {1, 2}), Tensor(), make_tensor<double>({}, {0})})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Clip", 13).node(),
                          {make_tensor<float>({2}, {1, 2}), make_tensor<float>({0}, {})})
                   .has_value());
  Tensor empty = run_one(NodeBuilder("Clip", 13).node(), {make_tensor<float>({3, 0}, {}), make_tensor<float>({}, {0})});
  EXPECT_EQ(empty.shape(), (Shape{3, 0}));
}

}  // namespace
}  // namespace nxrt::cpu::testing
