#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

std::vector<float> iota(size_t n, float start = 0.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// align_corners grid that samples every input pixel of an H x W image.
std::vector<float> identity_grid(int64_t h, int64_t w) {
  std::vector<float> g;
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      g.push_back(w == 1 ? -1.0f : -1.0f + 2.0f * static_cast<float>(x) / static_cast<float>(w - 1));
      g.push_back(h == 1 ? -1.0f : -1.0f + 2.0f * static_cast<float>(y) / static_cast<float>(h - 1));
    }
  }
  return g;
}

TEST(GridSample, IdentityGridReturnsInput) {
  const auto x = iota(2 * 3 * 4, 1.0f);
  for (const char* mode : {"linear", "nearest", "cubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      NodeBuilder b("GridSample", 20);
      b.attr_string("mode", mode).attr_string("padding_mode", padding).attr_int("align_corners", 1);
      Tensor out = run_one(b.node(), {make_tensor<float>({1, 2, 3, 4}, x), make_tensor<float>({1, 3, 4, 2},
                                                                                           identity_grid(3, 4))});
      ASSERT_EQ(out.shape(), (Shape{1, 2, 3, 4}));
      const auto y = to_vector<float>(out);
      for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i], 1e-5f) << mode << " " << padding << " " << i;
    }
  }
}

TEST(GridSample, PaddingModesOutsideTheImage) {
  const Tensor x = make_tensor<float>({1, 1, 1, 3}, {10, 20, 30});
  // Normalized 2 is pixel 4 when align_corners = 0, beyond the border at 2.5.
  const Tensor grid = make_tensor<float>({1, 1, 1, 2}, {2.0f, 0.0f});
  auto sample = [&](const char* padding) {
    NodeBuilder b("GridSample", 16);
    b.attr_string("mode", "bilinear").attr_string("padding_mode", padding);
    return to_vector<float>(run_one(b.node(), {x, grid}))[0];
  };
  EXPECT_FLOAT_EQ(sample("zeros"), 0.0f);
  EXPECT_FLOAT_EQ(sample("border"), 30.0f);
  // Pixel 4 reflects about 2.5 to pixel 1.
  EXPECT_FLOAT_EQ(sample("reflection"), 20.0f);
}

TEST(GridSample, VolumetricAndDoubleGrid) {
  const auto x = iota(8, 1.0f);
  std::vector<double> grid;
  for (int z = 0; z < 2; ++z) {
    for (int y = 0; y < 2; ++y) {
      for (int w = 0; w < 2; ++w) {
        grid.push_back(w * 2.0 - 1);
        grid.push_back(y * 2.0 - 1);
        grid.push_back(z * 2.0 - 1);
      }
    }
  }
  NodeBuilder b("GridSample", 22);
  b.attr_int("align_corners", 1);
  Tensor out = run_one(b.node(), {make_tensor<float>({1, 1, 2, 2, 2}, x), make_tensor<double>({1, 2, 2, 2, 3}, grid)});
  EXPECT_EQ(to_vector<float>(out), x);
  // The centre of the cube averages all eight corners.
  NodeBuilder centre("GridSample", 20);
  Tensor mid = run_one(centre.node(), {make_tensor<float>({1, 1, 2, 2, 2}, x),
                                       make_tensor<float>({1, 1, 1, 1, 3}, {0, 0, 0})});
  EXPECT_NEAR(to_vector<float>(mid)[0], 4.5f, 1e-6f);
}

TEST(GridSample, RejectsMismatchedGridAndBadAttributes) {
  NodeBuilder b("GridSample", 20);
  auto out = run_kernel(b.node(), {make_tensor<float>({1, 1, 2, 2}, iota(4)), make_tensor<float>({2, 1, 1, 2}, iota(4))});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("grid"), std::string::npos);
  NodeBuilder bad("GridSample", 20);
  bad.attr_string("padding_mode", "wrap");
  auto created = run_kernel(bad.node(), {make_tensor<float>({1, 1, 2, 2}, iota(4)),
                                         make_tensor<float>({1, 1, 1, 2}, {0, 0})});
  ASSERT_FALSE(created.has_value());
  EXPECT_EQ(created.status().code(), StatusCode::kInvalidGraph);
  // NaN coordinates must not crash; they count as outside.
  NodeBuilder zeros("GridSample", 20);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor y = run_one(zeros.node(), {make_tensor<float>({1, 1, 2, 2}, iota(4)), make_tensor<float>({1, 1, 1, 2}, {nan, nan})});
  EXPECT_EQ(y.numel(), 1);
}

