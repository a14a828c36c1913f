#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "ep/cpu/conv/conv_common.h"
#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

std::vector<double> random_doubles(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<float> to_floats(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

struct Window {
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;  // begin..., end...
  std::vector<int64_t> dilations;
};

// Decodes flat index `i` over `dims` (row-major).
std::vector<int64_t> unflatten(int64_t i, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = i % dims[d];
    i /= dims[d];
  }
  return idx;
}

// Naive grouped N-D convolution in double: x [N, C, in...], w [M, C/g, k...].
std::vector<double> reference_conv(const std::vector<double>& x, const Shape& xs, const std::vector<double>& w,
                                   const Shape& ws, const std::vector<double>& bias, int64_t group, const Window& win,
                                   Shape& ys) {
  const size_t r = xs.size() - 2;
  std::vector<int64_t> in(xs.begin() + 2, xs.end()), k(ws.begin() + 2, ws.end()), out(r);
  for (size_t d = 0; d < r; ++d) {
    out[d] = (in[d] + win.pads[d] + win.pads[d + r] - ((k[d] - 1) * win.dilations[d] + 1)) / win.strides[d] + 1;
  }
  ys = {xs[0], ws[0]};
  ys.insert(ys.end(), out.begin(), out.end());
  const int64_t cg = ws[1], mg = ws[0] / group;
  const int64_t in_size = shape_numel(in), out_size = shape_numel(out), k_size = shape_numel(k);
  std::vector<double> y(static_cast<size_t>(shape_numel(ys)), 0.0);
  for (int64_t n = 0; n < xs[0]; ++n) {
    for (int64_t m = 0; m < ws[0]; ++m) {
      const int64_t g = m / mg;
      for (int64_t o = 0; o < out_size; ++o) {
        const auto oi = unflatten(o, out);
        double sum = bias.empty() ? 0.0 : bias[static_cast<size_t>(m)];
        for (int64_t c = 0; c < cg; ++c) {
          for (int64_t t = 0; t < k_size; ++t) {
            const auto ki = unflatten(t, k);
            int64_t offset = 0;
            bool inside = true;
            for (size_t d = 0; d < r; ++d) {
              const int64_t p = oi[d] * win.strides[d] - win.pads[d] + ki[d] * win.dilations[d];
              inside = inside && p >= 0 && p < in[d];
              offset = offset * in[d] + p;
            }
            if (!inside) continue;
            sum += x[static_cast<size_t>((n * xs[1] + g * cg + c) * in_size + offset)] *
                   w[static_cast<size_t>((m * cg + c) * k_size + t)];
          }
        }
        y[static_cast<size_t>((n * ws[0] + m) * out_size + o)] = sum;
      }
    }
  }
  return y;
}

struct ConvCase {
  Shape x;
  Shape w;
  int64_t group;
  Window window;
  bool bias;
};

NodeBuilder conv_node(const ConvCase& c) {
  NodeBuilder b("Conv", 22);
  b.attr_int("group", c.group).attr_ints("strides", c.window.strides).attr_ints("pads", c.window.pads);
  b.attr_ints("dilations", c.window.dilations);
  return b;
}

class ConvMatchesReference : public ::testing::TestWithParam<std::tuple<ConvCase, int>> {};

TEST_P(ConvMatchesReference, DoubleAndFloat) {
  const auto& [c, threads] = GetParam();
  const auto x = random_doubles(static_cast<size_t>(shape_numel(c.x)), 3);
  const auto w = random_doubles(static_cast<size_t>(shape_numel(c.w)), 4);
  const auto b = c.bias ? random_doubles(static_cast<size_t>(c.w[0]), 5) : std::vector<double>{};
  Shape ys;
  const auto expected = reference_conv(x, c.x, w, c.w, b, c.group, c.window, ys);
  std::vector<Tensor> inputs = {make_tensor(c.x, x), make_tensor(c.w, w)};
  if (c.bias) inputs.push_back(make_tensor<double>({c.w[0]}, b));
  Tensor y = run_one(conv_node(c).node(), inputs, threads);
  ASSERT_EQ(y.shape(), ys);
  const auto got = to_vector<double>(y);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[i], 1e-12) << "at " << i;

  std::vector<Tensor> finputs = {make_tensor(c.x, to_floats(x)), make_tensor(c.w, to_floats(w))};
  if (c.bias) finputs.push_back(make_tensor<float>({c.w[0]}, to_floats(b)));
  const auto fgot = to_vector<float>(run_one(conv_node(c).node(), finputs, threads));
  for (size_t i = 0; i < fgot.size(); ++i) ASSERT_NEAR(fgot[i], expected[i], 1e-4) << "at " << i;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvMatchesReference,
    ::testing::Combine(
        ::testing::Values(
            ConvCase{{2, 3, 9}, {4, 3, 3}, 1, {{2}, {1, 2}, {1}}, true},                     // 1-D asymmetric pads
            ConvCase{{1, 4, 7, 6}, {6, 2, 3, 2}, 2, {{1, 2}, {1, 0, 2, 1}, {2, 1}}, true},   // groups + dilation
            ConvCase{{2, 8, 5, 5}, {8, 1, 3, 3}, 8, {{1, 1}, {1, 1, 1, 1}, {1, 1}}, false},  // depthwise
            ConvCase{{1, 5, 4, 4}, {7, 5, 1, 1}, 1, {{1, 1}, {0, 0, 0, 0}, {1, 1}}, true},   // pointwise
            ConvCase{{1, 2, 4, 5, 3}, {3, 2, 2, 3, 2}, 1, {{1, 2, 1}, {0, 1, 1, 1, 0, 0}, {1, 1, 2}}, true},
            ConvCase{{1, 2, 3, 3, 2, 2},
                     {2, 2, 2, 1, 2, 1},
                     1,
                     {{1, 1, 1, 1}, {0, 0, 0, 0, 1, 0, 0, 0}, {1, 1, 1, 1}},
                     false},  // 4-D spatial
            ConvCase{{3, 6, 17, 19}, {12, 3, 3, 3}, 2, {{2, 1}, {1, 1, 1, 1}, {1, 1}}, true}),
        ::testing::Values(1, 3)));

