#include <cmath>
#include <cstdint>
#include <random>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

std::vector<double> random_doubles(size_t n, uint32_t seed, double lo = -3.0, double hi = 3.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<float> to_floats(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

graph::Node with_outputs(graph::Node node, int count) {
  node.outputs.clear();
  for (int i = 0; i < count; ++i) node.outputs.push_back(100 + i);
  return node;
}

// Per-row (mean, population variance) of `rows` contiguous rows of length `len`.
std::pair<double, double> moments(const double* x, int64_t len) {
  double mean = 0;
  for (int64_t i = 0; i < len; ++i) mean += x[i];
  mean /= static_cast<double>(len);
  double var = 0;
  for (int64_t i = 0; i < len; ++i) var += (x[i] - mean) * (x[i] - mean);
  return {mean, var / static_cast<double>(len)};
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at " << i;
}

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out;
  visit_dtype<FloatTypes>(t.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < t.numel(); ++i) out.push_back(static_cast<double>(static_cast<float>(t.data<T>()[i])));
  });
  if (t.dtype() == DataType::kFloat64) out = to_vector<double>(t);
  return out;
}

TEST(LayerNormalization, MatchesDoubleReferenceWithNegativeAxisAndStats) {
  const Shape shape{2, 3, 4, 5};
  const auto x = random_doubles(120, 1);
  const auto scale = random_doubles(20, 2);
  const auto bias = random_doubles(20, 3);
  for (int64_t axis : {2, -2}) {
    auto node = with_outputs(NodeBuilder("LayerNormalization", 17).attr_int("axis", axis).attr_float("epsilon", 1e-3f)
                                 .node(), 3);
    auto out = run_kernel(node, {make_tensor(shape, x), make_tensor<double>({4, 5}, scale),
                                 make_tensor<double>({4, 5}, bias)});
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    std::vector<double> want(120);
    std::vector<double> want_mean(6);
    std::vector<double> want_inv(6);
    for (int64_t r = 0; r < 6; ++r) {
      const auto [mean, var] = moments(x.data() + r * 20, 20);
      want_mean[r] = mean;
      want_inv[r] = 1 / std::sqrt(var + 1e-3f);
      for (int64_t i = 0; i < 20; ++i) {
        want[r * 20 + i] = (x[r * 20 + i] - mean) * want_inv[r] * scale[i] + bias[i];
      }
    }
    expect_near_all(to_vector<double>((*out)[0]), want, 1e-12);
    EXPECT_EQ((*out)[1].dtype(), DataType::kFloat32);
    EXPECT_EQ((*out)[1].shape(), (Shape{2, 3, 1, 1}));
    expect_near_all(as_doubles((*out)[1]), want_mean, 1e-6);
    expect_near_all(as_doubles((*out)[2]), want_inv, 1e-6);
  }
}

TEST(LayerNormalization, BroadcastScaleHalfTypesAndNoBias) {
  const auto x = random_doubles(24, 4);
  std::vector<double> want(24);
  for (int64_t r = 0; r < 4; ++r) {
    const auto [mean, var] = moments(x.data() + r * 6, 6);
    for (int64_t i = 0; i < 6; ++i) want[r * 6 + i] = (x[r * 6 + i] - mean) / std::sqrt(var + 1e-5) * 2.0;
  }
  auto node = NodeBuilder("LayerNormalization", 17).attr_int("axis", 1).node();
  Tensor f32 = run_one(node, {make_tensor<float>({4, 6}, to_floats(x)), make_tensor<float>({1}, {2.0f})});
  expect_near_all(as_doubles(f32), want, 1e-5);
  Tensor f16 = run_one(node, {make_half_tensor<Float16>({4, 6}, to_floats(x)), make_half_tensor<Float16>({1}, {2.0f})});
  expect_near_all(as_doubles(f16), want, 1e-2);
  Tensor bf16 =
      run_one(node, {make_half_tensor<BFloat16>({4, 6}, to_floats(x)), make_half_tensor<BFloat16>({1}, {2.0f})});
  expect_near_all(as_doubles(bf16), want, 5e-2);
}

