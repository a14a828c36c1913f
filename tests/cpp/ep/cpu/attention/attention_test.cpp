#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<double> to_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

struct RefAttention {
  int64_t batch, q_heads, kv_heads, q_len, kv_len, past_len, head, v_head;
  bool causal = false;
  double softcap = 0;
  double scale = 0;
};

// Naive 4-D attention in double. mask: additive [q_len, total] (empty: none). Returns Y [B, Hq, Lq, Dv] and
// present K/V [B, Hkv, total, D].
std::vector<double> reference(const RefAttention& c, const std::vector<double>& q, const std::vector<double>& k,
                              const std::vector<double>& v, const std::vector<double>& past_k,
                              const std::vector<double>& past_v, const std::vector<double>& mask) {
  const int64_t total = c.past_len + c.kv_len;
  const double scale = c.scale != 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.head));
  auto key = [&](int64_t b, int64_t h, int64_t s, int64_t e) {
    return s < c.past_len ? past_k[((b * c.kv_heads + h) * c.past_len + s) * c.head + e]
                          : k[((b * c.kv_heads + h) * c.kv_len + s - c.past_len) * c.head + e];
  };
  auto value = [&](int64_t b, int64_t h, int64_t s, int64_t e) {
    return s < c.past_len ? past_v[((b * c.kv_heads + h) * c.past_len + s) * c.v_head + e]
                          : v[((b * c.kv_heads + h) * c.kv_len + s - c.past_len) * c.v_head + e];
  };
  std::vector<double> y(static_cast<size_t>(c.batch * c.q_heads * c.q_len * c.v_head));
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t h = 0; h < c.q_heads; ++h) {
      const int64_t kh = h / (c.q_heads / c.kv_heads);
      for (int64_t i = 0; i < c.q_len; ++i) {
        std::vector<double> s(static_cast<size_t>(total));
        double m = -INFINITY;
        for (int64_t j = 0; j < total; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < c.head; ++e) dot += q[((b * c.q_heads + h) * c.q_len + i) * c.head + e] * key(b, kh, j, e);
          dot *= scale;
          if (c.softcap > 0) dot = c.softcap * std::tanh(dot / c.softcap);
          if (!mask.empty()) dot += mask[i * total + j];
          if (c.causal && j > i + c.past_len) dot = -INFINITY;
          s[j] = dot;
          m = std::max(m, dot);
        }
        double sum = 0;
        for (auto& x : s) sum += (x = std::exp(x - m));
        for (int64_t e = 0; e < c.v_head; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < total; ++j) acc += s[j] / sum * value(b, kh, j, e);
          y[((b * c.q_heads + h) * c.q_len + i) * c.v_head + e] = acc;
        }
      }
    }
  }
  return y;
}

TEST(Attention, MatchesReferenceWithGqaCausalMaskPastAndSoftcap) {
  RefAttention c{2, 4, 2, 3, 5, 2, 8, 6};
  c.causal = true;
  c.softcap = 2.0;
  const int64_t total = c.past_len + c.kv_len;
  const auto q = random_floats(c.batch * c.q_heads * c.q_len * c.head, 1);
  const auto k = random_floats(c.batch * c.kv_heads * c.kv_len * c.head, 2);
  const auto v = random_floats(c.batch * c.kv_heads * c.kv_len * c.v_head, 3);
  const auto pk = random_floats(c.batch * c.kv_heads * c.past_len * c.head, 4);
  const auto pv = random_floats(c.batch * c.kv_heads * c.past_len * c.v_head, 5);
  const auto mask = random_floats(c.q_len * total, 6);
  const auto expected = reference(c, to_double(q), to_double(k), to_double(v), to_double(pk), to_double(pv),
                                  to_double(mask));
  for (int threads : {1, 3}) {
    auto out = run_kernel(NodeBuilder("Attention", 23).attr_int("is_causal", 1).attr_float("softcap", 2.0f).node(),
                          {make_tensor<float>({2, 4, 3, 8}, q), make_tensor<float>({2, 2, 5, 8}, k),
                           make_tensor<float>({2, 2, 5, 6}, v), make_tensor<float>({3, 7}, mask),
                           make_tensor<float>({2, 2, 2, 8}, pk), make_tensor<float>({2, 2, 2, 6}, pv)},
                          threads);
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    ASSERT_EQ((*out)[0].shape(), (Shape{2, 4, 3, 6}));
    ASSERT_EQ((*out)[1].shape(), (Shape{2, 2, 7, 8}));
    const auto y = to_vector<float>((*out)[0]);
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], expected[i], 1e-5) << i;
    const auto present_k = to_vector<float>((*out)[1]);
    EXPECT_EQ(present_k[0], pk[0]);
    EXPECT_EQ(present_k[2 * 8], k[0]);
  }
}

