// The blocked-channel layout pass (level 3) and its com.nxrt:Nchwc* kernels: which graphs convert, and that the
// converted graph matches the unoptimised one (convs within float rounding, pools exactly) at 1 and 3 threads, over
// channel counts off the 16-lane block, strides, pads, small images, batches and activations.
#include <cmath>
#include <limits>

#include "ep/cpu/microkernels/cpu_features.h"
#include "optimizer_test_util.h"

namespace nxrt::optimizer_test {
namespace {

constexpr double kConvTolerance = 2e-5;

bool layout_applies() { return cpu::cpu_isa_at_least(cpu::CpuIsa::kAvx2); }

std::vector<float> weights(size_t count, uint32_t seed, float scale = 0.5f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> values(count);
  for (float& v : values) v = dist(rng);
  return values;
}

struct ConvSpec {
  std::string input, output;
  int64_t in_channels, out_channels, kernel, stride;
  std::vector<int64_t> pads;
};

// Appends Conv `spec` (W_<output>, B_<output> initializers) to `model`.
void add_conv(w::Model& model, const ConvSpec& spec, uint32_t seed) {
  const int64_t k = spec.kernel;
  const float scale = 1.0f / std::sqrt(static_cast<float>(spec.in_channels * k * k));
  model.graph.initializers.push_back(
      w::float_tensor("W_" + spec.output, {spec.out_channels, spec.in_channels, k, k},
                      weights(static_cast<size_t>(spec.out_channels * spec.in_channels * k * k), seed, scale)));
  model.graph.initializers.push_back(w::float_tensor("B_" + spec.output, {spec.out_channels},
                                                     weights(static_cast<size_t>(spec.out_channels), seed + 1)));
  model.graph.nodes.push_back({"Conv",
                               {spec.input, "W_" + spec.output, "B_" + spec.output},
                               {spec.output},
                               {w::attr_ints("kernel_shape", {k, k}),
                                w::attr_ints("strides", {spec.stride, spec.stride}), w::attr_ints("pads", spec.pads)},
                               spec.output});
}

// A small ResNet: 7x7/2 stem on 3 channels, MaxPool, a basic block, a stride-2 block with a 1x1 projection,
// GlobalAveragePool. Channels are multiples of 16 or not (`width`).
w::Model resnet(int64_t batch, int64_t size, int64_t width) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {batch, 3, size, size}}};
  model.graph.outputs = {{"y", 1, {}, false}};
  add_conv(model, {"x", "stem", 3, width, 7, 2, {3, 3, 3, 3}}, 1);
  model.graph.nodes.push_back({"Relu", {"stem"}, {"stem_r"}, {}, "stem_relu"});
  model.graph.nodes.push_back(
      {"MaxPool",
       {"stem_r"},
       {"p"},
       {w::attr_ints("kernel_shape", {3, 3}), w::attr_ints("strides", {2, 2}), w::attr_ints("pads", {1, 1, 1, 1})},
       "pool"});
  add_conv(model, {"p", "a1", width, width, 3, 1, {1, 1, 1, 1}}, 3);
  model.graph.nodes.push_back({"Relu", {"a1"}, {"a1r"}, {}, "a1_relu"});
  add_conv(model, {"a1r", "a2", width, width, 3, 1, {1, 1, 1, 1}}, 5);
  model.graph.nodes.push_back({"Add", {"a2", "p"}, {"a_sum"}, {}, "a_add"});
  model.graph.nodes.push_back({"Relu", {"a_sum"}, {"a"}, {}, "a_relu"});
  const int64_t wide = width * 2;
  add_conv(model, {"a", "b1", width, wide, 3, 2, {1, 1, 1, 1}}, 7);
  model.graph.nodes.push_back({"Relu", {"b1"}, {"b1r"}, {}, "b1_relu"});
  add_conv(model, {"b1r", "b2", wide, wide, 3, 1, {1, 1, 1, 1}}, 9);
  add_conv(model, {"a", "proj", width, wide, 1, 2, {0, 0, 0, 0}}, 11);
  model.graph.nodes.push_back({"Add", {"b2", "proj"}, {"b_sum"}, {}, "b_add"});
  model.graph.nodes.push_back({"Relu", {"b_sum"}, {"b"}, {}, "b_relu"});
  model.graph.nodes.push_back({"GlobalAveragePool", {"b"}, {"y"}, {}, "gap"});
  return model;
}

