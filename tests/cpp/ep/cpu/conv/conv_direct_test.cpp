// The direct convolution (AVX-512 and AVX2 micro-kernels, whichever the tier runs) against a naive double reference and the generic im2col + GEMM path, over the
// shape classes it claims (strides 1/2, kernels 1/3/5/7, asymmetric pads, out_channels off the 8-channel block,
// output widths off the 16-lane vector) with and without bias / Z / activation, on 1 and 2 threads; and the
// Winograd F(2x2, 3x3) path against the same reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "ep/cpu/conv/conv_direct.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/conv/conv_winograd.h"
#include "ep/cpu/conv/conv_test_util.h"
#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

// The direct and Winograd kernels run at the avx2 tier and above (ep/cpu/microkernels/cpu_features.h; ctest runs
// this file at each tier through NXRT_CPU_ISA, so both micro-kernel families are checked where the CPU has them).
bool cpu_runs_direct_kernels() { return cpu_isa_at_least(CpuIsa::kAvx2); }

struct DirectCase {
  int64_t batch, in_channels, out_channels, in_h, in_w, kernel_h, kernel_w, stride_h, stride_w;
  std::vector<int64_t> pads;  // top, left, bottom, right
};

conv::Geometry geometry_of(const DirectCase& c) {
  conv::WindowAttrs attrs;
  attrs.strides = {c.stride_h, c.stride_w};
  attrs.pads = c.pads;
  const std::vector<int64_t> in = {c.in_h, c.in_w};
  const std::vector<int64_t> kernel = {c.kernel_h, c.kernel_w};
  auto g = conv::resolve_geometry(attrs, in, kernel, "test");
  EXPECT_TRUE(g.has_value());
  return *g;
}

// Naive y = conv(x, w) + bias in double, before Z and the activation.
std::vector<double> reference(const DirectCase& c, const conv::Geometry& g, const std::vector<float>& x,
                              const std::vector<float>& w, const std::vector<float>& bias) {
  const int64_t oh_n = g.out[0], ow_n = g.out[1];
  std::vector<double> y(static_cast<size_t>(c.batch * c.out_channels * oh_n * ow_n));
  size_t i = 0;
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t m = 0; m < c.out_channels; ++m) {
      for (int64_t oh = 0; oh < oh_n; ++oh) {
        for (int64_t ow = 0; ow < ow_n; ++ow, ++i) {
          double sum = bias.empty() ? 0.0 : bias[static_cast<size_t>(m)];
          for (int64_t ci = 0; ci < c.in_channels; ++ci) {
            for (int64_t kh = 0; kh < c.kernel_h; ++kh) {
              const int64_t ih = oh * c.stride_h - c.pads[0] + kh;
              if (ih < 0 || ih >= c.in_h) continue;
              for (int64_t kw = 0; kw < c.kernel_w; ++kw) {
                const int64_t iw = ow * c.stride_w - c.pads[1] + kw;
                if (iw < 0 || iw >= c.in_w) continue;
                sum += static_cast<double>(x[static_cast<size_t>(((n * c.in_channels + ci) * c.in_h + ih) * c.in_w + iw)]) *
                       w[static_cast<size_t>(((m * c.in_channels + ci) * c.kernel_h + kh) * c.kernel_w + kw)];
              }
            }
          }
          y[i] = sum;
        }
      }
    }
  }
  return y;
}