TEST(Attention, ThreeDimensionalDoubleWithShortBoolMaskAndScale) {
  // Q [B, L, Hq*D] with Hq=2, Hkv=1 (MQA); the bool mask covers 3 of 4 keys, the 4th is padded as masked.
  RefAttention c{1, 2, 1, 2, 4, 0, 3, 2};
  c.scale = 0.5;
  const auto q4 = random_floats(1 * 2 * 2 * 3, 7);
  const auto k4 = random_floats(4 * 3, 8);
  const auto v4 = random_floats(4 * 2, 9);
  std::vector<double> q3(q4.size());
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t h = 0; h < 2; ++h) {
      for (int64_t e = 0; e < 3; ++e) q3[(i * 2 + h) * 3 + e] = q4[(h * 2 + i) * 3 + e];
    }
  }
  const std::vector<bool> keep = {true, false, true, true, true, false};
  std::vector<double> additive(2 * 4, -INFINITY);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) additive[i * 4 + j] = keep[i * 3 + j] ? 0.0 : -INFINITY;
  }
  const auto expected = reference(c, to_double(q4), to_double(k4), to_double(v4), {}, {}, additive);
  Tensor mask = make_tensor<bool>({2, 3}, {true, false, true, true, true, false});
  Tensor y = run_one(NodeBuilder("Attention", 23).attr_int("q_num_heads", 2).attr_int("kv_num_heads", 1)
                         .attr_float("scale", 0.5f).node(),
                     {make_tensor<double>({1, 2, 6}, q3), make_tensor<double>({1, 4, 3}, to_double(k4)),
                      make_tensor<double>({1, 4, 2}, to_double(v4)), mask});
  ASSERT_EQ(y.shape(), (Shape{1, 2, 4}));
  const auto got = to_vector<double>(y);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t h = 0; h < 2; ++h) {
      for (int64_t e = 0; e < 2; ++e) EXPECT_NEAR(got[(i * 2 + h) * 2 + e], expected[(h * 2 + i) * 2 + e], 1e-7);
    }
  }
}

TEST(Attention, FullyMaskedRowIsZeroInYAndSoftmaxOutput) {
  const auto q = random_floats(4, 10), k = random_floats(4, 11), v = random_floats(4, 12);
  Tensor mask = make_tensor<bool>({2, 2}, {false, false, true, true});
  auto out = run_kernel(NodeBuilder("Attention", 24).attr_int("qk_matmul_output_mode", 3).node(),
                        {make_tensor<float>({1, 1, 2, 2}, q), make_tensor<float>({1, 1, 2, 2}, k),
                         make_tensor<float>({1, 1, 2, 2}, v), mask});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  const auto y = to_vector<float>((*out)[0]);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_TRUE(std::isfinite(y[2]));
  const auto probs = to_vector<float>((*out)[3]);
  EXPECT_EQ(probs[0], 0.0f);
  EXPECT_EQ(probs[1], 0.0f);
  EXPECT_NEAR(probs[2] + probs[3], 1.0f, 1e-6);
}

