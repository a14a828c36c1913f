// apply_activation on float (vectorised for Sigmoid, Tanh, Swish and the Gelu forms) against the double version,
// over odd lengths, with NaN and infinities where the activation defines them.
#include "ep/cpu/elementwise/fused_activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace nxrt::cpu {
namespace {

TEST(FusedActivation, FloatMatchesDoubleForEveryKind) {
  const char* names[] = {"Relu",        "Sigmoid", "Tanh",     "LeakyRelu", "Clip",
                         "HardSigmoid", "Gelu",    "GeluTanh", "Swish",     "HardSwish"};
  const float params[] = {-1.5f, 2.5f};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-9.0f, 9.0f);
  for (const char* name : names) {
    auto act = parse_fused_activation(name, params, "test");
    ASSERT_TRUE(act) << name;
    for (int64_t n : {0, 1, 15, 16, 17, 67, 1000}) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = dist(rng);
      std::vector<double> reference(x.begin(), x.end());
      apply_activation(*act, x.data(), n);
      apply_activation(*act, reference.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_NEAR(x[i], reference[i], 3e-7 * std::max(1.0, std::fabs(reference[i]))) << name << " n=" << n;
      }
    }
  }
}

TEST(FusedActivation, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const char* name : {"Sigmoid", "Tanh", "Gelu", "GeluTanh", "Swish", "HardSwish"}) {
    auto act = parse_fused_activation(name, {}, "test");
    ASSERT_TRUE(act) << name;
    std::vector<float> x = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 0.0f};
    std::vector<double> reference(x.begin(), x.end());
    apply_activation(*act, x.data(), 4);
    apply_activation(*act, reference.data(), 4);
    EXPECT_TRUE(std::isnan(x[0])) << name;
    for (int i = 1; i < 4; ++i) {
      if (std::isnan(reference[i])) {
        EXPECT_TRUE(std::isnan(x[i])) << name << " at " << i;
      } else {
        EXPECT_EQ(x[i], static_cast<float>(reference[i])) << name << " at " << i;
      }
    }
  }
}

TEST(FusedActivation, SwishAndHardSwishValues) {
  auto silu = parse_fused_activation("Swish", {}, "test");
  const float half[] = {0.5f};
  auto swish = parse_fused_activation("Swish", half, "test");
  auto hard_swish = parse_fused_activation("HardSwish", {}, "test");
  ASSERT_TRUE(silu && swish && hard_swish);
  EXPECT_EQ(silu->alpha, 1.0f);
  std::vector<float> x = {2.0f, -1.0f, 4.0f, -3.0f, 3.0f, 1.5f};
  std::vector<float> y = x;
  apply_activation(*silu, y.data(), 2);
  EXPECT_NEAR(y[0], 2.0 / (1.0 + std::exp(-2.0)), 1e-6);
  EXPECT_NEAR(y[1], -1.0 / (1.0 + std::exp(1.0)), 1e-6);
  y = x;
  apply_activation(*swish, y.data(), 1);
  EXPECT_NEAR(y[0], 2.0 / (1.0 + std::exp(-1.0)), 1e-6);
  y = x;
  apply_activation(*hard_swish, y.data(), 6);
  const std::vector<float> expected = {2.0f * (2.0f / 6 + 0.5f), -1.0f * (-1.0f / 6 + 0.5f), 4.0f, 0.0f, 3.0f,
                                       1.5f * (1.5f / 6 + 0.5f)};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_FLOAT_EQ(y[i], expected[i]) << i;
}

}  // namespace
}  // namespace nxrt::cpu
