#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

std::vector<double> random_doubles(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

enum class Kind { kMax, kAverage, kAverageIncludePad, kLp };

struct PoolCase {
  Shape x;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;
  std::vector<int64_t> dilations;
  bool ceil_mode;
};

// Naive 2-D pooling in double (explicit pads). Windows follow the ONNX reference: taps inside the input are
// read; count_include_pad counts taps inside input plus pads.
std::vector<double> reference_pool_2d(const std::vector<double>& x, const PoolCase& c, Kind kind, Shape& ys,
                                      std::vector<int64_t>* argmax) {
  const int64_t h = c.x[2], w = c.x[3];
  int64_t out[2];
  for (int d = 0; d < 2; ++d) {
    const int64_t in = c.x[2 + d];
    const int64_t span = in + c.pads[d] + c.pads[d + 2] - ((c.kernel[d] - 1) * c.dilations[d] + 1);
    out[d] = (c.ceil_mode ? (span + c.strides[d] - 1) / c.strides[d] : span / c.strides[d]) + 1;
    if (c.ceil_mode && (out[d] - 1) * c.strides[d] >= in + c.pads[d]) --out[d];
  }
  ys = {c.x[0], c.x[1], out[0], out[1]};
  std::vector<double> y;
  for (int64_t p = 0; p < c.x[0] * c.x[1]; ++p) {
    for (int64_t oh = 0; oh < out[0]; ++oh) {
      for (int64_t ow = 0; ow < out[1]; ++ow) {
        double best = -INFINITY, sum = 0;
        int64_t count = 0, padded = 0, at = -1;
        for (int64_t i = 0; i < c.kernel[0]; ++i) {
          for (int64_t j = 0; j < c.kernel[1]; ++j) {
            const int64_t ph = oh * c.strides[0] - c.pads[0] + i * c.dilations[0];
            const int64_t pw = ow * c.strides[1] - c.pads[1] + j * c.dilations[1];
            if (ph < h + c.pads[2] && pw < w + c.pads[3]) ++padded;
            if (ph < 0 || ph >= h || pw < 0 || pw >= w) continue;
            const double v = x[static_cast<size_t>(p * h * w + ph * w + pw)];
            if (v > best) {
              best = v;
              at = p * h * w + ph * w + pw;
            }
            sum += kind == Kind::kLp ? v * v : v;
            ++count;
          }
        }
        switch (kind) {
          case Kind::kMax:
            y.push_back(best);
            break;
          case Kind::kAverage:
            y.push_back(sum / count);
            break;
          case Kind::kAverageIncludePad:
            y.push_back(sum / padded);
            break;
          case Kind::kLp:
            y.push_back(std::sqrt(sum));
            break;
        }
        if (argmax != nullptr) argmax->push_back(at);
      }
    }
  }
  return y;
}

NodeBuilder pool_node(const char* op, const PoolCase& c, int opset) {
  NodeBuilder b(op, opset);
  b.attr_ints("kernel_shape", c.kernel).attr_ints("strides", c.strides).attr_ints("pads", c.pads);
  b.attr_ints("dilations", c.dilations).attr_int("ceil_mode", c.ceil_mode ? 1 : 0);
  return b;
}

class PoolMatchesReference : public ::testing::TestWithParam<std::tuple<PoolCase, int>> {};

TEST_P(PoolMatchesReference, AllKindsInDouble) {
  const auto& [c, threads] = GetParam();
  const auto x = random_doubles(static_cast<size_t>(shape_numel(c.x)), 5);
  Shape ys;
  std::vector<int64_t> argmax;
  const auto max_expected = reference_pool_2d(x, c, Kind::kMax, ys, &argmax);
  graph::Node max_node = pool_node("MaxPool", c, 12).node();
  max_node.outputs = {100, 101};
  auto max_out = run_kernel(max_node, {make_tensor(c.x, x)}, threads);
  ASSERT_TRUE(max_out.has_value()) << max_out.status().to_string();
  ASSERT_EQ((*max_out)[0].shape(), ys);
  EXPECT_EQ(to_vector<double>((*max_out)[0]), max_expected);
  EXPECT_EQ(to_vector<int64_t>((*max_out)[1]), argmax);
  // Without Indices MaxPool takes the vectorised runs (compile-time strides 1 and 2).
  EXPECT_EQ(to_vector<double>(run_one(pool_node("MaxPool", c, 12).node(), {make_tensor(c.x, x)}, threads)),
            max_expected);
  const auto max_float = to_vector<float>(
      run_one(pool_node("MaxPool", c, 12).node(), {make_tensor(c.x, std::vector<float>(x.begin(), x.end()))}, threads));
  EXPECT_EQ(max_float, std::vector<float>(max_expected.begin(), max_expected.end()));

  for (Kind kind : {Kind::kAverage, Kind::kAverageIncludePad, Kind::kLp}) {
    NodeBuilder b = pool_node(kind == Kind::kLp ? "LpPool" : "AveragePool", c, 19);
    if (kind == Kind::kAverageIncludePad) b.attr_int("count_include_pad", 1);
    const auto expected = reference_pool_2d(x, c, kind, ys, nullptr);
    Tensor y = run_one(b.node(), {make_tensor(c.x, x)}, threads);
    ASSERT_EQ(y.shape(), ys);
    const auto got = to_vector<double>(y);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], expected[i], 1e-12) << static_cast<int>(kind) << " at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PoolMatchesReference,
    ::testing::Combine(::testing::Values(PoolCase{{1, 1, 5, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true},
                                         PoolCase{{2, 3, 7, 6}, {3, 2}, {2, 1}, {1, 0, 2, 1}, {1, 1}, false},
                                         PoolCase{{1, 2, 9, 8}, {3, 3}, {2, 3}, {1, 1, 1, 1}, {2, 2}, true},
                                         PoolCase{{1, 1, 4, 4}, {3, 3}, {3, 3}, {1, 1, 1, 1}, {1, 1}, true},
                                         PoolCase{{3, 4, 12, 10}, {2, 3}, {1, 2}, {0, 1, 1, 0}, {3, 1}, false},
                                         PoolCase{{1, 3, 13, 17}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false},
                                         PoolCase{{1, 2, 16, 16}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true},
                                         PoolCase{{1, 2, 9, 33}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false}),
                       ::testing::Values(1, 3)));

TEST(MaxPool, ColumnMajorIndicesAndIntegerTypes) {
  graph::Node node = NodeBuilder("MaxPool", 12).attr_ints("kernel_shape", {2, 2}).attr_int("storage_order", 1).node();
  node.outputs = {100, 101};
  auto out = run_kernel(node, {make_tensor<int8_t>({1, 1, 2, 3}, {1, 9, -3, 4, 5, -128})});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(to_vector<int8_t>((*out)[0]), (std::vector<int8_t>{9, 9}));
  // 9 is at (h 0, w 1): column-major index 0 + 1 * 2.
  EXPECT_EQ(to_vector<int64_t>((*out)[1]), (std::vector<int64_t>{2, 2}));
  Tensor u8 = run_one(NodeBuilder("MaxPool", 12).attr_ints("kernel_shape", {3}).node(),
                      {make_tensor<uint8_t>({1, 1, 4}, {200, 3, 255, 0})});
  EXPECT_EQ(to_vector<uint8_t>(u8), (std::vector<uint8_t>{255, 255}));
  // int8 arrived with opset 12.
  EXPECT_FALSE(run_kernel(NodeBuilder("MaxPool", 11).attr_ints("kernel_shape", {3}).node(),
                          {make_tensor<uint8_t>({1, 1, 4}, {200, 3, 255, 0})})
                   .has_value());
}

TEST(MaxPool, NegativeInfinityAndHalfTypes) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor y = run_one(NodeBuilder("MaxPool", 12).attr_ints("kernel_shape", {2}).node(),
                     {make_tensor<float>({1, 1, 3}, {-inf, -inf, 1})});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{-inf, 1}));
  Tensor h = run_one(NodeBuilder("AveragePool", 19).attr_ints("kernel_shape", {2}).node(),
                     {make_half_tensor<Float16>({1, 1, 3}, {1, 2, 4})});
  EXPECT_EQ(to_float_vector(h), (std::vector<float>{1.5f, 3}));
  Tensor b = run_one(NodeBuilder("MaxPool", 22).attr_ints("kernel_shape", {2}).node(),
                     {make_half_tensor<BFloat16>({1, 1, 3}, {1, 2, 4})});
  EXPECT_EQ(to_float_vector(b), (std::vector<float>{2, 4}));
}