TEST(Attention, NonpadSeqlenShiftsCausalFrontierAndMasksPadding) {
  // kv_len 4, q_len 2; batch 0 has 3 valid keys (offset 1), batch 1 has 1 (offset -1: query 0 sees nothing).
  const auto q = random_floats(2 * 2 * 2, 13), k = random_floats(2 * 4 * 2, 14), v = random_floats(2 * 4 * 2, 15);
  auto out = run_kernel(NodeBuilder("Attention", 24).attr_int("is_causal", 1).attr_int("qk_matmul_output_mode", 3).node(),
                        {make_tensor<float>({2, 1, 2, 2}, q), make_tensor<float>({2, 1, 4, 2}, k),
                         make_tensor<float>({2, 1, 4, 2}, v), Tensor(), Tensor(), Tensor(),
                         make_tensor<int64_t>({2}, {3, 1})});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  const auto p = to_vector<float>((*out)[3]);  // [2, 1, 2, 4]
  // batch 0, query 0 attends keys 0..1; query 1 attends 0..2.
  EXPECT_GT(p[1], 0.0f);
  EXPECT_EQ(p[2], 0.0f);
  EXPECT_GT(p[4 + 2], 0.0f);
  EXPECT_EQ(p[4 + 3], 0.0f);
  // batch 1, query 0 has an empty key set; query 1 attends key 0 only.
  for (int j = 0; j < 4; ++j) EXPECT_EQ(p[8 + j], 0.0f);
  EXPECT_FLOAT_EQ(p[12], 1.0f);
  const auto y = to_vector<float>((*out)[0]);
  EXPECT_EQ(y[4], 0.0f);
  EXPECT_FLOAT_EQ(y[6], v[8]);
}

TEST(Attention, QkOutputModesAndHalfTypes) {
  const auto q = random_floats(8, 16), k = random_floats(8, 17), v = random_floats(8, 18);
  Tensor mask = make_tensor<float>({1, 2}, {0.5f, -0.25f});
  auto raw = run_kernel(NodeBuilder("Attention", 23).node(),
                        {make_tensor<float>({1, 1, 2, 4}, q), make_tensor<float>({1, 1, 2, 4}, k),
                         make_tensor<float>({1, 1, 2, 4}, v), mask});
  auto biased = run_kernel(NodeBuilder("Attention", 23).attr_int("qk_matmul_output_mode", 2).node(),
                           {make_tensor<float>({1, 1, 2, 4}, q), make_tensor<float>({1, 1, 2, 4}, k),
                            make_tensor<float>({1, 1, 2, 4}, v), mask});
  ASSERT_TRUE(raw.has_value() && biased.has_value());
  const auto a = to_vector<float>((*raw)[3]);
  const auto b = to_vector<float>((*biased)[3]);
  EXPECT_NEAR(b[0] - a[0], 0.5f, 1e-6);
  EXPECT_NEAR(b[3] - a[3], -0.25f, 1e-6);
  double dot = 0;
  for (int e = 0; e < 4; ++e) dot += q[e] * k[e];
  EXPECT_NEAR(a[0], dot / 2.0, 1e-6);

  const auto reference_y = to_vector<float>((*raw)[0]);
  for (int precision : {0, 1, 11}) {
    NodeBuilder builder("Attention", 23);
    if (precision != 0) builder.attr_int("softmax_precision", precision);
    auto half = run_kernel(builder.node(), {make_half_tensor<Float16>({1, 1, 2, 4}, q),
                                            make_half_tensor<Float16>({1, 1, 2, 4}, k),
                                            make_half_tensor<Float16>({1, 1, 2, 4}, v),
                                            make_half_tensor<Float16>({1, 2}, {0.5f, -0.25f})});
    ASSERT_TRUE(half.has_value()) << half.status().to_string();
    const auto got = to_float_vector((*half)[0]);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], reference_y[i], 4e-3) << precision;
  }
  auto bf = run_kernel(NodeBuilder("Attention", 23).node(),
                       {make_half_tensor<BFloat16>({1, 1, 2, 4}, q), make_half_tensor<BFloat16>({1, 1, 2, 4}, k),
                        make_half_tensor<BFloat16>({1, 1, 2, 4}, v)});
  ASSERT_TRUE(bf.has_value()) << bf.status().to_string();
  auto f32 = run_kernel(NodeBuilder("Attention", 23).node(),
                        {make_tensor<float>({1, 1, 2, 4}, q), make_tensor<float>({1, 1, 2, 4}, k),
                         make_tensor<float>({1, 1, 2, 4}, v)});
  const auto got = to_float_vector((*bf)[0]);
  const auto want = to_vector<float>((*f32)[0]);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 3e-2);
}