TEST(LayerNormalization, ZeroSizeAndBadInputs) {
  auto node = NodeBuilder("LayerNormalization", 17).node();
  Tensor empty = run_one(node, {make_tensor<float>({0, 3}, {}), make_tensor<float>({3}, {1, 1, 1})});
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
  auto bad_scale = run_kernel(node, {make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}), make_tensor<float>({2}, {1, 1})});
  EXPECT_EQ(bad_scale.status().code(), StatusCode::kInvalidArgument);
  auto bad_axis = run_kernel(NodeBuilder("LayerNormalization", 17).attr_int("axis", 2).node(),
                             {make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}), make_tensor<float>({3}, {1, 1, 1})});
  EXPECT_EQ(bad_axis.status().code(), StatusCode::kInvalidArgument);
  auto bad_stash = run_kernel(NodeBuilder("LayerNormalization", 17).attr_int("stash_type", 7).node(),
                              {make_tensor<float>({1, 1}, {1}), make_tensor<float>({1}, {1})});
  EXPECT_EQ(bad_stash.status().code(), StatusCode::kInvalidGraph);
}

TEST(RMSNormalization, MatchesDoubleReference) {
  const auto x = random_doubles(30, 5);
  const auto scale = random_doubles(10, 6);
  std::vector<double> want(30);
  for (int64_t r = 0; r < 3; ++r) {
    double sq = 0;
    for (int64_t i = 0; i < 10; ++i) sq += x[r * 10 + i] * x[r * 10 + i];
    const double inv = 1 / std::sqrt(sq / 10 + 1e-5f);
    for (int64_t i = 0; i < 10; ++i) want[r * 10 + i] = x[r * 10 + i] * inv * scale[i];
  }
  Tensor y = run_one(NodeBuilder("RMSNormalization", 23).attr_int("axis", -1).node(),
                     {make_tensor<double>({3, 10}, x), make_tensor<double>({10}, scale)});
  expect_near_all(to_vector<double>(y), want, 1e-12);
}

std::vector<double> group_norm_reference(const std::vector<double>& x, int64_t n, int64_t c, int64_t inner,
                                         int64_t groups, const std::vector<double>& scale,
                                         const std::vector<double>& bias, bool per_channel, double eps) {
  std::vector<double> y(x.size());
  const int64_t cg = c / groups;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t g = 0; g < groups; ++g) {
      const double* base = x.data() + (b * c + g * cg) * inner;
      const auto [mean, var] = moments(base, cg * inner);
      for (int64_t k = 0; k < cg; ++k) {
        const size_t p = static_cast<size_t>(per_channel ? g * cg + k : g);
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = (b * c + g * cg + k) * inner + i;
          y[at] = (x[at] - mean) / std::sqrt(var + eps) * scale[p] + bias[p];
        }
      }
    }
  }
  return y;
}

TEST(GroupNormalization, Opset18PerGroupAndOpset21PerChannel) {
  const auto x = random_doubles(2 * 6 * 5, 7);
  const auto scale6 = random_doubles(6, 8);
  const auto bias6 = random_doubles(6, 9);
  const std::vector<double> scale3(scale6.begin(), scale6.begin() + 3);
  const std::vector<double> bias3(bias6.begin(), bias6.begin() + 3);
  Tensor y18 = run_one(NodeBuilder("GroupNormalization", 18).attr_int("num_groups", 3).node(),
                       {make_tensor<double>({2, 6, 5}, x), make_tensor<double>({3}, scale3),
                        make_tensor<double>({3}, bias3)});
  expect_near_all(to_vector<double>(y18), group_norm_reference(x, 2, 6, 5, 3, scale3, bias3, false, 1e-5f), 1e-12);
  Tensor y21 = run_one(NodeBuilder("GroupNormalization", 21).attr_int("num_groups", 3).node(),
                       {make_tensor<double>({2, 6, 5}, x), make_tensor<double>({6}, scale6),
                        make_tensor<double>({6}, bias6)});
  expect_near_all(to_vector<double>(y21), group_norm_reference(x, 2, 6, 5, 3, scale6, bias6, true, 1e-5f), 1e-12);
  auto indivisible = run_kernel(NodeBuilder("GroupNormalization", 21).attr_int("num_groups", 4).node(),
                                {make_tensor<double>({2, 6, 5}, x), make_tensor<double>({6}, scale6),
                                 make_tensor<double>({6}, bias6)});
  EXPECT_EQ(indivisible.status().code(), StatusCode::kInvalidArgument);
  auto wrong_params = run_kernel(NodeBuilder("GroupNormalization", 21).attr_int("num_groups", 3).node(),
                                 {make_tensor<double>({2, 6, 5}, x), make_tensor<double>({3}, scale3),
                                  make_tensor<double>({3}, bias3)});
  EXPECT_EQ(wrong_params.status().code(), StatusCode::kInvalidArgument);
  auto missing = run_kernel(NodeBuilder("GroupNormalization", 21).node(),
                            {make_tensor<double>({2, 6, 5}, x), make_tensor<double>({6}, scale6),
                             make_tensor<double>({6}, bias6)});
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidGraph);
}

