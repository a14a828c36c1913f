// Conv [+ activation] + MaxPool 3x3 stride 2 -> com.nxrt:FusedConvMaxPool: which graphs fuse, and that the fused
// kernel (striped on AVX-512 CPUs, the unfused pair elsewhere and on NaN / -0) gives bit-identical outputs to the
// unoptimised graph at 1 and 3 threads. Level 2 (extended): at level 3 the blocked-channel layout pass takes these
// graphs first on AVX-512 CPUs (nchwc_layout_test.cpp).
#include <cmath>
#include <limits>

#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "optimizer_test_util.h"

namespace nxrt::optimizer_test {
namespace {

constexpr int kExtended = 2;

struct StemCase {
  int64_t batch, in_channels, out_channels, in_h, in_w, kernel, stride, conv_pad;
  std::vector<int64_t> pool_pads;
  const char* activation;  // "" for a plain Conv
};

std::vector<float> weights(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  std::vector<float> values(count);
  for (float& v : values) v = dist(rng);
  return values;
}

w::Model stem_model(const StemCase& c) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {c.batch, c.in_channels, c.in_h, c.in_w}}};
  model.graph.outputs = {{"y", 1, {}, false}};
  const int64_t pad = c.conv_pad;
  model.graph.initializers = {
      w::float_tensor("W", {c.out_channels, c.in_channels, c.kernel, c.kernel},
                      weights(static_cast<size_t>(c.out_channels * c.in_channels * c.kernel * c.kernel), 3)),
      w::float_tensor("B", {c.out_channels}, weights(static_cast<size_t>(c.out_channels), 4))};
  const std::string conv_out = *c.activation ? "c" : "a";
  model.graph.nodes = {{"Conv",
                        {"x", "W", "B"},
                        {conv_out},
                        {w::attr_ints("kernel_shape", {c.kernel, c.kernel}),
                         w::attr_ints("strides", {c.stride, c.stride}), w::attr_ints("pads", {pad, pad, pad, pad})},
                        "conv"}};
  if (*c.activation) model.graph.nodes.push_back({c.activation, {"c"}, {"a"}, {}, "act"});
  model.graph.nodes.push_back({"MaxPool",
                               {"a"},
                               {"y"},
                               {w::attr_ints("kernel_shape", {3, 3}), w::attr_ints("strides", {2, 2}),
                                w::attr_ints("pads", c.pool_pads)},
                               "pool"});
  return model;
}

// The pass fuses only where the fused kernel has its fused path (the avx2 tier and above); below, Conv and MaxPool
// stay apart.
bool fusion_expected() {
  return cpu::find_kernel("com.nxrt", "FusedConvMaxPool", 1) != nullptr && cpu::cpu_isa_at_least(cpu::CpuIsa::kAvx2);
}

TEST(ConvMaxPoolFusion, StemShapesFuseAndMatchExactly) {
  const StemCase cases[] = {
      {1, 3, 32, 120, 120, 7, 2, 3, {1, 1, 1, 1}, "Relu"},  // ResNet stem: several stripes at 1 and 3 threads
      {2, 3, 16, 45, 61, 7, 2, 3, {1, 1, 1, 1}, "Relu"},    // batch 2, odd sizes, channels off the 8-block
      {1, 4, 9, 33, 40, 3, 1, 1, {0, 1, 1, 0}, ""},         // plain Conv, asymmetric pool pads
      {1, 2, 8, 38, 50, 5, 2, 2, {0, 0, 0, 0}, "LeakyRelu"},
  };
  for (const StemCase& c : cases) {
    for (int threads : {1, 3}) {
      SCOPED_TRACE(testing::Message() << "in " << c.in_h << "x" << c.in_w << " threads " << threads);
      const w::Model model = stem_model(c);
      auto reference = create_session(model, 0);
      auto optimized = create_session(model, kExtended, threads);
      ASSERT_TRUE(reference && optimized);
      if (fusion_expected()) {
        EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"com.nxrt:FusedConvMaxPool"}));
      } else {
        EXPECT_EQ(count_op(*optimized, "com.nxrt:FusedConvMaxPool"), 0);
      }
      expect_same_outputs(*reference, *optimized, 0.0);
    }
  }
}

// NaN and -0 make MaxPool's window order matter: the fused kernel must fall back and still agree exactly.
TEST(ConvMaxPoolFusion, NanAndNegativeZeroGiveTheUnfusedResult) {
  const StemCase c{1, 3, 16, 64, 64, 7, 2, 3, {1, 1, 1, 1}, ""};
  w::Model model = stem_model(c);
  // Zero bias: an input region of -0 sums to +-0.
  model.graph.initializers[1] = w::float_tensor("B", {c.out_channels}, std::vector<float>(16, 0.0f));
  for (float special : {std::numeric_limits<float>::quiet_NaN(), -0.0f}) {
    auto reference = create_session(model, 0);
    auto optimized = create_session(model, kExtended, 2);
    ASSERT_TRUE(reference && optimized);
    auto x = Tensor::allocate(DataType::kFloat32, {1, 3, 64, 64});
    ASSERT_TRUE(x.has_value());
    for (int64_t i = 0; i < x->numel(); ++i) x->data<float>()[i] = (i / 64) % 64 < 20 ? -0.0f : 0.01f * (i % 13);
    x->data<float>()[64 * 40 + 17] = special;
    const std::vector<Tensor> expected = run_session(*reference, {*x});
    const std::vector<Tensor> actual = run_session(*optimized, {*x});
    ASSERT_EQ(expected.size(), 1u);
    ASSERT_EQ(actual.size(), 1u);
    const int64_t nan_outputs = expect_identical_floats(expected[0], actual[0]);
    EXPECT_EQ(nan_outputs > 0, std::isnan(special));
  }
}

TEST(ConvMaxPoolFusion, OtherPoolsAndSharedConvOutputsStayUnfused) {
  StemCase c{1, 3, 8, 30, 30, 3, 2, 1, {2, 2, 2, 2}, "Relu"};  // pool pads of 2
  auto optimized = optimize_and_compare(stem_model(c), 0.0, kExtended);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:FusedConvMaxPool"), 0);

  c.pool_pads = {1, 1, 1, 1};
  w::Model shared = stem_model(c);
  shared.graph.outputs.push_back({"a", 1, {}, false});  // the activation output is also a graph output
  optimized = optimize_and_compare(shared, 0.0, kExtended);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:FusedConvMaxPool"), 0);

  w::Model two_by_two = stem_model(c);
  two_by_two.graph.nodes.back().attributes[0] = w::attr_ints("kernel_shape", {2, 2});
  two_by_two.graph.nodes.back().attributes[2] = w::attr_ints("pads", {0, 0, 0, 0});
  optimized = optimize_and_compare(two_by_two, 0.0, kExtended);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:FusedConvMaxPool"), 0);
}

// FusedConv runs a 3x3 stride-1 conv of 16+ channels with Winograd; the fused kernel's striped path is the
// direct one, so such a conv keeps its own node (and its Winograd speed and rounding).
TEST(ConvMaxPoolFusion, WinogradConvsStayUnfused) {
  const StemCase c{1, 16, 16, 30, 30, 3, 1, 1, {1, 1, 1, 1}, "Relu"};
  auto optimized = optimize_and_compare(stem_model(c), 0.0, kExtended);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:FusedConvMaxPool"), 0);
  EXPECT_EQ(count_op(*optimized, "MaxPool"), 1);
}

}  // namespace
}  // namespace nxrt::optimizer_test