TEST(Conv, ManySmallGroupsRunInParallel) {
  const ConvCase c{{4, 32, 6, 6}, {32, 1, 3, 3}, 32, {{1, 1}, {1, 1, 1, 1}, {1, 1}}, true};
  const auto x = random_doubles(static_cast<size_t>(shape_numel(c.x)), 7);
  const auto w = random_doubles(static_cast<size_t>(shape_numel(c.w)), 8);
  const auto b = random_doubles(32, 9);
  Shape ys;
  const auto expected = reference_conv(x, c.x, w, c.w, b, c.group, c.window, ys);
  const auto got = to_vector<double>(
      run_one(conv_node(c).node(), {make_tensor(c.x, x), make_tensor(c.w, w), make_tensor<double>({32}, b)}, 4));
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[i], 1e-12);
}

// 64 * 9 taps x 88 * 88 outputs exceeds one im2col buffer, so the output rows are processed in tiles.
TEST(Conv, LargeImageRunsInTiles) {
  const ConvCase c{{1, 64, 90, 89}, {3, 64, 3, 3}, 1, {{1, 1}, {0, 2, 1, 0}, {1, 1}}, true};
  const auto x = random_doubles(static_cast<size_t>(shape_numel(c.x)), 17);
  const auto w = random_doubles(static_cast<size_t>(shape_numel(c.w)), 18);
  const auto b = random_doubles(3, 19);
  Shape ys;
  const auto expected = reference_conv(x, c.x, w, c.w, b, c.group, c.window, ys);
  const auto got = to_vector<double>(
      run_one(conv_node(c).node(), {make_tensor(c.x, x), make_tensor(c.w, w), make_tensor<double>({3}, b)}, 2));
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[i], 1e-11) << "at " << i;
}

TEST(Conv, AutoPadSameAndValid) {
  const auto x = random_doubles(2 * 7 * 6, 1);
  const auto w = random_doubles(3 * 2 * 3 * 3, 2);
  struct Expect {
    const char* mode;
    Shape shape;
    std::vector<int64_t> pads;
  };
  for (const Expect& e :
       {Expect{"SAME_UPPER", {1, 3, 4, 3}, {1, 0, 1, 1}}, Expect{"SAME_LOWER", {1, 3, 4, 3}, {1, 1, 1, 0}},
        Expect{"VALID", {1, 3, 3, 2}, {0, 0, 0, 0}}}) {
    Tensor y = run_one(NodeBuilder("Conv", 11).attr_string("auto_pad", e.mode).attr_ints("strides", {2, 2}).node(),
                       {make_tensor<double>({1, 2, 7, 6}, x), make_tensor<double>({3, 2, 3, 3}, w)});
    ASSERT_EQ(y.shape(), e.shape) << e.mode;
    Shape ys;
    const auto expected = reference_conv(x, {1, 2, 7, 6}, w, {3, 2, 3, 3}, {}, 1, {{2, 2}, e.pads, {1, 1}}, ys);
    const auto got = to_vector<double>(y);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[i], 1e-12) << e.mode;
  }
}