const DirectCase kCases[] = {
    {1, 3, 32, 30, 36, 7, 7, 2, 2, {3, 3, 3, 3}},      // stem-like 7x7/2, out 15 x 18
    {1, 8, 8, 20, 16, 3, 3, 1, 1, {1, 1, 1, 1}},       // one full channel block, width = one vector
    {2, 5, 9, 11, 17, 3, 3, 1, 1, {1, 1, 1, 1}},       // out_channels = block + 1, width = vector + 1
    {1, 4, 7, 9, 33, 3, 3, 1, 1, {0, 2, 1, 0}},        // partial block, asymmetric pads, width 2 vectors + 1
    {1, 6, 17, 13, 31, 3, 3, 2, 2, {1, 1, 1, 1}},      // stride 2, out 7 x 16
    {1, 3, 10, 9, 40, 5, 5, 2, 2, {2, 2, 2, 2}},       // 5x5 stride 2, even left pad
    {1, 4, 12, 10, 40, 1, 1, 2, 2, {0, 0, 0, 0}},      // 1x1 stride 2 (projection shortcut)
    {1, 16, 24, 6, 20, 1, 1, 1, 1, {0, 0, 0, 0}},      // pointwise
    {1, 3, 5, 12, 45, 5, 3, 2, 1, {2, 0, 1, 2}},       // mixed kernel and strides per dim
    {1, 1, 1, 3, 16, 1, 1, 1, 1, {0, 0, 0, 0}},        // single channel in and out
    {1, 2, 3, 2, 18, 3, 3, 1, 1, {2, 1, 2, 1}},        // pads larger than the input rows
};

const Variant kVariants[] = {
    {false, ZMode::kNone, {}},
    {true, ZMode::kNone, {ActivationKind::kRelu, 0, 0}},
    {true, ZMode::kSeparate, {ActivationKind::kRelu, 0, 0}},
    {false, ZMode::kInPlace, {ActivationKind::kLeakyRelu, 0.2f, 0}},
    {true, ZMode::kNone, {ActivationKind::kClip, -0.3f, 0.4f}},
    {true, ZMode::kSeparate, {ActivationKind::kSigmoid, 0, 0}},  // not vectorised: apply_activation per row
};

class DirectConv : public ::testing::TestWithParam<int> {};