TEST(InstanceNormalization, MatchesReferenceAndZeroSize) {
  const auto x = random_doubles(2 * 3 * 7, 10);
  const auto scale = random_doubles(3, 11);
  const auto bias = random_doubles(3, 12);
  Tensor y = run_one(NodeBuilder("InstanceNormalization", 6).attr_float("epsilon", 1e-2f).node(),
                     {make_tensor<double>({2, 3, 7}, x), make_tensor<double>({3}, scale),
                      make_tensor<double>({3}, bias)});
  expect_near_all(to_vector<double>(y), group_norm_reference(x, 2, 3, 7, 3, scale, bias, true, 1e-2f), 1e-12);
  Tensor empty = run_one(NodeBuilder("InstanceNormalization", 22).node(),
                         {make_tensor<float>({0, 3, 2}, {}), make_tensor<float>({3}, {1, 1, 1}),
                          make_tensor<float>({3}, {0, 0, 0})});
  EXPECT_EQ(empty.shape(), (Shape{0, 3, 2}));
  Tensor no_channels = run_one(NodeBuilder("InstanceNormalization", 6).node(),
                               {make_tensor<float>({1, 0, 2}, {}), make_tensor<float>({0}, {}),
                                make_tensor<float>({0}, {})});
  EXPECT_EQ(no_channels.shape(), (Shape{1, 0, 2}));
  auto rank1 = run_kernel(NodeBuilder("InstanceNormalization", 6).node(),
                          {make_tensor<float>({3}, {1, 2, 3}), make_tensor<float>({3}, {1, 1, 1}),
                           make_tensor<float>({3}, {0, 0, 0})});
  EXPECT_EQ(rank1.status().code(), StatusCode::kInvalidArgument);
}

TEST(BatchNormalization, InferenceAndTrainingMode) {
  const auto x = random_doubles(3 * 2 * 4, 13);
  const std::vector<double> scale{1.5, -0.5}, bias{0.25, 1.0}, mean{0.1, -0.2}, var{0.8, 1.3};
  const auto inputs = [&]() {
    return std::vector<Tensor>{make_tensor<double>({3, 2, 4}, x), make_tensor<double>({2}, scale),
                               make_tensor<double>({2}, bias), make_tensor<double>({2}, mean),
                               make_tensor<double>({2}, var)};
  };
  Tensor y = run_one(NodeBuilder("BatchNormalization", 15).node(), inputs());
  std::vector<double> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = (i / 4) % 2;
    want[i] = (x[i] - mean[c]) / std::sqrt(var[c] + 1e-5f) * scale[c] + bias[c];
  }
  expect_near_all(to_vector<double>(y), want, 1e-12);

  auto node = with_outputs(NodeBuilder("BatchNormalization", 15).attr_int("training_mode", 1)
                               .attr_float("momentum", 0.75f).node(), 3);
  auto out = run_kernel(node, inputs());
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  for (size_t c = 0; c < 2; ++c) {
    double sum = 0, sq = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if ((i / 4) % 2 == c) sum += x[i];
    }
    const double m = sum / 12;
    for (size_t i = 0; i < x.size(); ++i) {
      if ((i / 4) % 2 == c) sq += (x[i] - m) * (x[i] - m);
    }
    const double v = sq / 12;
    EXPECT_NEAR(to_vector<double>((*out)[1])[c], mean[c] * 0.75 + m * 0.25, 1e-12);
    EXPECT_NEAR(to_vector<double>((*out)[2])[c], var[c] * 0.75 + v * 0.25, 1e-12);
    for (size_t i = 0; i < x.size(); ++i) {
      if ((i / 4) % 2 == c) {
        EXPECT_NEAR(to_vector<double>((*out)[0])[i], (x[i] - m) / std::sqrt(v + 1e-5f) * scale[c] + bias[c], 1e-9);
      }
    }
  }
}