TEST(Conv, EmptyBatchAndZeroSizedSpatial) {
  Tensor empty = run_one(NodeBuilder("Conv", 11).node(), {make_tensor<float>({0, 2, 5, 5}, {}),
                                                          make_tensor<float>({3, 2, 3, 3}, std::vector<float>(54, 1))});
  EXPECT_EQ(empty.shape(), (Shape{0, 3, 3, 3}));
  // A zero-sized input dim covered only by padding gives bias-only outputs.
  Tensor padded = run_one(NodeBuilder("Conv", 11).attr_ints("pads", {1, 1}).node(),
                          {make_tensor<float>({1, 1, 0}, {}), make_tensor<float>({2, 1, 2}, {1, 1, 1, 1}),
                           make_tensor<float>({2}, {0.5f, -1})});
  EXPECT_EQ(padded.shape(), (Shape{1, 2, 1}));
  EXPECT_EQ(to_vector<float>(padded), (std::vector<float>{0.5f, -1}));
  Tensor no_out_channels =
      run_one(NodeBuilder("Conv", 11).node(),
              {make_tensor<float>({1, 2, 3}, std::vector<float>(6, 1)), make_tensor<float>({0, 2, 1}, {})});
  EXPECT_EQ(no_out_channels.shape(), (Shape{1, 0, 3}));
}

TEST(Conv, HalfTypesComputeInFloat) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<float> w = {1, 0, 0, -1};
  const std::vector<float> expected = {-4, -4, -4, -4};
  EXPECT_EQ(to_float_vector(run_one(NodeBuilder("Conv", 11).node(), {make_half_tensor<Float16>({1, 1, 3, 3}, x),
                                                                     make_half_tensor<Float16>({1, 1, 2, 2}, w)})),
            expected);
  EXPECT_EQ(to_float_vector(run_one(NodeBuilder("Conv", 22).node(), {make_half_tensor<BFloat16>({1, 1, 3, 3}, x),
                                                                     make_half_tensor<BFloat16>({1, 1, 2, 2}, w)})),
            expected);
  // bfloat16 arrived with opset 22.
  EXPECT_FALSE(run_kernel(NodeBuilder("Conv", 11).node(),
                          {make_half_tensor<BFloat16>({1, 1, 3, 3}, x), make_half_tensor<BFloat16>({1, 1, 2, 2}, w)})
                   .has_value());
}

TEST(Conv, RejectsBadShapesAndAttributes) {
  const Tensor x = make_tensor<float>({1, 4, 3, 3}, std::vector<float>(36, 1));
  EXPECT_FALSE(
      run_kernel(NodeBuilder("Conv", 11).node(), {x, make_tensor<float>({2, 3, 1, 1}, std::vector<float>(6, 1))})
          .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Conv", 11).attr_int("group", 3).node(),
                          {x, make_tensor<float>({3, 4, 1, 1}, std::vector<float>(12, 1))})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Conv", 11).attr_string("auto_pad", "BOGUS").node(),
                          {x, make_tensor<float>({1, 4, 1, 1}, std::vector<float>(4, 1))})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Conv", 11).attr_ints("strides", {0, 1}).node(),
                          {x, make_tensor<float>({1, 4, 1, 1}, std::vector<float>(4, 1))})
                   .has_value());
  EXPECT_FALSE(
      run_kernel(NodeBuilder("Conv", 11).node(), {x, make_tensor<float>({1, 4, 4, 4}, std::vector<float>(64, 1))})
          .has_value());
  EXPECT_FALSE(
      run_kernel(NodeBuilder("Conv", 11).node(),
                 {x, make_tensor<float>({1, 4, 1, 1}, std::vector<float>(4, 1)), make_tensor<float>({2}, {1, 2})})
          .has_value());
}

// Column tiles split output rows (2-3 tiles per image depending on dtype and threads): every tile boundary
// falls inside an output row, and the pointwise case tiles x directly.
TEST(Conv, TilesSplittingOutputRowsMatchReference) {
  for (const ConvCase& c : {ConvCase{{1, 8, 40, 41}, {16, 8, 3, 3}, 1, {{1, 1}, {1, 1, 1, 1}, {1, 1}}, true},
                            ConvCase{{1, 4, 50, 50}, {8, 4, 1, 1}, 1, {{1, 1}, {0, 0, 0, 0}, {1, 1}}, true},
                            ConvCase{{1, 3, 61, 64}, {5, 3, 7, 7}, 1, {{2, 2}, {3, 3, 3, 3}, {1, 1}}, false}}) {
    const auto x = random_doubles(static_cast<size_t>(shape_numel(c.x)), 41);
    const auto w = random_doubles(static_cast<size_t>(shape_numel(c.w)), 42);
    const auto b = c.bias ? random_doubles(static_cast<size_t>(c.w[0]), 43) : std::vector<double>{};
    Shape ys;
    const auto expected = reference_conv(x, c.x, w, c.w, b, c.group, c.window, ys);
    for (int threads : {1, 2, 3}) {
      std::vector<Tensor> inputs = {make_tensor(c.x, x), make_tensor(c.w, w)};
      std::vector<Tensor> finputs = {make_tensor(c.x, to_floats(x)), make_tensor(c.w, to_floats(w))};
      if (c.bias) {
        inputs.push_back(make_tensor<double>({c.w[0]}, b));
        finputs.push_back(make_tensor<float>({c.w[0]}, to_floats(b)));
      }
      const auto got = to_vector<double>(run_one(conv_node(c).node(), inputs, threads));
      const auto fgot = to_vector<float>(run_one(conv_node(c).node(), finputs, threads));
      ASSERT_EQ(got.size(), expected.size());
      ASSERT_EQ(fgot.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], expected[i], 1e-11) << "threads " << threads << " at " << i;
        ASSERT_NEAR(fgot[i], expected[i], 1e-4) << "threads " << threads << " at " << i;
      }
    }
  }
}