TEST(Attention, RejectsBadAttributesAndShapes) {
  const Tensor q3 = make_tensor<float>({1, 2, 4}, random_floats(8, 19));
  auto no_heads = run_kernel(NodeBuilder("Attention", 23).node(), {q3, q3, q3});
  ASSERT_FALSE(no_heads.has_value());
  EXPECT_EQ(no_heads.status().code(), StatusCode::kInvalidArgument);
  auto bad_group = run_kernel(NodeBuilder("Attention", 23).attr_int("q_num_heads", 2).attr_int("kv_num_heads", 4).node(),
                              {q3, make_tensor<float>({1, 2, 8}, random_floats(16, 1)),
                               make_tensor<float>({1, 2, 8}, random_floats(16, 2))});
  EXPECT_FALSE(bad_group.has_value());
  auto bad_precision = run_kernel(NodeBuilder("Attention", 23).attr_int("softmax_precision", 7).node(), {q3, q3, q3});
  ASSERT_FALSE(bad_precision.has_value());
  EXPECT_EQ(bad_precision.status().code(), StatusCode::kInvalidGraph);
  const Tensor q4 = make_tensor<float>({1, 1, 2, 4}, random_floats(8, 20));
  auto bad_mask = run_kernel(NodeBuilder("Attention", 23).node(),
                             {q4, q4, q4, make_tensor<float>({3, 2}, random_floats(6, 3))});
  EXPECT_FALSE(bad_mask.has_value());
  auto long_mask = run_kernel(NodeBuilder("Attention", 23).node(),
                              {q4, q4, q4, make_tensor<float>({2, 3}, random_floats(6, 3))});
  EXPECT_FALSE(long_mask.has_value());
}

TEST(RotaryEmbedding, HalfSplitInterleavedAndPartialRotation) {
  // X [1, 1, 1, 4] (4-D: batch, heads, seq, head) rotated by 90 degrees at position 1.
  const Tensor x = make_tensor<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  const Tensor cos = make_tensor<float>({2, 2}, {1, 1, 0, 0});
  const Tensor sin = make_tensor<float>({2, 2}, {0, 0, 1, 1});
  const Tensor pos = make_tensor<int64_t>({1, 1}, {1});
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("RotaryEmbedding", 23).node(), {x, cos, sin, pos})),
            (std::vector<float>{-3, -4, 1, 2}));
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("RotaryEmbedding", 23).attr_int("interleaved", 1).node(),
                                     {x, cos, sin, pos})),
            (std::vector<float>{-2, 1, -4, 3}));
  const Tensor cos1 = make_tensor<float>({2, 1}, {1, 0});
  const Tensor sin1 = make_tensor<float>({2, 1}, {0, 1});
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("RotaryEmbedding", 23).attr_int("rotary_embedding_dim", 2).node(),
                                     {x, cos1, sin1, pos})),
            (std::vector<float>{-2, 1, 3, 4}));
  // 3-D input without position_ids: caches are [batch, seq, dim/2].
  const Tensor x3 = make_tensor<float>({1, 1, 4}, {1, 2, 3, 4});
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("RotaryEmbedding", 23).attr_int("num_heads", 2).node(),
                                     {x3, make_tensor<float>({1, 1, 1}, {0}), make_tensor<float>({1, 1, 1}, {1})})),
            (std::vector<float>{-2, 1, -4, 3}));
}

TEST(RotaryEmbedding, RejectsOutOfRangePositionsAndMissingHeads) {
  const Tensor x = make_tensor<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  const Tensor cache = make_tensor<float>({2, 2}, {1, 1, 0, 0});
  auto out = run_kernel(NodeBuilder("RotaryEmbedding", 23).node(), {x, cache, cache, make_tensor<int64_t>({1, 1}, {2})});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  auto neg = run_kernel(NodeBuilder("RotaryEmbedding", 23).node(), {x, cache, cache, make_tensor<int64_t>({1, 1}, {-1})});
  EXPECT_FALSE(neg.has_value());
  auto three_d = run_kernel(NodeBuilder("RotaryEmbedding", 23).node(),
                            {make_tensor<float>({1, 1, 4}, {1, 2, 3, 4}), cache, cache, make_tensor<int64_t>({1, 1}, {0})});
  EXPECT_FALSE(three_d.has_value());
}

