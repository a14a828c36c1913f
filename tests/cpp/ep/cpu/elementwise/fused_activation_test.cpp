// apply_activation on float (vectorised for Sigmoid, Tanh and the Gelu forms) against the double version,
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
  const char* names[] = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "HardSigmoid", "Gelu", "GeluTanh"};
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
  for (const char* name : {"Sigmoid", "Tanh", "Gelu", "GeluTanh"}) {
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

}  // namespace
}  // namespace nxrt::cpu