struct FusedCase {
  ConvCase conv;
  bool z;
  const char* activation;
  std::vector<float> params;
};

double reference_activation(const std::string& name, const std::vector<float>& p, double v) {
  if (name == "Relu") return std::max(v, 0.0);
  if (name == "LeakyRelu") return v >= 0 ? v : static_cast<double>(p[0]) * v;
  if (name == "Clip") return std::clamp(v, static_cast<double>(p[0]), static_cast<double>(p[1]));
  if (name == "Sigmoid") return 1.0 / (1.0 + std::exp(-v));
  if (name == "Tanh") return std::tanh(v);
  if (name == "HardSigmoid") return std::clamp(static_cast<double>(p[0]) * v + static_cast<double>(p[1]), 0.0, 1.0);
  return v;
}

NodeBuilder fused_node(const FusedCase& f) {
  NodeBuilder b("FusedConv", 1);
  b.attr_int("group", f.conv.group).attr_ints("strides", f.conv.window.strides);
  b.attr_ints("pads", f.conv.window.pads).attr_ints("dilations", f.conv.window.dilations);
  b.attr_string("activation", f.activation);
  if (!f.params.empty()) b.attr_floats("activation_params", f.params);
  return b;
}

class FusedConvMatchesConvAddActivation : public ::testing::TestWithParam<std::tuple<FusedCase, int>> {};

TEST_P(FusedConvMatchesConvAddActivation, DoubleAndFloat) {
  const auto& [f, threads] = GetParam();
  const ConvCase& c = f.conv;
  const auto x = random_doubles(static_cast<size_t>(shape_numel(c.x)), 51);
  const auto w = random_doubles(static_cast<size_t>(shape_numel(c.w)), 52);
  const auto b = c.bias ? random_doubles(static_cast<size_t>(c.w[0]), 53) : std::vector<double>{};
  Shape ys;
  auto expected = reference_conv(x, c.x, w, c.w, b, c.group, c.window, ys);
  const auto z = f.z ? random_doubles(expected.size(), 54) : std::vector<double>{};
  for (size_t i = 0; i < expected.size(); ++i) {
    expected[i] = reference_activation(f.activation, f.params, expected[i] + (f.z ? z[i] : 0.0));
  }
  graph::Node node = fused_node(f).node();
  node.domain = graph::kMsDomain;
  std::vector<Tensor> inputs = {make_tensor(c.x, x), make_tensor(c.w, w)};
  std::vector<Tensor> finputs = {make_tensor(c.x, to_floats(x)), make_tensor(c.w, to_floats(w))};
  if (c.bias || f.z) {
    inputs.push_back(c.bias ? make_tensor<double>({c.w[0]}, b) : Tensor());
    finputs.push_back(c.bias ? make_tensor<float>({c.w[0]}, to_floats(b)) : Tensor());
  }
  if (f.z) {
    inputs.push_back(make_tensor(ys, z));
    finputs.push_back(make_tensor(ys, to_floats(z)));
  }
  Tensor y = run_one(node, inputs, threads);
  ASSERT_EQ(y.shape(), ys);
  const auto got = to_vector<double>(y);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[i], 1e-12) << "at " << i;
  const auto fgot = to_vector<float>(run_one(node, finputs, threads));
  ASSERT_EQ(fgot.size(), expected.size());
  for (size_t i = 0; i < fgot.size(); ++i) ASSERT_NEAR(fgot[i], expected[i], 1e-4) << "at " << i;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FusedConvMatchesConvAddActivation,
    ::testing::Combine(
        ::testing::Values(
            FusedCase{{{2, 4, 9, 8}, {6, 4, 3, 3}, 1, {{1, 1}, {1, 1, 1, 1}, {1, 1}}, true}, true, "Relu", {}},
            FusedCase{{{2, 4, 9, 8}, {6, 4, 3, 3}, 1, {{1, 1}, {1, 1, 1, 1}, {1, 1}}, false}, true, "Relu", {}},
            FusedCase{{{1, 4, 9, 8}, {6, 4, 3, 3}, 1, {{1, 1}, {1, 1, 1, 1}, {1, 1}}, true}, false, "Relu", {}},
            FusedCase{{{1, 4, 9, 8}, {6, 4, 3, 3}, 1, {{1, 1}, {1, 1, 1, 1}, {1, 1}}, false}, false, "", {}},
            FusedCase{{{1, 4, 7, 6}, {6, 2, 3, 2}, 2, {{1, 2}, {1, 0, 2, 1}, {2, 1}}, true}, true, "LeakyRelu", {0.2f}},
            FusedCase{{{2, 8, 5, 5}, {8, 1, 3, 3}, 8, {{1, 1}, {1, 1, 1, 1}, {1, 1}}, true}, true, "Clip",
                      {-0.5f, 0.7f}},
            FusedCase{{{1, 5, 6, 6}, {7, 5, 1, 1}, 1, {{1, 1}, {0, 0, 0, 0}, {1, 1}}, true}, true, "Sigmoid", {}},
            FusedCase{{{1, 6, 11, 11}, {4, 6, 1, 1}, 1, {{2, 2}, {0, 0, 0, 0}, {1, 1}}, false}, true, "Tanh", {}},
            FusedCase{{{3, 6, 17, 19}, {12, 3, 3, 3}, 2, {{2, 1}, {1, 1, 1, 1}, {1, 1}}, true}, true, "HardSigmoid",
                      {0.3f, 0.4f}},
            FusedCase{{{1, 8, 40, 41}, {16, 8, 3, 3}, 1, {{1, 1}, {1, 1, 1, 1}, {1, 1}}, true}, true, "Relu", {}},
            FusedCase{{{2, 3, 9}, {4, 3, 3}, 1, {{2}, {1, 2}, {1}}, true}, true, "Relu", {}}),
        ::testing::Values(1, 2)));

