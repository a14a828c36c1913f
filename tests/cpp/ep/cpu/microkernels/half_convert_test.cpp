// The F16C float16 <-> float32 array conversions (half_convert.h) against the scalar Float16 conversion: every
// float16 bit pattern widened, and floats across the float16 range (subnormals, ties, overflow) narrowed, at every
// array length around the 8-lane vector; NaN stays NaN.
#include "ep/cpu/microkernels/half_convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "core/half.h"
#include "ep/cpu/microkernels/cpu_features.h"

namespace nxrt::cpu {
namespace {

TEST(HalfConvert, F16CMatchesScalarFloat16) {
  if (!cpu_isa_at_least(CpuIsa::kAvx2)) GTEST_SKIP() << "F16C is part of the avx2 tier, above this CPU's";
  std::vector<uint16_t> halves(65536);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> widened(halves.size());
  f16_to_f32__avx2(halves.data(), widened.data(), static_cast<int64_t>(halves.size()));
  for (size_t i = 0; i < halves.size(); ++i) {
    const float expected = Float16::to_float(halves[i]);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(widened[i])) << "bits " << i;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(widened[i]), std::bit_cast<uint32_t>(expected)) << "bits " << i;
    }
  }
  std::vector<float> floats;
  std::mt19937 rng(3);
  for (int e = -30; e <= 17; ++e) {
    std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
    for (int i = 0; i < 400; ++i) floats.push_back(std::ldexp(mantissa(rng), e) * (i % 2 ? -1.0f : 1.0f));
  }
  for (uint32_t bits = 0; bits < 65536; bits += 7) {  // exact halves and the ties between neighbours
    const float exact = Float16::to_float(static_cast<uint16_t>(bits));
    floats.push_back(exact);
    floats.push_back(std::nextafter(exact, INFINITY));
    floats.push_back(0.5f * (exact + Float16::to_float(static_cast<uint16_t>(bits + 1))));
  }
  floats.insert(floats.end(), {65504.0f, 65519.0f, 65520.0f, 1e9f, -1e9f, INFINITY, -INFINITY, NAN, 0.0f, -0.0f});
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{8}, int64_t{9}, static_cast<int64_t>(floats.size())}) {
    std::vector<uint16_t> narrowed(static_cast<size_t>(n) + 1, 0xABCD);
    f32_to_f16__avx2(floats.data(), narrowed.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const float f = floats[static_cast<size_t>(i)];
      if (std::isnan(f)) {
        EXPECT_TRUE(std::isnan(Float16::to_float(narrowed[static_cast<size_t>(i)])));
      } else {
        EXPECT_EQ(narrowed[static_cast<size_t>(i)], Float16::from_float(f)) << "float " << f;
      }
    }
    EXPECT_EQ(narrowed[static_cast<size_t>(n)], 0xABCD) << "wrote past n = " << n;
  }
}

}  // namespace
}  // namespace nxrt::cpu