TEST(Pool, EmptyBatchAndSamePadding) {
  Tensor empty = run_one(NodeBuilder("AveragePool", 19).attr_ints("kernel_shape", {2, 2}).node(),
                         {make_tensor<float>({0, 3, 4, 4}, {})});
  EXPECT_EQ(empty.shape(), (Shape{0, 3, 3, 3}));
  Tensor same = run_one(NodeBuilder("AveragePool", 19)
                            .attr_ints("kernel_shape", {2})
                            .attr_ints("strides", {2})
                            .attr_string("auto_pad", "SAME_LOWER")
                            .node(),
                        {make_tensor<float>({1, 1, 5}, {1, 2, 3, 4, 5})});
  // out 3, one pad at the begin: windows {pad, 1}, {2, 3}, {4, 5}.
  EXPECT_EQ(to_vector<float>(same), (std::vector<float>{1, 2.5f, 4.5f}));
  EXPECT_FALSE(run_kernel(NodeBuilder("MaxPool", 12).node(), {make_tensor<float>({1, 1, 3}, {1, 2, 3})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("MaxPool", 12).attr_ints("kernel_shape", {2, 2}).node(),
                          {make_tensor<float>({1, 1, 3}, {1, 2, 3})})
                   .has_value());
}

// Rank > 3 takes the generic N-D path; a leading size-1 spatial dim must not change the 3-D result.
TEST(Pool, FourSpatialDimsMatchThree) {
  const auto x = random_doubles(2 * 3 * 5 * 4 * 6, 9);
  for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) {
    NodeBuilder three(op, 19);
    three.attr_ints("kernel_shape", {2, 3, 2}).attr_ints("strides", {1, 2, 2}).attr_ints("pads", {1, 0, 1, 0, 1, 1});
    three.attr_int("count_include_pad", 1).attr_int("ceil_mode", 1).attr_int("p", 3);
    NodeBuilder four(op, 19);
    four.attr_ints("kernel_shape", {1, 2, 3, 2}).attr_ints("strides", {1, 1, 2, 2});
    four.attr_ints("pads", {0, 1, 0, 1, 0, 0, 1, 1}).attr_int("count_include_pad", 1).attr_int("ceil_mode", 1);
    four.attr_int("p", 3);
    const auto a = to_vector<double>(run_one(three.node(), {make_tensor<double>({2, 3, 5, 4, 6}, x)}, 2));
    const auto b = to_vector<double>(run_one(four.node(), {make_tensor<double>({2, 3, 1, 5, 4, 6}, x)}, 2));
    ASSERT_EQ(a.size(), b.size()) << op;
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-12) << op << " at " << i;
  }
}