// A constant W and at most kNarrowConvOutputs output positions per image take conv_narrow_f32 (W^T packed at the
// first run): 1-D streaming shapes (one frame, a few frames, a strided STFT-like window) and a small 2-D image,
// with bias and Relu in the epilogue.
TEST(FusedConv, NarrowOutputsWithConstantWeightsMatchReference) {
  struct NarrowCase {
    Shape x, w;
    Window window;
  };
  const NarrowCase cases[] = {
      {{2, 129, 6}, {128, 129, 3}, {{1}, {1, 1}, {1}}},       // 6 positions
      {{1, 64, 8}, {64, 64, 3}, {{2}, {1, 1}, {1}}},          // stride 2: 4 positions
      {{1, 1, 640}, {258, 1, 256}, {{128}, {0, 0}, {1}}},     // STFT as a conv: 4 positions
      {{2, 5, 3}, {7, 5, 3}, {{1}, {0, 0}, {1}}},             // 1 position
      {{1, 6, 4, 4}, {9, 6, 3, 3}, {{2, 2}, {1, 1, 1, 1}, {1, 1}}},  // 2 x 2 image
  };
  for (const NarrowCase& c : cases) {
    for (int threads : {1, 2}) {
      const auto x = random_doubles(static_cast<size_t>(shape_numel(c.x)), 61);
      const auto w = random_doubles(static_cast<size_t>(shape_numel(c.w)), 62);
      const auto b = random_doubles(static_cast<size_t>(c.w[0]), 63);
      Shape ys;
      auto expected = reference_conv(x, c.x, w, c.w, b, 1, c.window, ys);
      for (double& v : expected) v = std::max(v, 0.0);
      ASSERT_LE(shape_numel(ys) / ys[0] / ys[1], conv::kNarrowConvOutputs);
      NodeBuilder builder("FusedConv", 1);
      builder.attr_ints("strides", c.window.strides).attr_ints("pads", c.window.pads);
      builder.attr_ints("dilations", c.window.dilations).attr_string("activation", "Relu");
      graph::Node node = builder.node();
      node.domain = graph::kMsDomain;
      const std::vector<Tensor> inputs = {make_tensor(c.x, to_floats(x)), make_tensor(c.w, to_floats(w)),
                                          make_tensor<float>({c.w[0]}, to_floats(b))};
      auto outputs = run_kernel(node, inputs, threads, {false, true, true});
      ASSERT_TRUE(outputs) << outputs.status().to_string();
      ASSERT_EQ((*outputs)[0].shape(), ys);
      const auto got = to_vector<float>((*outputs)[0]);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], expected[i], 2e-4 * (1 + std::fabs(expected[i]))) << shape_to_string(c.x) << " at " << i;
      }
    }
  }
}

