// The plain-layout depthwise convolution (conv_direct.h: conv_depthwise_f32, AVX-512 or AVX2 micro-kernel, whichever
// the tier runs; ctest runs this file at each tier through NXRT_CPU_ISA) against a naive double reference and the
// generic grouped im2col + GEMM path: strides 1/2, square and oblong kernels, asymmetric pads, widths around the
// vector lengths, with and without bias / Z (separate and in place) / activation, on 1 and 2 threads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ep/cpu/conv/conv_direct.h"
#include "ep/cpu/conv/conv_test_util.h"
#include "ep/cpu/kernel_test_util.h"
#include "ep/cpu/microkernels/cpu_features.h"

namespace nxrt::cpu::testing {
namespace {

struct DepthwiseCase {
  int64_t batch, channels, in_h, in_w, kernel_h, kernel_w, stride_h, stride_w;
  std::vector<int64_t> pads;  // top, left, bottom, right
};

const DepthwiseCase kCases[] = {
    {1, 3, 12, 80, 5, 5, 1, 1, {2, 2, 2, 2}},    // PP-OCR style 5x5, width 5 vectors of 16
    {2, 5, 9, 17, 3, 3, 1, 1, {1, 1, 1, 1}},     // batch 2, width 16 + 1
    {1, 4, 14, 33, 3, 3, 2, 2, {1, 1, 1, 1}},    // stride 2
    {1, 2, 20, 40, 7, 7, 2, 2, {3, 3, 3, 3}},    // 7x7 stride 2
    {1, 17, 6, 50, 3, 5, 1, 2, {0, 2, 1, 1}},    // oblong kernel, mixed strides, asymmetric pads
    {1, 1, 3, 16, 3, 3, 1, 1, {2, 1, 2, 1}},     // pads larger than the input rows
    {1, 6, 40, 70, 3, 3, 1, 1, {0, 0, 0, 0}},    // no pads, several whole vector groups per row
};

conv::Geometry geometry_of(const DepthwiseCase& c) {
  conv::WindowAttrs attrs;
  attrs.strides = {c.stride_h, c.stride_w};
  attrs.pads = c.pads;
  auto g = conv::resolve_geometry(attrs, std::vector<int64_t>{c.in_h, c.in_w},
                                  std::vector<int64_t>{c.kernel_h, c.kernel_w}, "test");
  EXPECT_TRUE(g.has_value());
  return *g;
}

// Naive y = depthwise conv(x, w) + bias in double, before Z and the activation.
std::vector<double> reference(const DepthwiseCase& c, const conv::Geometry& g, const std::vector<float>& x,
                              const std::vector<float>& w, const float* bias) {
  std::vector<double> y;
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t m = 0; m < c.channels; ++m) {
      const float* plane = x.data() + (n * c.channels + m) * c.in_h * c.in_w;
      for (int64_t oh = 0; oh < g.out[0]; ++oh) {
        for (int64_t ow = 0; ow < g.out[1]; ++ow) {
          double sum = bias != nullptr ? bias[m] : 0.0;
          for (int64_t kh = 0; kh < c.kernel_h; ++kh) {
            const int64_t ih = oh * c.stride_h - c.pads[0] + kh;
            for (int64_t kw = 0; kw < c.kernel_w; ++kw) {
              const int64_t iw = ow * c.stride_w - c.pads[1] + kw;
              if (ih < 0 || ih >= c.in_h || iw < 0 || iw >= c.in_w) continue;
              sum += static_cast<double>(plane[ih * c.in_w + iw]) * w[(m * c.kernel_h + kh) * c.kernel_w + kw];
            }
          }
          y.push_back(sum);
        }
      }
    }
  }
  return y;
}