TEST(MaxPool, AllNegativeInfinityWindowStillReportsAnIndex) {
  const float inf = std::numeric_limits<float>::infinity();
  graph::Node node = NodeBuilder("MaxPool", 12).attr_ints("kernel_shape", {2}).node();
  node.outputs = {100, 101};
  auto out = run_kernel(node, {make_tensor<float>({1, 1, 3}, {-inf, -inf, 1})});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(to_vector<int64_t>((*out)[1]), (std::vector<int64_t>{0, 2}));
}

TEST(MaxPool, NanIsSkippedUnlessTheWholeWindowIsNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = make_tensor<float>({1, 1, 6}, {nan, 1, 2, nan, nan, nan});
  for (bool with_indices : {false, true}) {
    graph::Node node = NodeBuilder("MaxPool", 12).attr_ints("kernel_shape", {2}).node();
    if (with_indices) node.outputs = {100, 101};
    auto out = run_kernel(node, {x});
    ASSERT_TRUE(out.has_value());
    const auto y = to_vector<float>((*out)[0]);
    EXPECT_EQ(y[0], 1);
    EXPECT_EQ(y[1], 2);
    EXPECT_EQ(y[2], 2);
    EXPECT_TRUE(std::isnan(y[3]) && std::isnan(y[4]));
    if (with_indices) {
      EXPECT_EQ(to_vector<int64_t>((*out)[1]), (std::vector<int64_t>{1, 2, 2, 3, 4}));
    }
  }
  graph::Node node = NodeBuilder("MaxPool", 12).attr_ints("kernel_shape", {2}).node();
  node.outputs = {100, 101};
  auto lowest = run_kernel(node, {make_tensor<int8_t>({1, 1, 3}, {-128, -128, 5})});
  ASSERT_TRUE(lowest.has_value());
  EXPECT_EQ(to_vector<int8_t>((*lowest)[0]), (std::vector<int8_t>{-128, 5}));
  EXPECT_EQ(to_vector<int64_t>((*lowest)[1]), (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(std::isnan(to_vector<float>(
      run_one(NodeBuilder("GlobalMaxPool", 1).node(), {make_tensor<float>({1, 1, 2}, {nan, nan})}))[0]));
  EXPECT_EQ(
      to_vector<float>(run_one(NodeBuilder("GlobalMaxPool", 1).node(), {make_tensor<float>({1, 1, 2}, {nan, 3})})),
      (std::vector<float>{3}));
}

// The vectorised 3x3/2 runs keep the scalar rules: NaN is skipped unless the whole window is NaN, and of equal
// maxima (-0 and +0) the first in window order wins; the Indices path (scalar) gives the same values.
TEST(MaxPool, StrideTwoRunsKeepNanAndSignedZeroRules) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(2 * 11 * 14);
  std::mt19937 rng(7);
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t r = rng() % 5;
    x[i] = r == 0 ? nan : r == 1 ? -0.0f : r == 2 ? 0.0f : static_cast<float>(static_cast<int>(rng() % 7) - 6);
  }
  for (size_t i = 0; i < 14 * 4; ++i) x[i] = nan;  // all-NaN windows along the top rows of the first plane
  NodeBuilder b("MaxPool", 12);
  b.attr_ints("kernel_shape", {3, 3}).attr_ints("strides", {2, 2}).attr_ints("pads", {1, 1, 1, 1});
  graph::Node with_indices = b.node();
  with_indices.outputs = {100, 101};
  auto scalar = run_kernel(with_indices, {make_tensor<float>({1, 2, 11, 14}, x)});
  ASSERT_TRUE(scalar.has_value());
  const auto expected = to_vector<float>((*scalar)[0]);
  const auto got = to_vector<float>(run_one(b.node(), {make_tensor<float>({1, 2, 11, 14}, x)}, 2));
  ASSERT_EQ(got.size(), expected.size());
  int nans = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    nans += std::isnan(expected[i]) ? 1 : 0;
    ASSERT_EQ(std::isnan(got[i]), std::isnan(expected[i])) << i;
    if (!std::isnan(got[i])) {
      ASSERT_EQ(got[i], expected[i]) << i;
      ASSERT_EQ(std::signbit(got[i]), std::signbit(expected[i])) << i;
    }
  }
  EXPECT_GT(nans, 0);

  std::vector<uint8_t> bytes(x.size());
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(rng() % 256);
  auto byte_scalar = run_kernel(with_indices, {make_tensor<uint8_t>({1, 2, 11, 14}, bytes)});
  ASSERT_TRUE(byte_scalar.has_value());
  EXPECT_EQ(to_vector<uint8_t>(run_one(b.node(), {make_tensor<uint8_t>({1, 2, 11, 14}, bytes)})),
            to_vector<uint8_t>((*byte_scalar)[0]));
}

