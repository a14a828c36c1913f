#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

Tensor scales_tensor(std::vector<float> values) {
  const auto n = static_cast<int64_t>(values.size());
  return make_tensor<float>({n}, values);
}

Tensor sizes_tensor(std::vector<int64_t> values) {
  const auto n = static_cast<int64_t>(values.size());
  return make_tensor<int64_t>({n}, values);
}

std::vector<float> iota(size_t n, float start = 0.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

TEST(Resize, NearestUpsampleByTwo) {
  NodeBuilder b("Resize", 19);
  b.attr_string("mode", "nearest").attr_string("coordinate_transformation_mode", "asymmetric");
  Tensor out = run_one(b.node(), {make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor(),
                                  scales_tensor({1, 1, 2, 2})});
  EXPECT_EQ(out.shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(to_vector<float>(out),
            (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST(Resize, LinearAlignCornersMatchesFormula) {
  NodeBuilder b("Resize", 13);
  b.attr_string("mode", "linear").attr_string("coordinate_transformation_mode", "align_corners");
  Tensor out = run_one(b.node(), {make_tensor<float>({1, 4}, {0, 3, 6, 9}), Tensor(), Tensor(), sizes_tensor({1, 7})});
  const auto y = to_vector<float>(out);
  ASSERT_EQ(y.size(), 7u);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], 1.5f * static_cast<float>(i), 1e-5f);
}

TEST(Resize, IdentityScalesReturnInput) {
  const auto x = iota(2 * 3 * 5, -7.0f);
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    for (const char* coordinates : {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"}) {
      NodeBuilder b("Resize", 19);
      b.attr_string("mode", mode).attr_string("coordinate_transformation_mode", coordinates);
      Tensor out = run_one(b.node(), {make_tensor<float>({2, 3, 5}, x), Tensor(), scales_tensor({1, 1, 1})});
      EXPECT_EQ(to_vector<float>(out), x) << mode << " " << coordinates;
    }
  }
  NodeBuilder b("Resize", 19);
  b.attr_string("mode", "cubic");
  Tensor out = run_one(b.node(), {make_tensor<int32_t>({1, 3}, {5, -6, 7}), Tensor(), scales_tensor({1, 1})});
  EXPECT_EQ(to_vector<int32_t>(out), (std::vector<int32_t>{5, -6, 7}));
}

TEST(Resize, ZeroSizeDimensions) {
  NodeBuilder b("Resize", 19);
  b.attr_string("mode", "linear");
  Tensor out = run_one(b.node(), {make_tensor<float>({0, 3}, {}), Tensor(), scales_tensor({1, 2})});
  EXPECT_EQ(out.shape(), (Shape{0, 6}));
  Tensor shrunk = run_one(b.node(), {make_tensor<float>({2, 3}, iota(6)), Tensor(), Tensor(), sizes_tensor({2, 0})});
  EXPECT_EQ(shrunk.shape(), (Shape{2, 0}));
  auto bad = run_kernel(b.node(), {make_tensor<float>({0, 3}, {}), Tensor(), Tensor(), sizes_tensor({2, 3})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(Resize, DoublePrecisionLinearIsExactOnRamps) {
  // Linear interpolation of a linear function reproduces it; f64 must keep ~1e-12 accuracy.
  const int64_t n = 37;
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = 1e6 + 0.1 * static_cast<double>(i);
  NodeBuilder b("Resize", 19);
  b.attr_string("mode", "linear").attr_string("coordinate_transformation_mode", "align_corners");
  Tensor out = run_one(b.node(), {make_tensor<double>({1, n}, x), Tensor(), Tensor(), sizes_tensor({1, 2 * n - 1})});
  const auto y = to_vector<double>(out);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], 1e6 + 0.05 * static_cast<double>(i), 1e-9);
}

TEST(Resize, InvalidScalesAreRejected) {
  NodeBuilder b("Resize", 19);
  b.attr_string("mode", "linear");
  const Tensor x = make_tensor<float>({1, 4}, iota(4));
  for (float bad : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    auto out = run_kernel(b.node(), {x, Tensor(), scales_tensor({1, bad})});
    ASSERT_FALSE(out.has_value()) << bad;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("scales"), std::string::npos) << out.status().message();
  }
  auto wrong_count = run_kernel(b.node(), {x, Tensor(), scales_tensor({2})});
  ASSERT_FALSE(wrong_count.has_value());
  EXPECT_NE(wrong_count.status().message().find("input 2 (scales)"), std::string::npos);
}

TEST(Resize, InvalidSizesAreRejected) {
  NodeBuilder b("Resize", 19);
  const Tensor x = make_tensor<float>({1, 4}, iota(4));
  auto negative = run_kernel(b.node(), {x, Tensor(), Tensor(), sizes_tensor({1, -3})});
  ASSERT_FALSE(negative.has_value());
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(negative.status().message().find("input 3 (sizes)"), std::string::npos);
  auto wrong_count = run_kernel(b.node(), {x, Tensor(), Tensor(), sizes_tensor({1, 2, 3})});
  ASSERT_FALSE(wrong_count.has_value());
  EXPECT_NE(wrong_count.status().message().find("sizes"), std::string::npos);
  auto both = run_kernel(b.node(), {x, Tensor(), scales_tensor({1, 2}), sizes_tensor({1, 8})});
  ASSERT_FALSE(both.has_value());
  EXPECT_EQ(both.status().code(), StatusCode::kInvalidArgument);
  auto neither = run_kernel(b.node(), {x});
  ASSERT_FALSE(neither.has_value());
  EXPECT_EQ(neither.status().code(), StatusCode::kInvalidArgument);
}

TEST(Resize, BadAttributesFailAtCreate) {
  for (auto [name, value] : {std::pair<const char*, const char*>{"mode", "area"},
                             {"coordinate_transformation_mode", "corners"},
                             {"nearest_mode", "up"},
                             {"keep_aspect_ratio_policy", "fit"}}) {
    NodeBuilder b("Resize", 19);
    b.attr_string(name, value);
    auto out = run_kernel(b.node(), {make_tensor<float>({1, 2}, {1, 2}), Tensor(), scales_tensor({1, 2})});
    ASSERT_FALSE(out.has_value()) << name;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidGraph);
    EXPECT_NE(out.status().message().find(name), std::string::npos);
  }
}

TEST(Resize, CropAndResizeExtrapolates) {
  NodeBuilder b("Resize", 19);
  b.attr_string("mode", "linear")
      .attr_string("coordinate_transformation_mode", "tf_crop_and_resize")
      .attr_float("extrapolation_value", 42.0f);
  const Tensor roi = make_tensor<float>({4}, {0, -0.5f, 1, 1.5f});
  Tensor out = run_one(b.node(), {make_tensor<float>({1, 3}, {0, 10, 20}), roi, Tensor(), sizes_tensor({1, 5})});
  // x_original = -1 + 1 * i over [0, 2]: the ends fall outside.
  EXPECT_EQ(to_vector<float>(out), (std::vector<float>{42, 0, 10, 20, 42}));
}

TEST(Resize, AntialiasKeepsConstantsAndAveragesDownsampling) {
  NodeBuilder b("Resize", 18);
  b.attr_string("mode", "linear").attr_int("antialias", 1);
  Tensor flat = run_one(b.node(), {make_tensor<float>({1, 8}, std::vector<float>(8, 3.0f)), Tensor(),
                                   scales_tensor({1, 0.25f})});
  for (float v : to_vector<float>(flat)) EXPECT_NEAR(v, 3.0f, 1e-6f);
  Tensor ramp = run_one(b.node(), {make_tensor<float>({1, 8}, iota(8)), Tensor(), scales_tensor({1, 0.5f})});
  // Half-pixel centres of the 4 outputs are 0.5, 2.5, 4.5, 6.5; a triangle of half-width 2 averages a ramp
  // to its centre except where the edge is clamped.
  const auto y = to_vector<float>(ramp);
  EXPECT_NEAR(y[1], 2.5f, 1e-5f);
  EXPECT_NEAR(y[2], 4.5f, 1e-5f);
}

TEST(Resize, KeepAspectRatioPolicy) {
  NodeBuilder b("Resize", 18);
  b.attr_string("keep_aspect_ratio_policy", "not_larger").attr_ints("axes", {1, 2});
  Tensor out = run_one(b.node(), {make_tensor<float>({1, 2, 4}, iota(8)), Tensor(), Tensor(), sizes_tensor({8, 4})});
  EXPECT_EQ(out.shape(), (Shape{1, 2, 4}));
  NodeBuilder larger("Resize", 18);
  larger.attr_string("keep_aspect_ratio_policy", "not_smaller").attr_ints("axes", {-2, -1});
  Tensor big =
      run_one(larger.node(), {make_tensor<float>({1, 2, 4}, iota(8)), Tensor(), Tensor(), sizes_tensor({8, 4})});
  EXPECT_EQ(big.shape(), (Shape{1, 8, 16}));
}

TEST(Resize, HalfAndIntegerTypes) {
  NodeBuilder b("Resize", 19);
  b.attr_string("mode", "linear").attr_string("coordinate_transformation_mode", "align_corners");
  Tensor half = run_one(b.node(), {make_half_tensor<Float16>({1, 2}, {0, 4}), Tensor(), Tensor(), sizes_tensor({1, 5})});
  EXPECT_EQ(to_float_vector(half), (std::vector<float>{0, 1, 2, 3, 4}));
  Tensor brain =
      run_one(b.node(), {make_half_tensor<BFloat16>({1, 2}, {0, 4}), Tensor(), Tensor(), sizes_tensor({1, 5})});
  EXPECT_EQ(to_float_vector(brain), (std::vector<float>{0, 1, 2, 3, 4}));
  Tensor bytes = run_one(b.node(), {make_tensor<uint8_t>({1, 2}, {0, 255}), Tensor(), Tensor(), sizes_tensor({1, 3})});
  EXPECT_EQ(to_vector<uint8_t>(bytes), (std::vector<uint8_t>{0, 128, 255}));
  NodeBuilder cubic("Resize", 19);
  cubic.attr_string("mode", "cubic");
  Tensor clamped = run_one(cubic.node(), {make_tensor<uint8_t>({1, 4}, {0, 255, 0, 255}), Tensor(),
                                          scales_tensor({1, 2})});
  EXPECT_EQ(clamped.shape(), (Shape{1, 8}));  // overshoot saturates instead of wrapping
}

TEST(Resize, ThreadsAgree) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(2 * 3 * 40 * 33);
  for (auto& v : x) v = dist(rng);
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    NodeBuilder b("Resize", 19);
    b.attr_string("mode", mode);
    const std::vector<Tensor> inputs{make_tensor<float>({2, 3, 40, 33}, x), Tensor(), scales_tensor({1, 1, 1.7f, 0.6f})};
    Tensor one = run_one(b.node(), inputs, 1);
    Tensor four = run_one(b.node(), inputs, 4);
    EXPECT_EQ(to_vector<float>(one), to_vector<float>(four)) << mode;
  }
}

TEST(Upsample, AttributeAndInputScales) {
  NodeBuilder old("Upsample", 7);
  old.attr_floats("scales", {1, 2});
  Tensor a = run_one(old.node(), {make_tensor<float>({1, 2}, {1, 2})});
  EXPECT_EQ(to_vector<float>(a), (std::vector<float>{1, 1, 2, 2}));
  NodeBuilder now("Upsample", 9);
  now.attr_string("mode", "linear");
  Tensor b = run_one(now.node(), {make_tensor<float>({1, 2}, {0, 4}), scales_tensor({1, 2})});
  EXPECT_EQ(to_vector<float>(b), (std::vector<float>{0, 2, 4, 4}));
  NodeBuilder missing("Upsample", 7);
  auto out = run_kernel(missing.node(), {make_tensor<float>({1, 2}, {1, 2})});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidGraph);
}

}  // namespace
}  // namespace nxrt::cpu::testing