const Variant kVariants[] = {
    {false, ZMode::kNone, {}},
    {true, ZMode::kNone, {ActivationKind::kRelu, 0, 0}},
    {true, ZMode::kSeparate, {ActivationKind::kClip, -0.3f, 0.4f}},
    {true, ZMode::kInPlace, {}},
    {false, ZMode::kSeparate, {ActivationKind::kSigmoid, 0, 0}},  // not in registers: applied after the stores
};

class DepthwiseConv : public ::testing::TestWithParam<int> {};

TEST_P(DepthwiseConv, MatchesReferenceAndGroupedGenericPath) {
  if (!cpu_isa_at_least(CpuIsa::kAvx2)) GTEST_SKIP() << "below the avx2 tier: the depthwise kernel cannot run here";
  ThreadPool pool(GetParam());
  uint32_t seed = 1;
  for (const DepthwiseCase& c : kCases) {
    const conv::Geometry g = geometry_of(c);
    ASSERT_TRUE(conv::depthwise_conv_applies(c.channels, g, c.channels, c.channels)) << "in_w " << c.in_w;
    const auto x = random_floats(static_cast<size_t>(c.batch * c.channels * c.in_h * c.in_w), seed++);
    const auto w = random_floats(static_cast<size_t>(c.channels * c.kernel_h * c.kernel_w), seed++);
    const auto b = random_floats(static_cast<size_t>(c.channels), seed++);
    const size_t y_size = static_cast<size_t>(c.batch * c.channels * g.out_size());
    for (const Variant& v : kVariants) {
      const float* bias = v.bias ? b.data() : nullptr;
      const auto plain = reference(c, g, x, w, bias);
      const auto z = random_floats(y_size, seed++);
      std::vector<float> depthwise(y_size, 1e30f);
      std::vector<float> generic(y_size, 1e30f);
      if (v.z == ZMode::kInPlace) depthwise = generic = z;
      const auto z_for = [&](std::vector<float>& out) {
        return v.z == ZMode::kSeparate ? z.data() : v.z == ZMode::kInPlace ? out.data() : nullptr;
      };
      conv::conv_depthwise_f32(x.data(), w.data(), depthwise.data(), c.batch, c.channels, g, pool,
                               conv::ConvEpilogue<float>{bias, z_for(depthwise), v.activation});
      conv::conv_forward<float>(x.data(), w.data(), generic.data(), c.batch, c.channels, c.channels, c.channels, g,
                                pool, conv::ConvEpilogue<float>{bias, z_for(generic), v.activation});
      for (size_t i = 0; i < y_size; ++i) {
        const double expected = activate(v.activation, plain[i] + (v.z != ZMode::kNone ? z[i] : 0.0));
        ASSERT_NEAR(depthwise[i], expected, 1e-4) << "index " << i << " in_w " << c.in_w;
        ASSERT_NEAR(depthwise[i], generic[i], 1e-4) << "index " << i << " in_w " << c.in_w;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, DepthwiseConv, ::testing::Values(1, 2));

TEST(DepthwiseConv, AppliesOnlyToWideDepthwise2DConvolutions) {
  const conv::Geometry wide = geometry_of({1, 8, 12, 80, 5, 5, 1, 1, {2, 2, 2, 2}});
  EXPECT_EQ(conv::depthwise_conv_applies(8, wide, 8, 8), cpu_isa_at_least(CpuIsa::kAvx2));
  EXPECT_FALSE(conv::depthwise_conv_applies(4, wide, 8, 8));   // grouped, not depthwise
  EXPECT_FALSE(conv::depthwise_conv_applies(8, wide, 8, 16));  // channel multiplier 2
  conv::Geometry dilated = wide;
  dilated.dilation = {2, 1};
  EXPECT_FALSE(conv::depthwise_conv_applies(8, dilated, 8, 8));
  EXPECT_FALSE(conv::depthwise_conv_applies(8, geometry_of({1, 8, 12, 10, 3, 3, 1, 1, {1, 1, 1, 1}}), 8, 8));  // narrow
}

}  // namespace
}  // namespace nxrt::cpu::testing