// MaxPool through the Indices path (scalar, window order), the reference of the vectorised paths.
std::vector<float> max_pool_by_indices_path(const NodeBuilder& b, const Tensor& input) {
  graph::Node with_indices = b.node();
  with_indices.outputs = {100, 101};
  auto scalar = run_kernel(with_indices, {input});
  EXPECT_TRUE(scalar.has_value());
  return scalar.has_value() ? to_vector<float>((*scalar)[0]) : std::vector<float>{};
}

// got equals expected element for element: NaN where it is NaN, else the same value and sign (-0 vs +0).
void expect_same_floats(const std::vector<float>& got, const std::vector<float>& expected, const std::string& context) {
  ASSERT_EQ(got.size(), expected.size()) << context;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::isnan(got[i]), std::isnan(expected[i])) << context << " at " << i;
    if (std::isnan(got[i])) continue;
    ASSERT_EQ(got[i], expected[i]) << context << " at " << i;
    ASSERT_EQ(std::signbit(got[i]), std::signbit(expected[i])) << context << " at " << i;
  }
}

// The vectorised 3x3/2 rows (16 outputs per vector, masked tails) against the Indices path, which never takes
// them: widths around one and two vectors, with and without pads, ceil_mode, NaN / signed zero / infinity taps.
TEST(MaxPool, VectorisedThreeByThreeStrideTwoMatchesIndicesPath) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(11);
  struct Window {
    std::vector<int64_t> pads;
    int64_t ceil_mode;
  };
  for (const int64_t in_w : {31, 33, 34, 35, 36, 65, 67, 70}) {
    for (const Window& win : {Window{{1, 1, 1, 1}, 0}, Window{{0, 0, 0, 0}, 0}, Window{{0, 1, 1, 0}, 1}}) {
      const int64_t in_h = 9;
      std::vector<float> x(static_cast<size_t>(3 * in_h * in_w));
      for (float& v : x) {
        const uint32_t r = rng() % 16;
        v = r == 0 ? nan : r == 1 ? -0.0f : r == 2 ? 0.0f : r == 3 ? -inf : std::uniform_real_distribution<float>(-4, 4)(rng);
      }
      NodeBuilder b("MaxPool", 12);
      b.attr_ints("kernel_shape", {3, 3}).attr_ints("strides", {2, 2}).attr_ints("pads", win.pads);
      b.attr_int("ceil_mode", win.ceil_mode);
      const Tensor input = make_tensor<float>({1, 3, in_h, in_w}, x);
      const auto expected = max_pool_by_indices_path(b, input);
      for (const int threads : {1, 2}) {
        expect_same_floats(to_vector<float>(run_one(b.node(), {input}, threads)), expected,
                           "in_w " + std::to_string(in_w));
      }
    }
  }
}