TEST(FusedConv, RejectsUnknownActivationAndBadZ) {
  graph::Node node = NodeBuilder("FusedConv", 1).name("fc").attr_string("activation", "Softmax").node();
  node.domain = graph::kMsDomain;
  const Tensor x = make_tensor<float>({1, 2, 3, 3}, std::vector<float>(18, 1));
  const Tensor w = make_tensor<float>({1, 2, 1, 1}, std::vector<float>(2, 1));
  auto bad = run_kernel(node, {x, w});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("fc"), std::string::npos) << bad.status().message();
  graph::Node relu = NodeBuilder("FusedConv", 1).attr_string("activation", "Relu").node();
  relu.domain = graph::kMsDomain;
  EXPECT_FALSE(run_kernel(relu, {x, w, Tensor(), make_tensor<float>({1, 1, 3, 2}, std::vector<float>(6, 1))})
                   .has_value());
}

// ConvTranspose equals the adjoint of Conv: <conv(x), y> == <x, conv_transpose(y)> with the same weights.
TEST(ConvTranspose, IsTheAdjointOfConv) {
  for (int64_t group : {1, 2}) {
    const Shape xs = {2, 4, 7, 6};
    const Shape ws = {6, 4 / group, 3, 2};
    const Window win{{2, 1}, {1, 0, 0, 1}, {1, 2}};
    const auto x = random_doubles(static_cast<size_t>(shape_numel(xs)), 12);
    const auto w = random_doubles(static_cast<size_t>(shape_numel(ws)), 13);
    Shape ys;
    const auto conv_x = reference_conv(x, xs, w, ws, {}, group, win, ys);
    const auto y = random_doubles(conv_x.size(), 14);
    // ConvTranspose weights are [C_in_of_transpose = M, C / group, k...]: the conv weights as they are.
    Tensor t = run_one(NodeBuilder("ConvTranspose", 11)
                           .attr_int("group", group)
                           .attr_ints("strides", win.strides)
                           .attr_ints("pads", win.pads)
                           .attr_ints("dilations", win.dilations)
                           .attr_ints("output_padding", {1, 0})
                           .node(),
                       {make_tensor(ys, y), make_tensor(ws, w)}, 3);
    ASSERT_EQ(t.shape(), xs) << "group " << group;
    const auto xt = to_vector<double>(t);
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < y.size(); ++i) lhs += conv_x[i] * y[i];
    for (size_t i = 0; i < x.size(); ++i) rhs += x[i] * xt[i];
    EXPECT_NEAR(lhs, rhs, 1e-10) << "group " << group;
  }
}

TEST(ConvTranspose, OutputShapeAndBias) {
  Tensor y = run_one(NodeBuilder("ConvTranspose", 11).attr_ints("strides", {2}).attr_ints("output_shape", {6}).node(),
                     {make_tensor<float>({1, 1, 2}, {1, 2}), make_tensor<float>({1, 2, 2}, {1, 1, 10, 10}),
                      make_tensor<float>({2}, {0, 100})});
  ASSERT_EQ(y.shape(), (Shape{1, 2, 6}));
  // Natural size 4, requested 6: total padding -2 splits as begin -1, end -1.
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 1, 1, 2, 2, 0, 100, 110, 110, 120, 120, 100}));
}

TEST(ConvTranspose, AdjointOnALargerInputAndBiasOnlyOutput) {
  for (int64_t group : {1, 2}) {
    const Shape xs = {1, 4, 150, 149};
    const Shape ws = {6, 4 / group, 3, 3};
    const Window win{{1, 1}, {1, 1, 0, 1}, {1, 1}};
    const auto x = random_doubles(static_cast<size_t>(shape_numel(xs)), 31);
    const auto w = random_doubles(static_cast<size_t>(shape_numel(ws)), 32);
    Shape ys;
    const auto conv_x = reference_conv(x, xs, w, ws, {}, group, win, ys);
    const auto y = random_doubles(conv_x.size(), 33);
    Tensor t = run_one(NodeBuilder("ConvTranspose", 11).attr_int("group", group).attr_ints("pads", win.pads).node(),
                       {make_tensor(ys, y), make_tensor(ws, w)}, 2);
    ASSERT_EQ(t.shape(), xs);
    const auto xt = to_vector<double>(t);
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < y.size(); ++i) lhs += conv_x[i] * y[i];
    for (size_t i = 0; i < x.size(); ++i) rhs += x[i] * xt[i];
    EXPECT_NEAR(lhs, rhs, 1e-8) << "group " << group;
  }
  Tensor bias_only = run_one(NodeBuilder("ConvTranspose", 11).node(),
                             {make_tensor<float>({1, 1, 0}, {}), make_tensor<float>({1, 2, 3}, {1, 1, 1, 1, 1, 1}),
                              make_tensor<float>({2}, {3, 4})});
  EXPECT_EQ(bias_only.shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(to_vector<float>(bias_only), (std::vector<float>{3, 3, 4, 4}));
}