TEST(NchwcLayout, ResnetConvertsAndMatches) {
  const struct { int64_t batch, size, width; } cases[] = {{1, 64, 32}, {2, 45, 16}, {1, 38, 24}, {1, 20, 8}};
  for (const auto& c : cases) {
    for (int threads : {1, 3}) {
      SCOPED_TRACE(testing::Message() << "batch " << c.batch << " size " << c.size << " width " << c.width
                                      << " threads " << threads);
      const w::Model model = resnet(c.batch, c.size, c.width);
      auto optimized = optimize_and_compare(model, kConvTolerance, 99, threads);
      ASSERT_TRUE(optimized);
      if (!layout_applies()) continue;
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 6);
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcMaxPool"), 1);
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcGlobalAveragePool"), 1);
      // The stem reads the 3-channel input as it is; only the pooled result goes back to NCHW.
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcReorderIn"), 0);
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcReorderOut"), 1);
      EXPECT_EQ(count_op(*optimized, "Conv"), 0);
    }
  }
}

// A model that takes any image size (Paddle and YOLO exports: [N, C, H, W] with every spatial axis symbolic)
// converts as a fixed-size one does: the shape rules keep rank and channels through the window ops.
TEST(NchwcLayout, SymbolicImageSizeConverts) {
  w::Model model = resnet(1, 1, 16);
  model.graph.inputs = {{"x", 1, {std::string("N"), int64_t{3}, std::string("H"), std::string("W")}}};
  auto optimized = optimize_and_compare(model, kConvTolerance);
  ASSERT_TRUE(optimized);
  if (!layout_applies()) GTEST_SKIP() << "the blocked layout needs the avx2 tier";
  EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 6);
  EXPECT_EQ(count_op(*optimized, "Conv"), 0);
}

// One conv over many geometries: every tile width, edge pixels on both sides, windows wider than the image, and the
// Winograd path.
TEST(NchwcLayout, SingleConvGeometriesMatch) {
  const struct {
    int64_t in_channels, out_channels, height, width, kernel, stride;
    std::vector<int64_t> pads;
  } cases[] = {
      {5, 16, 9, 30, 3, 1, {1, 1, 1, 1}},     // plain input (below a block of channels),
                                              // one output block
      {12, 24, 10, 21, 3, 1, {1, 1, 1, 1}},   // plain input of 12 channels (a space-to-depth
                                              // stem), partial output block
      {17, 40, 13, 27, 3, 2, {1, 0, 2, 1}},   // partial blocks in and out,
                                              // asymmetric pads
      {32, 48, 6, 5, 5, 1, {2, 2, 2, 2}},     // image narrower than the window:
                                              // edge pixels only
      {16, 32, 11, 100, 1, 1, {0, 0, 0, 0}},  // 1x1, long rows
      {3, 32, 23, 41, 7, 3, {3, 3, 3, 3}},    // plain input, stride 3 (run-time
                                              // column step)
      {2, 8, 4, 4, 3, 1, {0, 0, 0, 0}},       // plain input, one output pixel per row
      // 3x3 stride 1 with 16+ channels: Winograd F(2x2, 3x3) on the blocked layout.
      {20, 36, 8, 76, 3, 1, {1, 0, 2, 1}},  // odd output sizes (9 x 75), 38 tiles a row (two chunks), partial blocks
      {16, 16, 3, 3, 3, 1, {1, 1, 1, 1}},   // a single tile row, half of it outside
      {48, 17, 9, 10, 3, 1, {0, 0, 0, 0}},  // unpadded, output channels one past a block
      {16, 32, 5, 5, 3, 1, {2, 2, 2, 2}},   // pads of 2: tiles mostly padding
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c.in_channels << "->" << c.out_channels << " " << c.height << "x" << c.width
                                    << " k" << c.kernel << " s" << c.stride);
    w::Model model;
    model.graph.inputs = {{"x", 1, {2, c.in_channels, c.height, c.width}}};
    model.graph.outputs = {{"y", 1, {}, false}};
    add_conv(model, {"x", "y", c.in_channels, c.out_channels, c.kernel, c.stride, c.pads}, 21);
    for (int threads : {1, 3}) {
      auto optimized = optimize_and_compare(model, kConvTolerance, 99, threads);
      ASSERT_TRUE(optimized);
      if (layout_applies()) {
        EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 1);
      }
    }
  }
}