TEST(TensorScatter, LinearCircularAndBounds) {
  const Tensor past = make_tensor<float>({2, 4, 1}, {0, 1, 2, 3, 10, 11, 12, 13});
  const Tensor update = make_tensor<float>({2, 2, 1}, {-1, -2, -3, -4});
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("TensorScatter", 24).node(),
                                     {past, update, make_tensor<int64_t>({2}, {1, 2})})),
            (std::vector<float>{0, -1, -2, 3, 10, 11, -3, -4}));
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("TensorScatter", 24).attr_string("mode", "circular").node(),
                                     {past, update, make_tensor<int64_t>({2}, {3, 0})})),
            (std::vector<float>{-2, 1, 2, -1, -3, -4, 12, 13}));
  auto overflow = run_kernel(NodeBuilder("TensorScatter", 24).node(), {past, update, make_tensor<int64_t>({2}, {3, 0})});
  ASSERT_FALSE(overflow.has_value());
  EXPECT_EQ(overflow.status().code(), StatusCode::kInvalidArgument);
  auto bad_mode = run_kernel(NodeBuilder("TensorScatter", 24).attr_string("mode", "ring").node(), {past, update});
  EXPECT_FALSE(bad_mode.has_value());
  const Tensor ints = make_tensor<int64_t>({1, 3}, {1, 2, 3});
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("TensorScatter", 24).attr_int("axis", 1).node(),
                                       {ints, make_tensor<int64_t>({1, 1}, {9})})),
            (std::vector<int64_t>{9, 2, 3}));
}

TEST(SwiGLU, GateTimesValueAndShapeCheck) {
  const Tensor a = make_tensor<float>({3}, {0, 1, -2});
  const Tensor b = make_tensor<float>({3}, {5, 2, 1});
  const auto y = to_vector<float>(run_one(NodeBuilder("SwiGLU", 28).attr_float("alpha", 2.0f).node(), {a, b}));
  EXPECT_FLOAT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], 2.0f / (1.0f + std::exp(-2.0f)), 1e-6);
  EXPECT_NEAR(y[2], -2.0f / (1.0f + std::exp(4.0f)), 1e-6);
  EXPECT_FALSE(run_kernel(NodeBuilder("SwiGLU", 28).node(), {a, make_tensor<float>({1, 3}, {1, 2, 3})}).has_value());
}

TEST(LinearAttention, LinearRuleIsCumulativeKeyValueSum) {
  // One head, d_k = d_v = 1: o_t = scale * q_t * sum_{s<=t} k_s v_s.
  const Tensor q = make_tensor<float>({1, 3, 1}, {1, 2, 3});
  const Tensor k = make_tensor<float>({1, 3, 1}, {1, 1, 2});
  const Tensor v = make_tensor<float>({1, 3, 1}, {4, 5, 6});
  auto out = run_kernel(NodeBuilder("LinearAttention", 27).attr_int("q_num_heads", 1).attr_int("kv_num_heads", 1)
                            .attr_string("update_rule", "linear").attr_float("scale", 1.0f).node(),
                        {q, k, v});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(to_vector<float>((*out)[0]), (std::vector<float>{4, 18, 63}));
  EXPECT_EQ(to_vector<float>((*out)[1]), (std::vector<float>{21}));
  auto gated_without_decay = run_kernel(
      NodeBuilder("LinearAttention", 27).attr_int("q_num_heads", 1).attr_int("kv_num_heads", 1).node(), {q, k, v});
  EXPECT_FALSE(gated_without_decay.has_value());
  auto bad_heads = run_kernel(
      NodeBuilder("LinearAttention", 27).attr_int("q_num_heads", 3).attr_int("kv_num_heads", 2).node(), {q, k, v});
  EXPECT_FALSE(bad_heads.has_value());
}

}  // namespace
}  // namespace nxrt::cpu::testing