// Kernel equal to the stride, no pads (upsampling by whole patches): each output element comes from one input pixel,
// stored with the bias rather than accumulated; still the adjoint of Conv, with the bias added once everywhere.
// Float whole-patch upsampling with 2-wide patches (the interleaving store path), row widths past and off its
// 4-float vector steps, against a direct sum: y[co, 2i + kh, 2j + kw] = b[co] + sum_ci x[ci, i, j] w[ci, co, kh, kw].
TEST(ConvTranspose, FloatTwoWidePatchesMatchTheDirectSum) {
  for (int64_t source_w : {3, 8, 11}) {
    const Shape xs = {1, 3, 5, source_w};
    const Shape ws = {3, 2, 2, 2};
    const auto x = to_floats(random_doubles(static_cast<size_t>(shape_numel(xs)), 51));
    const auto w = to_floats(random_doubles(static_cast<size_t>(shape_numel(ws)), 52));
    const std::vector<float> bias = {0.25f, -2.0f};
    Tensor t = run_one(NodeBuilder("ConvTranspose", 11).attr_ints("strides", {2, 2}).node(),
                       {make_tensor(xs, x), make_tensor(ws, w), make_tensor<float>({2}, bias)}, 1);
    ASSERT_EQ(t.shape(), (Shape{1, 2, 10, 2 * source_w}));
    const auto y = to_vector<float>(t);
    for (int64_t co = 0; co < 2; ++co) {
      for (int64_t oh = 0; oh < 10; ++oh) {
        for (int64_t ow = 0; ow < 2 * source_w; ++ow) {
          double sum = bias[static_cast<size_t>(co)];
          for (int64_t ci = 0; ci < 3; ++ci) {
            sum += static_cast<double>(x[static_cast<size_t>((ci * 5 + oh / 2) * source_w + ow / 2)]) *
                   w[static_cast<size_t>(((ci * 2 + co) * 2 + oh % 2) * 2 + ow % 2)];
          }
          ASSERT_NEAR(y[static_cast<size_t>((co * 10 + oh) * 2 * source_w + ow)], sum, 1e-5)
              << "co " << co << " oh " << oh << " ow " << ow << " width " << source_w;
        }
      }
    }
  }
}

TEST(ConvTranspose, WholePatchUpsamplingIsTheAdjointPlusBias) {
  for (int64_t group : {1, 2}) {
    for (const std::vector<int64_t>& stride : {std::vector<int64_t>{2, 2}, std::vector<int64_t>{3, 2}}) {
      const Shape xs = {2, 4, 9 * stride[0], 7 * stride[1]};
      const Shape ws = {6, 4 / group, stride[0], stride[1]};
      const Window win{stride, {0, 0, 0, 0}, {1, 1}};
      const auto x = random_doubles(static_cast<size_t>(shape_numel(xs)), 41);
      const auto w = random_doubles(static_cast<size_t>(shape_numel(ws)), 42);
      Shape ys;
      const auto conv_x = reference_conv(x, xs, w, ws, {}, group, win, ys);
      const auto y = random_doubles(conv_x.size(), 43);
      const std::vector<double> bias = {0.5, -1, 2, 0, 3, -0.25, 1.5, 7};
      const Shape bias_shape = {xs[1]};
      for (int threads : {1, 3}) {
        Tensor t = run_one(NodeBuilder("ConvTranspose", 11).attr_int("group", group).attr_ints("strides", stride).node(),
                           {make_tensor(ys, y), make_tensor(ws, w),
                            make_tensor(bias_shape, std::vector<double>(bias.begin(), bias.begin() + xs[1]))},
                           threads);
        ASSERT_EQ(t.shape(), xs) << "group " << group;
        const auto xt = to_vector<double>(t);
        double lhs = 0, rhs = 0;
        for (size_t i = 0; i < y.size(); ++i) lhs += conv_x[i] * y[i];
        const int64_t plane = xs[2] * xs[3];
        for (size_t i = 0; i < x.size(); ++i) {
          rhs += x[i] * (xt[i] - bias[static_cast<size_t>((static_cast<int64_t>(i) / plane) % xs[1])]);
        }
        EXPECT_NEAR(lhs, rhs, 1e-9) << "group " << group << " stride " << stride[0] << "x" << stride[1];
      }
    }
  }
}