// Conv + Add(Z) + activation fuse first, then convert with Z blocked; each activation, in registers (Relu, LeakyRelu,
// Clip, HardSigmoid, HardSwish) or over each stored tile (Sigmoid, Tanh, and Swish from y * Sigmoid(y)).
TEST(NchwcLayout, FusedActivationsAndResidualMatch) {
  for (const char* activation :
       {"Relu", "LeakyRelu", "Clip", "HardSigmoid", "Sigmoid", "Tanh", "HardSwish", "Swish"}) {
    SCOPED_TRACE(activation);
    for (int64_t kernel : {3, 1}) {  // 3x3 stride 1 runs Winograd, 1x1 the direct kernel
      w::Model model;
      model.graph.inputs = {{"x", 1, {1, 20, 15, 18}}, {"z", 1, {1, 24, 15, 18}}};
      model.graph.outputs = {{"y", 1, {}, false}};
      const int64_t pad = kernel / 2;
      add_conv(model, {"x", "c", 20, 24, kernel, 1, {pad, pad, pad, pad}}, 31);
      model.graph.nodes.push_back({"Add", {"c", "z"}, {"s"}, {}, "add"});
      std::vector<std::string> inputs{"s"};
      if (std::string(activation) == "Clip") {
        model.graph.initializers.push_back(scalar("lo", -0.25f));
        model.graph.initializers.push_back(scalar("hi", 0.5f));
        inputs = {"s", "lo", "hi"};
      }
      if (std::string(activation) == "Swish") {
        model.graph.nodes.push_back({"Sigmoid", {"s"}, {"gate"}, {}, "gate"});
        model.graph.nodes.push_back({"Mul", {"s", "gate"}, {"y"}, {}, "act"});
      } else {
        model.graph.nodes.push_back({activation, inputs, {"y"}, {}, "act"});
      }
      auto optimized = optimize_and_compare(model, kConvTolerance, 99, 2);
      ASSERT_TRUE(optimized);
      if (!layout_applies()) continue;
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcReorderIn"), 2);  // x (20 channels) and Z
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 1);
      EXPECT_EQ(optimized->graph().nodes.size(), 4u);
    }
  }
}

// MaxPool on blocked data follows the MaxPool kernel's window rule exactly (NaN taps skipped unless all are NaN, ties
// keep the earlier tap), with ceil_mode, dilations and pads. The conv output c is also a graph output, so the reference
// pool runs on exactly the values the blocked pool saw.
void expect_blocked_max_pool_exact(const std::vector<w::Attribute>& pool_attributes) {
  const std::vector<int64_t> shape{1, 24, 17, 19};
  w::Model model;
  model.graph.inputs = {{"x", 1, {1, 24, 17, 19}}};
  model.graph.outputs = {{"y", 1, {}, false}, {"c", 1, {}, false}};
  model.graph.initializers.push_back(w::float_tensor("W", {24, 24, 1, 1}, [] {
    std::vector<float> identity(24 * 24, 0.0f);
    for (int i = 0; i < 24; ++i) identity[static_cast<size_t>(i * 24 + i)] = 1.0f;
    return identity;
  }()));
  model.graph.nodes.push_back({"Conv", {"x", "W"}, {"c"}, {w::attr_ints("kernel_shape", {1, 1})}, "identity"});
  model.graph.nodes.push_back({"MaxPool", {"c"}, {"y"}, pool_attributes, "pool"});
  w::Model pool_only;
  pool_only.graph.inputs = {{"c", 1, {1, 24, 17, 19}}};
  pool_only.graph.outputs = {{"y", 1, {}, false}};
  pool_only.graph.nodes.push_back({"MaxPool", {"c"}, {"y"}, pool_attributes, "pool"});

  auto optimized = create_session(model, 99, 3);
  auto reference = create_session(pool_only, 0);
  ASSERT_TRUE(reference && optimized);
  if (layout_applies()) {
    EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcMaxPool"), 1);
  }
  auto x = Tensor::allocate(DataType::kFloat32, Shape(shape.begin(), shape.end()));
  ASSERT_TRUE(x.has_value());
  float* data = x->data<float>();
  for (int64_t i = 0; i < x->numel(); ++i) data[i] = i % 3 == 0 ? 0.5f : -0.01f * static_cast<float>(i % 11);
  // The identity conv spreads a NaN to every channel of its pixel (0 * NaN): single NaN pixels, and a row of them so
  // that some windows hold only NaN.
  for (int64_t i = 0; i < 17 * 19; i += 23) data[i] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 5 * 19; i < 9 * 19; ++i) data[i] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Tensor> actual = run_session(*optimized, {*x});
  ASSERT_EQ(actual.size(), 2u);
  const std::vector<Tensor> expected = run_session(*reference, {actual[1]});
  ASSERT_EQ(expected.size(), 1u);
  const int64_t nan_outputs = expect_identical_floats(expected[0], actual[0]);
  EXPECT_GT(nan_outputs, 0);
}