// The rows-first plane path (taken when a plane has no NaN and no -0) against the Indices path, over widths
// around the vector sizes, pads and ceil_mode; then planes with one NaN or one -0 placed late, which make the
// plane path give up after writing outputs, so the window-order fallback must rewrite all of them.
TEST(MaxPool, RowsFirstPlanePathMatchesIndicesPath) {
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(23);
  struct Window {
    std::vector<int64_t> pads;
    int64_t ceil_mode;
  };
  for (const int64_t in_w : {3, 5, 16, 31, 33, 34, 35, 64, 67, 112}) {
    for (const Window& win : {Window{{1, 1, 1, 1}, 0}, Window{{0, 0, 0, 0}, 0}, Window{{0, 1, 1, 0}, 1},
                              Window{{2, 2, 2, 2}, 0}, Window{{1, 0, 0, 1}, 1}}) {
      for (const int special : {0, 1, 2}) {  // 0 plain, 1 one NaN, 2 one -0 near the end of plane 1
        const int64_t in_h = 7;
        std::vector<float> x(static_cast<size_t>(2 * in_h * in_w));
        for (float& v : x) {
          const uint32_t r = rng() % 16;
          v = r == 0 ? 0.0f : r == 1 ? -inf : r == 2 ? inf : std::uniform_real_distribution<float>(-4, 4)(rng);
        }
        if (special != 0) x[x.size() - 2] = special == 1 ? std::numeric_limits<float>::quiet_NaN() : -0.0f;
        NodeBuilder b("MaxPool", 12);
        b.attr_ints("kernel_shape", {3, 3}).attr_ints("strides", {2, 2}).attr_ints("pads", win.pads);
        b.attr_int("ceil_mode", win.ceil_mode);
        const Tensor input = make_tensor<float>({1, 2, in_h, in_w}, x);
        expect_same_floats(to_vector<float>(run_one(b.node(), {input})), max_pool_by_indices_path(b, input),
                           "in_w " + std::to_string(in_w) + " special " + std::to_string(special));
      }
    }
  }
}

TEST(GlobalPool, ReducesEverySpatialDim) {
  const Tensor x = make_tensor<double>({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, 6});
  EXPECT_EQ(to_vector<double>(run_one(NodeBuilder("GlobalAveragePool", 1).node(), {x})), (std::vector<double>{2.5, 0}));
  EXPECT_EQ(to_vector<double>(run_one(NodeBuilder("GlobalMaxPool", 1).node(), {x})), (std::vector<double>{4, 6}));
  const auto lp = to_vector<double>(run_one(NodeBuilder("GlobalLpPool", 2).attr_int("p", 1).node(), {x}));
  EXPECT_EQ(lp, (std::vector<double>{10, 12}));
  const auto l2 = to_vector<double>(run_one(NodeBuilder("GlobalLpPool", 2).node(), {x}));
  EXPECT_NEAR(l2[0], std::sqrt(30.0), 1e-12);
  EXPECT_EQ(run_one(NodeBuilder("GlobalMaxPool", 1).node(), {x}).shape(), (Shape{1, 2, 1, 1}));
}