TEST(ConvInteger, PerChannelZeroPointsMatchReference) {
  const std::vector<uint8_t> x = {10, 20, 30, 40, 50, 60, 70, 80, 90};
  const std::vector<int8_t> w = {1, -2, 3, 4, -5, 6, 7, 8};
  Tensor y = run_one(NodeBuilder("ConvInteger", 10).attr_ints("pads", {1, 1, 0, 0}).node(),
                     {make_tensor<uint8_t>({1, 1, 3, 3}, x), make_tensor<int8_t>({2, 1, 2, 2}, w),
                      make_tensor<uint8_t>({}, {5}), make_tensor<int8_t>({2}, {1, -1})});
  ASSERT_EQ(y.shape(), (Shape{1, 2, 3, 3}));
  std::vector<double> xd(x.begin(), x.end()), wd;
  for (size_t i = 0; i < w.size(); ++i) wd.push_back(w[i] - (i < 4 ? 1 : -1));
  for (auto& v : xd) v -= 5;
  Shape ys;
  const auto expected = reference_conv(xd, {1, 1, 3, 3}, wd, {2, 1, 2, 2}, {}, 1, {{1, 1}, {1, 1, 0, 0}, {1, 1}}, ys);
  const auto got = to_vector<int32_t>(y);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], static_cast<int32_t>(expected[i])) << i;
}

TEST(QLinearConv, RequantizesWithRoundingAndSaturation) {
  // x - 2 = {0, 2, 4, 253} times scale 0.5 plus zero point 3; ties round to even, results saturate to int8.
  Tensor y = run_one(
      NodeBuilder("QLinearConv", 10).node(),
      {make_tensor<uint8_t>({1, 1, 2, 2}, {2, 4, 6, 255}), make_tensor<float>({}, {0.5f}),
       make_tensor<uint8_t>({}, {2}), make_tensor<int8_t>({2, 1, 1, 1}, {1, -1}), make_tensor<float>({2}, {1.0f, 1.0f}),
       make_tensor<int8_t>({2}, {0, 0}), make_tensor<float>({}, {1.0f}), make_tensor<int8_t>({}, {3})});
  ASSERT_EQ(y.dtype(), DataType::kInt8);
  EXPECT_EQ(to_vector<int8_t>(y), (std::vector<int8_t>{3, 4, 5, 127, 3, 2, 1, -124}));
}

TEST(DeformConv, ZeroOffsetsEqualConv) {
  const Shape xs = {1, 2, 5, 4}, ws = {3, 2, 2, 2};
  const auto x = random_doubles(static_cast<size_t>(shape_numel(xs)), 21);
  const auto w = random_doubles(static_cast<size_t>(shape_numel(ws)), 22);
  Shape ys;
  const auto expected = reference_conv(x, xs, w, ws, {}, 1, {{1, 1}, {1, 0, 0, 1}, {1, 1}}, ys);
  Tensor y = run_one(
      NodeBuilder("DeformConv", 19).attr_ints("pads", {1, 0, 0, 1}).node(),
      {make_tensor(xs, x), make_tensor(ws, w),
       make_tensor<double>({1, 8, ys[2], ys[3]}, std::vector<double>(static_cast<size_t>(8 * ys[2] * ys[3]), 0.0))});
  ASSERT_EQ(y.shape(), ys);
  const auto got = to_vector<double>(y);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-12);
}

TEST(DeformConv, HalfOffsetInterpolates) {
  // 1x1 kernel sampling half a pixel to the right: the mean of neighbours, 0 beyond the edge counts as zero.
  Tensor y = run_one(NodeBuilder("DeformConv", 19).node(),
                     {make_tensor<float>({1, 1, 1, 3}, {2, 4, 8}), make_tensor<float>({1, 1, 1, 1}, {1}),
                      make_tensor<float>({1, 2, 1, 3}, {0, 0, 0, 0.5f, 0.5f, 0.5f})});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{3, 6, 4}));
}

TEST(CausalConvWithState, StreamingMatchesOneShot) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const Tensor w = make_tensor<float>({1, 1, 3}, {0.5f, -1, 2});
  auto full = run_kernel(NodeBuilder("CausalConvWithState", 27).node(), {make_tensor<float>({1, 1, 6}, x), w});
  ASSERT_TRUE(full.has_value());
  auto first =
      run_kernel(NodeBuilder("CausalConvWithState", 27).node(), {make_tensor<float>({1, 1, 4}, {1, 2, 3, 4}), w});
  ASSERT_TRUE(first.has_value());
  auto second = run_kernel(NodeBuilder("CausalConvWithState", 27).node(),
                           {make_tensor<float>({1, 1, 2}, {5, 6}), w, Tensor(), (*first)[1]});
  ASSERT_TRUE(second.has_value());
  auto whole = to_vector<float>((*full)[0]);
  auto a = to_vector<float>((*first)[0]);
  auto b = to_vector<float>((*second)[0]);
  a.insert(a.end(), b.begin(), b.end());
  EXPECT_EQ(a, whole);
  EXPECT_EQ(to_vector<float>((*full)[1]), (std::vector<float>{5, 6}));
}

}  // namespace
}  // namespace nxrt::cpu::testing