TEST(NchwcLayout, MaxPoolMatchesExactlyWithNan) {
  // The 3x3 stride-2 pool of a ResNet stem (rows first inside the input), and a generic window.
  expect_blocked_max_pool_exact(
      {w::attr_ints("kernel_shape", {3, 3}), w::attr_ints("strides", {2, 2}), w::attr_ints("pads", {1, 1, 1, 1})});
  expect_blocked_max_pool_exact({w::attr_ints("kernel_shape", {3, 2}), w::attr_ints("strides", {2, 1}),
                                 w::attr_ints("pads", {1, 1, 2, 0}), w::attr_ints("dilations", {1, 2}),
                                 w::attr_int("ceil_mode", 1)});
}

// A blocked value that is also a graph output, or read by an op the pass does not convert, keeps its reorder.
TEST(NchwcLayout, PlainReadersKeepTheirReorder) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {1, 3, 16, 16}}};
  model.graph.outputs = {{"y", 1, {}, false}, {"c1", 1, {}, false}};
  add_conv(model, {"x", "c1", 3, 16, 3, 1, {1, 1, 1, 1}}, 41);
  add_conv(model, {"c1", "c2", 16, 16, 3, 1, {1, 1, 1, 1}}, 43);
  model.graph.nodes.push_back({"Flatten", {"c2"}, {"y"}, {}, "flatten"});
  auto optimized = optimize_and_compare(model, kConvTolerance);
  ASSERT_TRUE(optimized);
  if (!layout_applies()) return;
  EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 2);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcReorderOut"), 2);
}

// What the kernels do not take stays as it was: grouped (not depthwise), dilated, SAME-padded convs, a non-constant
// W, float64.
TEST(NchwcLayout, UnsupportedConvsStay) {
  const auto single = [](std::vector<w::Attribute> attributes, int64_t w_in = 8, int32_t type = 1) {
    w::Model model;
    model.graph.inputs = {{"x", type, {1, 8, 12, 12}}};
    model.graph.outputs = {{"y", type, {}, false}};
    const std::vector<float> values = weights(static_cast<size_t>(16 * w_in * 9), 51);
    model.graph.initializers.push_back(
        type == 1 ? w::float_tensor("W", {16, w_in, 3, 3}, values)
                  : w::double_tensor("W", {16, w_in, 3, 3}, std::vector<double>(values.begin(), values.end())));
    attributes.push_back(w::attr_ints("kernel_shape", {3, 3}));
    model.graph.nodes.push_back({"Conv", {"x", "W"}, {"y"}, std::move(attributes), "conv"});
    return model;
  };
  const w::Model models[] = {
      single({w::attr_int("group", 2)}, 4),
      single({w::attr_ints("dilations", {2, 2})}),
      single({w::attr_string("auto_pad", "SAME_UPPER")}),
      single({}, 8, 11),
  };
  for (const w::Model& model : models) {
    auto optimized = optimize_and_compare(model, 1e-5);
    ASSERT_TRUE(optimized);
    EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 0);
  }
  w::Model runtime_w = single({});
  runtime_w.graph.initializers.clear();
  runtime_w.graph.inputs.push_back({"W", 1, {16, 8, 3, 3}});
  auto optimized = optimize_and_compare(runtime_w, 1e-5);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 0);
}