TEST(GridSample, ThreadsAgreeAndHalfTypesWork) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.3f, 1.3f);
  std::vector<float> x(2 * 3 * 9 * 7);
  std::vector<float> grid(2 * 5 * 6 * 2);
  for (auto& v : x) v = dist(rng);
  for (auto& v : grid) v = dist(rng);
  for (const char* mode : {"linear", "nearest", "cubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      NodeBuilder b("GridSample", 20);
      b.attr_string("mode", mode).attr_string("padding_mode", padding);
      const std::vector<Tensor> inputs{make_tensor<float>({2, 3, 9, 7}, x), make_tensor<float>({2, 5, 6, 2}, grid)};
      Tensor one = run_one(b.node(), inputs, 1);
      Tensor four = run_one(b.node(), inputs, 4);
      EXPECT_EQ(to_vector<float>(one), to_vector<float>(four)) << mode << " " << padding;
      Tensor half = run_one(b.node(), {make_half_tensor<Float16>({2, 3, 9, 7}, x), make_tensor<float>({2, 5, 6, 2}, grid)});
      const auto want = to_vector<float>(one);
      const auto got = to_float_vector(half);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-2f) << mode << " " << padding;
    }
  }
}

TEST(AffineGrid, IdentityThetaGivesBaseGrid) {
  NodeBuilder b("AffineGrid", 20);
  b.attr_int("align_corners", 1);
  Tensor out = run_one(b.node(), {make_tensor<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0}),
                                  make_tensor<int64_t>({4}, {1, 1, 3, 4})});
  ASSERT_EQ(out.shape(), (Shape{1, 3, 4, 2}));
  const auto y = to_vector<float>(out);
  const auto want = identity_grid(3, 4);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-6f);
  NodeBuilder centred("AffineGrid", 20);
  Tensor half = run_one(centred.node(), {make_tensor<double>({1, 3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}),
                                         make_tensor<int64_t>({5}, {1, 1, 1, 1, 2})});
  EXPECT_EQ(to_vector<double>(half), (std::vector<double>{-0.5, 0, 0, 0.5, 0, 0}));
  auto bad = run_kernel(b.node(), {make_tensor<float>({1, 2, 3}, iota(6)), make_tensor<int64_t>({3}, {1, 1, 3})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("input 1 (size)"), std::string::npos);
}

TEST(Col2Im, OverlappingBlocksAccumulate) {
  // 1 channel, 1 x 3 image, 1 x 2 blocks with stride 1: two block positions overlap on the middle pixel.
  NodeBuilder b("Col2Im", 18);
  Tensor out = run_one(b.node(), {make_tensor<float>({1, 2, 2}, {1, 2, 10, 20}), make_tensor<int64_t>({2}, {1, 3}),
                                  make_tensor<int64_t>({2}, {1, 2})});
  ASSERT_EQ(out.shape(), (Shape{1, 1, 1, 3}));
  EXPECT_EQ(to_vector<float>(out), (std::vector<float>{1, 12, 20}));
  Tensor ints = run_one(b.node(), {make_tensor<int32_t>({1, 2, 2}, {1, 2, 10, 20}), make_tensor<int64_t>({2}, {1, 3}),
                                   make_tensor<int64_t>({2}, {1, 2})});
  EXPECT_EQ(to_vector<int32_t>(ints), (std::vector<int32_t>{1, 12, 20}));
  auto bad = run_kernel(b.node(), {make_tensor<float>({1, 2, 3}, iota(6)), make_tensor<int64_t>({2}, {1, 3}),
                                   make_tensor<int64_t>({2}, {1, 2})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(CenterCropPad, CropsAndPadsAroundTheCentre) {
  NodeBuilder b("CenterCropPad", 18);
  Tensor out = run_one(b.node(), {make_tensor<float>({3, 2}, iota(6, 1.0f)), make_tensor<int64_t>({2}, {1, 4})});
  ASSERT_EQ(out.shape(), (Shape{1, 4}));
  EXPECT_EQ(to_vector<float>(out), (std::vector<float>{0, 3, 4, 0}));
  NodeBuilder axes("CenterCropPad", 18);
  axes.attr_ints("axes", {-1});
  Tensor bools = run_one(axes.node(), {make_tensor<bool>({1, 2}, {true, true}), make_tensor<int32_t>({1}, {3})});
  EXPECT_EQ(to_vector<bool>(bools), (std::vector<bool>{true, true, false}));
  auto bad = run_kernel(axes.node(), {make_tensor<float>({1, 2}, {1, 2}), make_tensor<int64_t>({2}, {1, 1})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("input 1 (shape)"), std::string::npos);
  Tensor empty = run_one(b.node(), {make_tensor<float>({0, 2}, {}), make_tensor<int64_t>({2}, {2, 2})});
  EXPECT_EQ(to_vector<float>(empty), (std::vector<float>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace nxrt::cpu::testing