TEST_P(DirectConv, MatchesReferenceAndGenericPath) {
  if (!cpu_runs_direct_kernels()) GTEST_SKIP() << "below the avx2 tier: the direct kernel cannot run here";
  const int threads = GetParam();
  ThreadPool pool(threads);
  uint32_t seed = 1;
  for (const DirectCase& c : kCases) {
    const conv::Geometry g = geometry_of(c);
    // 1x1 kernels go to the GEMM path in the op (and at the avx2 tier so do some strided convolutions), but the
    // direct kernel must still get them right.
    if (c.kernel_h * c.kernel_w == 1) {
      ASSERT_FALSE(conv::direct_conv_applies(1, g, c.in_channels, c.out_channels)) << "case with in_w " << c.in_w;
    } else if (c.stride_h == 1 && c.stride_w == 1) {
      ASSERT_TRUE(conv::direct_conv_applies(1, g, c.in_channels, c.out_channels)) << "case with in_w " << c.in_w;
    }
    const auto x = random_floats(static_cast<size_t>(c.batch * c.in_channels * c.in_h * c.in_w), seed++);
    const auto w =
        random_floats(static_cast<size_t>(c.out_channels * c.in_channels * c.kernel_h * c.kernel_w), seed++);
    const auto b = random_floats(static_cast<size_t>(c.out_channels), seed++);
    const auto packed = conv::DirectConvWeights::pack(w.data(), c.out_channels, c.in_channels, c.kernel_h, c.kernel_w);
    const size_t y_size = static_cast<size_t>(c.batch * c.out_channels * g.out_size());
    for (const Variant& v : kVariants) {
      const auto plain = reference(c, g, x, w, v.bias ? b : std::vector<float>{});
      const auto z = random_floats(y_size, seed++);
      std::vector<float> direct(y_size, 1e30f);
      std::vector<float> generic(y_size, 1e30f);
      if (v.z == ZMode::kInPlace) {
        direct = z;
        generic = z;
      }
      const float* z_direct = v.z == ZMode::kSeparate ? z.data() : v.z == ZMode::kInPlace ? direct.data() : nullptr;
      const float* z_generic = v.z == ZMode::kSeparate ? z.data() : v.z == ZMode::kInPlace ? generic.data() : nullptr;
      const float* bias = v.bias ? b.data() : nullptr;
      conv::conv_direct_f32(x.data(), packed, direct.data(), c.batch, g, pool,
                            conv::ConvEpilogue<float>{bias, z_direct, v.activation});
      conv::conv_forward<float>(x.data(), w.data(), generic.data(), c.batch, c.in_channels, c.out_channels, 1, g,
                                pool, conv::ConvEpilogue<float>{bias, z_generic, v.activation});
      for (size_t i = 0; i < y_size; ++i) {
        const double expected = activate(v.activation, plain[i] + (v.z != ZMode::kNone ? z[i] : 0.0));
        ASSERT_NEAR(direct[i], expected, 1e-4) << "index " << i << " in_w " << c.in_w << " act "
                                               << static_cast<int>(v.activation.kind);
        ASSERT_NEAR(direct[i], generic[i], 1e-4) << "index " << i << " in_w " << c.in_w;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, DirectConv, ::testing::Values(1, 2));

// Images whose padded copy exceeds the 4 MiB scratch budget run in stripes of output rows; stripes must meet
// exactly, including where a stripe starts or ends in the padding.
TEST(DirectConv, LargeImagesRunInStripes) {
  if (!cpu_runs_direct_kernels()) GTEST_SKIP() << "below the avx2 tier: the direct kernel cannot run here";
  ThreadPool pool(2);
  for (const DirectCase& c : {DirectCase{1, 16, 9, 258, 260, 3, 3, 1, 1, {1, 1, 1, 1}},
                              DirectCase{1, 8, 5, 600, 420, 3, 3, 2, 2, {1, 0, 0, 1}}}) {
    const conv::Geometry g = geometry_of(c);
    const auto x = random_floats(static_cast<size_t>(c.in_channels * c.in_h * c.in_w), 70);
    const auto w = random_floats(static_cast<size_t>(c.out_channels * c.in_channels * 9), 71);
    const auto b = random_floats(static_cast<size_t>(c.out_channels), 72);
    const auto plain = reference(c, g, x, w, b);
    const auto z = random_floats(plain.size(), 73);
    const auto packed = conv::DirectConvWeights::pack(w.data(), c.out_channels, c.in_channels, 3, 3);
    std::vector<float> y(plain.size(), 1e30f);
    conv::conv_direct_f32(x.data(), packed, y.data(), 1, g, pool,
                          conv::ConvEpilogue<float>{b.data(), z.data(), {ActivationKind::kRelu, 0, 0}});
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], std::max(plain[i] + z[i], 0.0), 1e-4) << "at " << i;
  }
}

TEST(DirectConv, NaNsPropagateThroughReluAndClip) {
  if (!cpu_runs_direct_kernels()) GTEST_SKIP() << "below the avx2 tier: the direct kernel cannot run here";
  const DirectCase c{1, 1, 2, 1, 20, 1, 1, 1, 1, {0, 0, 0, 0}};
  const conv::Geometry g = geometry_of(c);
  std::vector<float> x(20, -1.0f);
  x[3] = std::nanf("");
  const std::vector<float> w = {1.0f, 2.0f};
  const auto packed = conv::DirectConvWeights::pack(w.data(), 2, 1, 1, 1);
  ThreadPool pool(1);
  for (const FusedActivation act : {FusedActivation{ActivationKind::kRelu, 0, 0},
                                    FusedActivation{ActivationKind::kClip, -0.5f, 0.5f}}) {
    std::vector<float> y(40);
    conv::conv_direct_f32(x.data(), packed, y.data(), 1, g, pool, conv::ConvEpilogue<float>{nullptr, nullptr, act});
    for (int64_t m = 0; m < 2; ++m) {
      EXPECT_TRUE(std::isnan(y[static_cast<size_t>(m * 20 + 3)]));
      EXPECT_EQ(y[static_cast<size_t>(m * 20)], act.kind == ActivationKind::kRelu ? 0.0f : -0.5f);
    }
  }
}

TEST(DirectConv, AppliesOnlyToPlainWide2DConvolutions) {
  const conv::Geometry wide = geometry_of({1, 4, 4, 8, 56, 3, 3, 1, 1, {1, 1, 1, 1}});
  EXPECT_EQ(conv::direct_conv_applies(1, wide, 4, 4), cpu_runs_direct_kernels());
  EXPECT_FALSE(conv::direct_conv_applies(2, wide, 4, 4));  // groups keep the generic path
  conv::Geometry dilated = wide;
  dilated.dilation = {1, 2};
  EXPECT_FALSE(conv::direct_conv_applies(1, dilated, 4, 4));
  EXPECT_FALSE(conv::direct_conv_applies(1, geometry_of({1, 4, 4, 7, 7, 3, 3, 1, 1, {1, 1, 1, 1}}), 4, 4));  // narrow
  EXPECT_FALSE(conv::direct_conv_applies(1, geometry_of({1, 4, 4, 8, 56, 1, 1, 1, 1, {0, 0, 0, 0}}), 4, 4));  // 1x1
  // Below AVX-512, strided convolutions with long patches and many outputs stay on im2col + GEMM.
  const conv::Geometry strided = geometry_of({1, 64, 64, 56, 56, 3, 3, 2, 2, {1, 1, 1, 1}});
  EXPECT_EQ(conv::direct_conv_applies(1, strided, 64, 64), cpu_isa_at_least(CpuIsa::kAvx512));
  EXPECT_EQ(conv::direct_conv_applies(1, strided, 3, 64), cpu_runs_direct_kernels());
}

// Through the Conv op (3x3, pads 1): W constant (packed at create) and W as a runtime input, on 1 and 2 threads,
// give the reference result.
void expect_conv_op_matches_reference(const DirectCase& c, uint32_t seed) {
  const conv::Geometry g = geometry_of(c);
  const auto x = random_floats(static_cast<size_t>(c.batch * c.in_channels * c.in_h * c.in_w), seed);
  const auto w = random_floats(static_cast<size_t>(c.out_channels * c.in_channels * 9), seed + 1);
  const auto b = random_floats(static_cast<size_t>(c.out_channels), seed + 2);
  const auto expected = reference(c, g, x, w, b);
  const std::vector<Tensor> inputs = {make_tensor<float>({c.batch, c.in_channels, c.in_h, c.in_w}, x),
                                      make_tensor<float>({c.out_channels, c.in_channels, 3, 3}, w),
                                      make_tensor<float>({c.out_channels}, b)};
  const graph::Node node = NodeBuilder("Conv", 22).attr_ints("pads", {1, 1, 1, 1}).node();
  for (const bool constant_w : {false, true}) {
    for (const int threads : {1, 2}) {
      auto outputs = run_kernel(node, inputs, threads, {false, constant_w, false});
      ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
      const auto got = to_vector<float>((*outputs)[0]);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[i], 1e-4) << "at " << i;
    }
  }
}