// Depthwise convs (group = channels, W [C, 1, k, k]) run on the blocked layout after a pointwise conv: partial
// blocks, strides, asymmetric pads, windows wider than the image, and fused activations.
TEST(NchwcLayout, DepthwiseConvsMatch) {
  const struct {
    int64_t channels, height, width, kernel, stride;
    std::vector<int64_t> pads;
  } cases[] = {
      {16, 9, 30, 3, 1, {1, 1, 1, 1}},  {20, 13, 27, 3, 2, {1, 0, 2, 1}}, {48, 6, 5, 5, 1, {2, 2, 2, 2}},
      {33, 11, 40, 5, 2, {2, 2, 2, 2}}, {8, 4, 4, 3, 1, {0, 0, 0, 0}},    {24, 3, 2, 7, 1, {3, 3, 3, 3}},
      {19, 8, 21, 3, 1, {1, 1, 1, 1}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c.channels << " channels " << c.height << "x" << c.width << " k" << c.kernel
                                    << " s" << c.stride);
    w::Model model;
    model.graph.inputs = {{"x", 1, {2, 3, c.height, c.width}}};
    model.graph.outputs = {{"y", 1, {}, false}};
    add_conv(model, {"x", "p", 3, c.channels, 1, 1, {0, 0, 0, 0}}, 61);
    const int64_t k = c.kernel;
    model.graph.initializers.push_back(
        w::float_tensor("W_dw", {c.channels, 1, k, k}, weights(static_cast<size_t>(c.channels * k * k), 63)));
    model.graph.initializers.push_back(
        w::float_tensor("B_dw", {c.channels}, weights(static_cast<size_t>(c.channels), 65)));
    model.graph.nodes.push_back({"Conv",
                                 {"p", "W_dw", "B_dw"},
                                 {"d"},
                                 {w::attr_ints("kernel_shape", {k, k}), w::attr_ints("strides", {c.stride, c.stride}),
                                  w::attr_ints("pads", c.pads), w::attr_int("group", c.channels)},
                                 "depthwise"});
    // Relu in registers, Sigmoid over each stored tile.
    model.graph.nodes.push_back({c.channels % 2 == 0 ? "Relu" : "Sigmoid", {"d"}, {"y"}, {}, "activation"});
    for (int threads : {1, 3}) {
      auto optimized = optimize_and_compare(model, kConvTolerance, 99, threads);
      ASSERT_TRUE(optimized);
      if (!layout_applies()) continue;
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 2);
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcReorderOut"), 1);
    }
  }
}

// The elementwise tails of mobile CNNs stay on the blocked layout between convs: hard-swish spelled out (Add, Clip,
// Mul, Div) with a scalar affine after it, a squeeze-excitation branch (GlobalAveragePool, 1x1 convs, HardSigmoid,
// Mul by the [N, C, 1, 1] gate) and a per-channel constant scale. Only the network's output is reordered back.
TEST(NchwcLayout, ElementwiseChainsStayBlocked) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {2, 3, 19, 22}}};
  model.graph.outputs = {{"y", 1, {}, false}};
  model.graph.initializers.push_back(scalar("three", 3.0f));
  model.graph.initializers.push_back(scalar("zero", 0.0f));
  model.graph.initializers.push_back(scalar("six", 6.0f));
  model.graph.initializers.push_back(scalar("gain", 0.75f));
  model.graph.initializers.push_back(scalar("shift", 0.125f));
  model.graph.initializers.push_back(w::float_tensor("scale", {20, 1, 1}, weights(20, 71, 2.0f)));
  add_conv(model, {"x", "c", 3, 20, 3, 1, {1, 1, 1, 1}}, 73);
  model.graph.nodes.push_back({"Add", {"c", "three"}, {"c3"}, {}, "hs_add"});
  model.graph.nodes.push_back({"Clip", {"c3", "zero", "six"}, {"clipped"}, {}, "hs_clip"});
  model.graph.nodes.push_back({"Mul", {"c", "clipped"}, {"hs6"}, {}, "hs_mul"});
  model.graph.nodes.push_back({"Div", {"hs6", "six"}, {"hs"}, {}, "hs_div"});
  model.graph.nodes.push_back({"Mul", {"gain", "hs"}, {"scaled"}, {}, "affine_mul"});
  model.graph.nodes.push_back({"Add", {"scaled", "shift"}, {"a"}, {}, "affine_add"});
  model.graph.nodes.push_back({"GlobalAveragePool", {"a"}, {"pooled"}, {}, "se_pool"});
  add_conv(model, {"pooled", "squeezed", 20, 8, 1, 1, {0, 0, 0, 0}}, 75);
  model.graph.nodes.push_back({"Relu", {"squeezed"}, {"squeezed_r"}, {}, "se_relu"});
  add_conv(model, {"squeezed_r", "excited", 8, 20, 1, 1, {0, 0, 0, 0}}, 77);
  model.graph.nodes.push_back({"HardSigmoid", {"excited"}, {"gate"}, {}, "se_gate"});
  model.graph.nodes.push_back({"Mul", {"a", "gate"}, {"gated"}, {}, "se_mul"});
  model.graph.nodes.push_back({"Mul", {"gated", "scale"}, {"g"}, {}, "channel_scale"});
  add_conv(model, {"g", "y", 20, 12, 3, 2, {1, 1, 1, 1}}, 79);
  for (int threads : {1, 3}) {
    auto optimized = optimize_and_compare(model, kConvTolerance, 99, threads);
    ASSERT_TRUE(optimized);
    if (!layout_applies()) continue;
    EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 4);
    EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcReorderIn"), 0);
    EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcReorderOut"), 1);
  }
}