TEST(BatchNormalization, HalfTypesNonSpatialAndBadShapes) {
  const std::vector<float> x{1, 2, 3, 4};
  const auto half_inputs = [&]<class H>() {
    return std::vector<Tensor>{make_half_tensor<H>({2, 2}, x), make_half_tensor<H>({2}, {1, 1}),
                               make_half_tensor<H>({2}, {0, 0}), make_half_tensor<H>({2}, {0, 0}),
                               make_half_tensor<H>({2}, {1, 1})};
  };
  Tensor f16 = run_one(NodeBuilder("BatchNormalization", 9).node(), half_inputs.operator()<Float16>());
  expect_near_all(as_doubles(f16), {1, 2, 3, 4}, 1e-3);
  Tensor bf16 = run_one(NodeBuilder("BatchNormalization", 15).node(), half_inputs.operator()<BFloat16>());
  expect_near_all(as_doubles(bf16), {1, 2, 3, 4}, 1e-2);
  // spatial = 0: one parameter per (channel, position).
  Tensor ns = run_one(NodeBuilder("BatchNormalization", 7).attr_int("spatial", 0).node(),
                      {make_tensor<float>({1, 1, 2}, {1, 2}), make_tensor<float>({1, 2}, {1, 2}),
                       make_tensor<float>({1, 2}, {0, 10}), make_tensor<float>({1, 2}, {0, 0}),
                       make_tensor<float>({1, 2}, {1, 1})});
  expect_near_all(as_doubles(ns), {1, 14}, 1e-4);
  auto bad = run_kernel(NodeBuilder("BatchNormalization", 15).node(),
                        {make_tensor<float>({2, 2}, x), make_tensor<float>({3}, {1, 1, 1}),
                         make_tensor<float>({2}, {0, 0}), make_tensor<float>({2}, {0, 0}),
                         make_tensor<float>({2}, {1, 1})});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  Tensor empty = run_one(NodeBuilder("BatchNormalization", 15).node(),
                         {make_tensor<float>({0, 2}, {}), make_tensor<float>({2}, {1, 1}),
                          make_tensor<float>({2}, {0, 0}), make_tensor<float>({2}, {0, 0}),
                          make_tensor<float>({2}, {1, 1})});
  EXPECT_EQ(empty.shape(), (Shape{0, 2}));
}

TEST(LpNormalization, L1L2AndZeroNorm) {
  Tensor l2 = run_one(NodeBuilder("LpNormalization", 1).attr_int("axis", 0).node(),
                      {make_tensor<double>({2, 2}, {3, 0, 4, 0})});
  expect_near_all(to_vector<double>(l2), {0.6, 0, 0.8, 0}, 1e-15);
  Tensor l1 = run_one(NodeBuilder("LpNormalization", 22).attr_int("p", 1).node(),
                      {make_tensor<float>({1, 3}, {1, -2, 1})});
  expect_near_all(as_doubles(l1), {0.25, -0.5, 0.25}, 1e-7);
  auto bad_p = run_kernel(NodeBuilder("LpNormalization", 1).attr_int("p", 3).node(), {make_tensor<float>({1}, {1})});
  EXPECT_EQ(bad_p.status().code(), StatusCode::kInvalidGraph);
}

TEST(LRN, MatchesReference) {
  const auto x = random_doubles(1 * 5 * 3, 14);
  Tensor y = run_one(NodeBuilder("LRN", 13).attr_int("size", 3).attr_float("alpha", 0.1f).node(),
                     {make_tensor<double>({1, 5, 3}, x)});
  std::vector<double> want(x.size());
  for (int64_t c = 0; c < 5; ++c) {
    for (int64_t i = 0; i < 3; ++i) {
      double sum = 0;
      for (int64_t k = std::max<int64_t>(0, c - 1); k <= std::min<int64_t>(4, c + 1); ++k) sum += x[k * 3 + i] * x[k * 3 + i];
      want[c * 3 + i] = x[c * 3 + i] / std::pow(1.0 + static_cast<double>(0.1f) / 3 * sum, 0.75);
    }
  }
  expect_near_all(to_vector<double>(y), want, 1e-12);
  auto missing_size = run_kernel(NodeBuilder("LRN", 13).node(), {make_tensor<double>({1, 5, 3}, x)});
  EXPECT_EQ(missing_size.status().code(), StatusCode::kInvalidGraph);
}