TEST(DirectConv, ConvOpWithConstantAndRuntimeWeights) {
  expect_conv_op_matches_reference({2, 5, 11, 14, 23, 3, 3, 1, 1, {1, 1, 1, 1}}, 90);
}

// Winograd F(2x2, 3x3) against the double reference: odd and even output sizes (half tiles at the bottom and
// right), pads 0-2 on each side, channel counts off the 8-channel block, batch 2, one and several blocks of tile
// rows, every epilogue variant (in-place Z included), 1 and 3 threads. Tolerance scales with the terms' size.
TEST(WinogradConv, MatchesReferenceOverShapesPadsAndEpilogues) {
  if (!cpu_runs_direct_kernels()) GTEST_SKIP() << "below the avx2 tier: the Winograd path cannot run here";
  const DirectCase cases[] = {
      {1, 16, 16, 8, 16, 3, 3, 1, 1, {1, 1, 1, 1}},      // smallest accepted: out 8 x 16
      {2, 17, 19, 9, 23, 3, 3, 1, 1, {1, 1, 1, 1}},      // odd out 9 x 23, channels off the block
      {1, 24, 40, 12, 31, 3, 3, 1, 1, {0, 0, 0, 0}},     // no pads: out 10 x 29
      {1, 16, 24, 11, 20, 3, 3, 1, 1, {2, 0, 1, 2}},     // asymmetric pads up to 2
      {1, 32, 32, 56, 56, 3, 3, 1, 1, {1, 1, 1, 1}},     // the CNN's 56 x 56 layer: several blocks of rows
      {1, 64, 16, 30, 70, 3, 3, 1, 1, {1, 1, 1, 1}},     // wide rows: tiles of a row span several vectors
  };
  uint32_t seed = 500;
  for (const int threads : {1, 3}) {
    ThreadPool pool(threads);
    for (const DirectCase& c : cases) {
      const conv::Geometry g = geometry_of(c);
      ASSERT_TRUE(conv::winograd_applies(1, g, c.in_channels, c.out_channels)) << "in_w " << c.in_w;
      const auto x = random_floats(static_cast<size_t>(c.batch * c.in_channels * c.in_h * c.in_w), seed++);
      const auto w = random_floats(static_cast<size_t>(c.out_channels * c.in_channels * 9), seed++);
      const auto b = random_floats(static_cast<size_t>(c.out_channels), seed++);
      const auto packed = conv::WinogradWeights::pack(w.data(), c.out_channels, c.in_channels);
      const size_t y_size = static_cast<size_t>(c.batch * c.out_channels * g.out_size());
      const double tolerance = 2e-6 * 9 * c.in_channels;  // |x|, |w| <= 1: terms of at most 1
      for (const Variant& v : kVariants) {
        const auto plain = reference(c, g, x, w, v.bias ? b : std::vector<float>{});
        const auto z = random_floats(y_size, seed++);
        std::vector<float> y(y_size, 1e30f);
        if (v.z == ZMode::kInPlace) y = z;
        const float* z_in = v.z == ZMode::kSeparate ? z.data() : v.z == ZMode::kInPlace ? y.data() : nullptr;
        conv::conv_winograd_f32(x.data(), packed, y.data(), c.batch, g, pool,
                                conv::ConvEpilogue<float>{v.bias ? b.data() : nullptr, z_in, v.activation});
        for (size_t i = 0; i < y_size; ++i) {
          const double expected = activate(v.activation, plain[i] + (v.z != ZMode::kNone ? z[i] : 0.0));
          ASSERT_NEAR(y[i], expected, tolerance) << "index " << i << " in_w " << c.in_w << " threads " << threads
                                                 << " act " << static_cast<int>(v.activation.kind);
        }
      }
    }
  }
}