// A feature-pyramid step stays blocked: nearest Resize x2 of one branch (scales, and sizes in the second model),
// Concat on channels with another branch (the first input whole blocks, the second partial), and a conv after it.
TEST(NchwcLayout, ResizeAndConcatStayBlocked) {
  for (bool by_sizes : {false, true}) {
    SCOPED_TRACE(by_sizes ? "sizes" : "scales");
    w::Model model;
    model.graph.inputs = {{"x", 1, {1, 3, 12, 14}}};
    model.graph.outputs = {{"y", 1, {}, false}};
    model.graph.initializers.push_back(w::float_tensor("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f}));
    model.graph.initializers.push_back(w::int64_tensor("sizes", {4}, {1, 32, 12, 14}));
    add_conv(model, {"x", "wide", 3, 24, 3, 1, {1, 1, 1, 1}}, 91);
    add_conv(model, {"wide", "coarse", 24, 32, 3, 2, {1, 1, 1, 1}}, 93);
    if (by_sizes) {
      model.graph.nodes.push_back({"Resize", {"coarse", "", "", "sizes"}, {"up"}, {}, "upsample"});
    } else {
      model.graph.nodes.push_back({"Resize", {"coarse", "", "scales"}, {"up"}, {}, "upsample"});
    }
    model.graph.nodes.push_back({"Concat", {"up", "wide"}, {"joined"}, {w::attr_int("axis", 1)}, "concat"});
    add_conv(model, {"joined", "y", 56, 20, 3, 1, {1, 1, 1, 1}}, 95);
    for (int threads : {1, 3}) {
      auto optimized = optimize_and_compare(model, kConvTolerance, 99, threads);
      ASSERT_TRUE(optimized);
      if (!layout_applies()) continue;
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 3);
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcReorderIn"), 0);
      EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcReorderOut"), 1);
    }
  }
}

// Padding lanes of a blocked value must stay finite (conv weights of 0 would turn an infinite lane into NaN in real
// channels): 1 / c would put 1 / 0 there, so that Div stays plain and the next conv reorders its result.
TEST(NchwcLayout, ElementwiseOpsThatWouldMakePaddingInfiniteStayPlain) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {1, 3, 10, 12}}};
  model.graph.outputs = {{"y", 1, {}, false}};
  model.graph.initializers.push_back(scalar("one", 1.0f));
  add_conv(model, {"x", "c", 3, 20, 3, 1, {1, 1, 1, 1}}, 81);
  model.graph.nodes.push_back({"Div", {"one", "c"}, {"inverse"}, {}, "inverse"});
  add_conv(model, {"inverse", "y", 20, 16, 3, 1, {1, 1, 1, 1}}, 83);
  auto optimized = optimize_and_compare(model, 1e-3);
  ASSERT_TRUE(optimized);
  if (!layout_applies()) return;
  EXPECT_EQ(count_op(*optimized, "Div"), 1);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcReorderIn"), 1);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 2);
}

TEST(NchwcLayout, LevelTwoLeavesTheLayout) {
  auto optimized = optimize_and_compare(resnet(1, 32, 16), kConvTolerance, 2);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:NchwcConv"), 0);
}

}  // namespace
}  // namespace nxrt::optimizer_test