TEST(MeanVarianceNormalization, NegativeAxesAndDuplicates) {
  const auto x = random_doubles(2 * 3 * 4, 15);
  Tensor y = run_one(NodeBuilder("MeanVarianceNormalization", 13).attr_ints("axes", {0, -1}).node(),
                     {make_tensor<double>({2, 3, 4}, x)});
  std::vector<double> want(x.size());
  for (int64_t c = 0; c < 3; ++c) {
    std::vector<double> values;
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t i = 0; i < 4; ++i) values.push_back(x[(b * 3 + c) * 4 + i]);
    }
    const auto [mean, var] = moments(values.data(), 8);
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t i = 0; i < 4; ++i) {
        const int64_t at = (b * 3 + c) * 4 + i;
        want[at] = (x[at] - mean) / (std::sqrt(var) + 1e-9);
      }
    }
  }
  expect_near_all(to_vector<double>(y), want, 1e-10);
  auto dup = run_kernel(NodeBuilder("MeanVarianceNormalization", 13).attr_ints("axes", {1, -2}).node(),
                        {make_tensor<double>({2, 3, 4}, x)});
  EXPECT_EQ(dup.status().code(), StatusCode::kInvalidArgument);
}

TEST(Dropout, InferenceIsIdentityWithTrueMask) {
  const std::vector<float> x{1, -2, 3, 4};
  auto out = run_kernel(with_outputs(NodeBuilder("Dropout", 13).node(), 2),
                        {make_tensor<float>({2, 2}, x), make_tensor<float>({}, {0.5f})});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(to_vector<float>((*out)[0]), x);
  EXPECT_EQ(to_vector<bool>((*out)[1]), (std::vector<bool>{true, true, true, true}));
  auto old = run_kernel(with_outputs(NodeBuilder("Dropout", 7).attr_float("ratio", 0.3f).node(), 2),
                        {make_tensor<float>({2, 2}, x)});
  ASSERT_TRUE(old.has_value()) << old.status().to_string();
  EXPECT_EQ(to_vector<float>((*old)[0]), x);
  EXPECT_EQ(to_vector<float>((*old)[1]), (std::vector<float>{1, 1, 1, 1}));
}

TEST(Dropout, TrainingWithSeedScalesKeptElements) {
  std::vector<float> x(1000, 1.0f);
  auto node = with_outputs(NodeBuilder("Dropout", 13).attr_int("seed", 7).node(), 2);
  const auto run = [&]() {
    return run_kernel(node, {make_tensor<float>({1000}, x), make_tensor<double>({}, {0.75}),
                             make_tensor<bool>({}, {true})});
  };
  auto first = run();
  auto second = run();
  ASSERT_TRUE(first.has_value()) << first.status().to_string();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(to_vector<float>((*first)[0]), to_vector<float>((*second)[0]));
  const auto y = to_vector<float>((*first)[0]);
  const auto mask = to_vector<bool>((*first)[1]);
  int kept = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_EQ(y[i], mask[i] ? 4.0f : 0.0f);
    kept += mask[i] ? 1 : 0;
  }
  EXPECT_GT(kept, 150);
  EXPECT_LT(kept, 350);
  auto bad_ratio = run_kernel(node, {make_tensor<float>({2}, {1, 2}), make_tensor<float>({}, {1.0f}),
                                     make_tensor<bool>({}, {true})});
  EXPECT_EQ(bad_ratio.status().code(), StatusCode::kInvalidArgument);
  auto zero_ratio = run_kernel(node, {make_tensor<float>({2}, {1, 2}), make_tensor<float>({}, {0.0f}),
                                      make_tensor<bool>({}, {true})});
  ASSERT_TRUE(zero_ratio.has_value());
  EXPECT_EQ(to_vector<float>((*zero_ratio)[0]), (std::vector<float>{1, 2}));
}

}  // namespace
}  // namespace nxrt::cpu::testing