TEST(WinogradConv, AppliesOnlyToThreeByThreeStrideOneWithEnoughChannels) {
  if (!cpu_runs_direct_kernels()) GTEST_SKIP() << "below the avx2 tier";
  const conv::Geometry g = geometry_of({1, 16, 16, 8, 16, 3, 3, 1, 1, {1, 1, 1, 1}});
  EXPECT_TRUE(conv::winograd_applies(1, g, 16, 16));
  EXPECT_FALSE(conv::winograd_applies(2, g, 16, 16));
  EXPECT_FALSE(conv::winograd_applies(1, g, 8, 16));
  EXPECT_FALSE(conv::winograd_applies(1, g, 16, 15));
  EXPECT_FALSE(conv::winograd_applies(1, geometry_of({1, 16, 16, 8, 16, 3, 3, 2, 2, {1, 1, 1, 1}}), 16, 16));
  EXPECT_FALSE(conv::winograd_applies(1, geometry_of({1, 16, 16, 8, 16, 5, 5, 1, 1, {2, 2, 2, 2}}), 16, 16));
  EXPECT_FALSE(conv::winograd_applies(1, geometry_of({1, 16, 16, 3, 16, 3, 3, 1, 1, {0, 1, 0, 1}}), 16, 16));
}

// The Conv op with a constant 3x3 W of 16+ channels takes the Winograd path; with W as a run-time input it takes
// the direct one. Both match the reference.
TEST(WinogradConv, ConvOpTakesItForConstantWeights) {
  expect_conv_op_matches_reference({1, 16, 20, 12, 18, 3, 3, 1, 1, {1, 1, 1, 1}}, 600);
}

}  // namespace
}  // namespace nxrt::cpu::testing