TEST(MaxUnpool, InvertsMaxPoolIndices) {
  graph::Node node = NodeBuilder("MaxPool", 12).attr_ints("kernel_shape", {2, 2}).attr_ints("strides", {2, 2}).node();
  node.outputs = {100, 101};
  const Tensor x = make_tensor<float>({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  auto pooled = run_kernel(node, {x});
  ASSERT_TRUE(pooled.has_value());
  Tensor y = run_one(NodeBuilder("MaxUnpool", 11).attr_ints("kernel_shape", {2, 2}).attr_ints("strides", {2, 2}).node(),
                     {(*pooled)[0], (*pooled)[1]});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 0, 0, 0, 0, 6, 0, 8, 0, 0, 0, 0, 0, 14, 0, 16}));
  auto bad = run_kernel(NodeBuilder("MaxUnpool", 11).attr_ints("kernel_shape", {2}).node(),
                        {make_tensor<float>({1, 1, 1}, {1}), make_tensor<int64_t>({1, 1, 1}, {7})});
  EXPECT_FALSE(bad.has_value());
}

TEST(RoiAlign, AverageOfBilinearSamples) {
  // A linear ramp is reproduced exactly by bilinear sampling: the bin mean is the ramp at the bin centre.
  std::vector<float> ramp;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) ramp.push_back(static_cast<float>(j));
  }
  Tensor y = run_one(NodeBuilder("RoiAlign", 16).attr_int("output_width", 2).attr_int("sampling_ratio", 2).node(),
                     {make_tensor<float>({1, 1, 4, 4}, ramp), make_tensor<float>({1, 4}, {1, 1, 3, 3}),
                      make_tensor<int64_t>({1}, {0})});
  ASSERT_EQ(y.shape(), (Shape{1, 1, 1, 2}));
  const auto got = to_vector<float>(y);
  EXPECT_NEAR(got[0], 1.0f, 1e-6);  // half_pixel: box [0.5, 2.5], bins centred at 1 and 2
  EXPECT_NEAR(got[1], 2.0f, 1e-6);
  EXPECT_FALSE(run_kernel(NodeBuilder("RoiAlign", 16).node(),
                          {make_tensor<float>({1, 1, 4, 4}, ramp), make_tensor<float>({1, 4}, {1, 1, 3, 3}),
                           make_tensor<int64_t>({1}, {1})})
                   .has_value());
}

TEST(RoiOps, RejectUnusableBoxes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor batch = make_tensor<int64_t>({1}, {0});
  EXPECT_FALSE(run_kernel(NodeBuilder("RoiAlign", 16).node(), {x, make_tensor<float>({1, 4}, {0, nan, 1, 1}), batch})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("RoiAlign", 16).node(), {x, make_tensor<float>({1, 4}, {0, 0, 1e30f, 1}), batch})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("MaxRoiPool", 1).attr_ints("pooled_shape", {1, 1}).node(),
                          {x, make_tensor<float>({1, 5}, {0, 0, nan, 1, 1})})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("MaxRoiPool", 1).attr_ints("pooled_shape", {1, 1}).node(),
                          {x, make_tensor<float>({1, 5}, {1, 0, 0, 1, 1})})
                   .has_value());
}

TEST(RoiAlign, SamplingGridIsBoundedPerRoi) {
  // Found by fuzz_kernel: an adaptive grid over a huge box wanted a 2.9 GB tap table per task. The table may
  // hold 2^22 points (256 MiB); a box needing more is INVALID_ARGUMENT, one needing fewer runs.
  const Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor batch = make_tensor<int64_t>({1}, {0});
  const auto roi_align = [&](float width, int64_t sampling_ratio) {
    return run_kernel(NodeBuilder("RoiAlign", 16).attr_int("sampling_ratio", sampling_ratio).node(),
                      {x, make_tensor<float>({1, 4}, {0, 0, width, 1}), batch});
  };
  auto too_many = roi_align(3.0e6f, 0);  // 1 output bin of ceil(3e6 + 1) x 2 points
  EXPECT_FALSE(too_many.has_value());
  EXPECT_NE(too_many.status().message().find("too many sampling points"), std::string::npos);
  auto ratio = run_kernel(NodeBuilder("RoiAlign", 16).attr_int("sampling_ratio", 4096).node(),
                          {x, make_tensor<float>({1, 4}, {0, 0, 1, 1}), batch});
  EXPECT_FALSE(ratio.has_value());  // 4096^2 = 2^24 points per bin
  EXPECT_TRUE(roi_align(1000.0f, 0).has_value());
}

TEST(MaxRoiPool, MaxPerBin) {
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  Tensor y = run_one(NodeBuilder("MaxRoiPool", 1).attr_ints("pooled_shape", {2, 2}).node(),
                     {make_tensor<float>({1, 1, 4, 4}, x), make_tensor<float>({1, 5}, {0, 0, 0, 3, 3})});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{5, 7, 13, 15}));
}

}  // namespace
}  // namespace nxrt::cpu::testing
