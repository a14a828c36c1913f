// The com.microsoft kernels of ep/cpu/contrib/ against double references computed here (the Python suite
// compares them with onnxruntime); these also run under the sanitizers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

graph::Node ms_node(const NodeBuilder& builder, int outputs) {
  graph::Node node = builder.node();
  node.domain = graph::kMsDomain;
  node.opset = 1;
  node.outputs.clear();
  for (int i = 0; i < outputs; ++i) node.outputs.push_back(100 + i);
  return node;
}

std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(n);
  for (float& v : values) v = normal(engine);
  return values;
}

// Attention with past [2, B, N, P, h], a [B, T] raw mask and the causal rule, in double.
std::vector<double> attention_reference(const std::vector<float>& x, const std::vector<float>& w,
                                        const std::vector<float>& bias, const std::vector<float>& past,
                                        const std::vector<int32_t>& mask, int64_t b, int64_t s, int64_t hidden,
                                        int64_t heads, int64_t p) {
  const int64_t width = w.size() / hidden;
  const int64_t d = width / 3;
  const int64_t h = d / heads;
  const int64_t t = p + s;
  std::vector<double> qkv(b * s * width);
  for (int64_t r = 0; r < b * s; ++r) {
    for (int64_t c = 0; c < width; ++c) {
      double sum = bias[c];
      for (int64_t k = 0; k < hidden; ++k) sum += double(x[r * hidden + k]) * w[k * width + c];
      qkv[r * width + c] = sum;
    }
  }
  std::vector<double> out(b * s * d);
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t n = 0; n < heads; ++n) {
      const auto key = [&](int64_t j, int64_t e, int which) {  // which 0: K, 1: V
        if (j < p) return double(past[(((which * b + bi) * heads + n) * p + j) * h + e]);
        return qkv[(bi * s + j - p) * width + (which + 1) * d + n * h + e];
      };
      for (int64_t si = 0; si < s; ++si) {
        std::vector<double> scores(t);
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < t; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < h; ++e) dot += qkv[(bi * s + si) * width + n * h + e] * key(j, e, 0);
          scores[j] = dot / std::sqrt(double(h)) + (mask[bi * t + j] != 0 ? 0.0 : -10000.0);
          if (j > p + si) scores[j] = -std::numeric_limits<float>::max();
          max = std::max(max, scores[j]);
        }
        double total = 0;
        for (double& v : scores) total += (v = std::exp(v - max));
        for (int64_t e = 0; e < h; ++e) {
          double sum = 0;
          for (int64_t j = 0; j < t; ++j) sum += scores[j] / total * key(j, e, 1);
          out[(bi * s + si) * d + n * h + e] = sum;
        }
      }
    }
  }
  return out;
}

TEST(ContribAttention, PastMaskAndCausalRuleMatchTheReference) {
  const int64_t b = 2, s = 3, hidden = 5, heads = 2, h = 4, p = 2, t = p + s, width = 3 * heads * h;
  const auto x = random_values(b * s * hidden, 1);
  const auto w = random_values(hidden * width, 2, 0.5f);
  const auto bias = random_values(width, 3);
  const auto past = random_values(2 * b * heads * p * h, 4);
  const std::vector<int32_t> mask = {1, 1, 1, 1, 1, 0, 1, 1, 1, 1};
  const auto want = attention_reference(x, w, bias, past, mask, b, s, hidden, heads, p);
  const graph::Node node =
      ms_node(NodeBuilder("Attention").attr_int("num_heads", heads).attr_int("unidirectional", 1), 2);
  for (int threads : {1, 2}) {
    for (bool constant_weights : {false, true}) {
      auto outputs = run_kernel(node,
                                {make_tensor<float>({b, s, hidden}, x), make_tensor<float>({hidden, width}, w),
                                 make_tensor<float>({width}, bias), make_tensor<int32_t>({b, t}, mask),
                                 make_tensor<float>({2, b, heads, p, h}, past)},
                                threads, {false, constant_weights, constant_weights});
      ASSERT_TRUE(outputs) << outputs.status().to_string();
      ASSERT_EQ((*outputs)[1].shape(), (Shape{2, b, heads, t, h}));
      const auto got = to_vector<float>((*outputs)[0]);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
      // present: the past entries, then this call's keys.
      const auto present = to_vector<float>((*outputs)[1]);
      EXPECT_EQ(present[0], past[0]);
      EXPECT_EQ(present[(b * heads * t) * h], past[b * heads * p * h]);
    }
  }
}

TEST(ContribAttention, Float16RunsInFloatAndBadAttributesAreErrors) {
  const graph::Node node = ms_node(NodeBuilder("Attention").attr_int("num_heads", 2), 1);
  const auto x = random_values(2 * 8, 5);
  const auto w = random_values(8 * 24, 6, 0.3f);
  auto outputs = run_kernel(node, {make_half_tensor<Float16>({1, 2, 8}, x), make_half_tensor<Float16>({8, 24}, w)});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  EXPECT_EQ((*outputs)[0].shape(), (Shape{1, 2, 8}));
  for (float v : to_float_vector((*outputs)[0])) EXPECT_TRUE(std::isfinite(v));

  const graph::Node no_heads = ms_node(NodeBuilder("Attention"), 1);
  auto missing = run_kernel(no_heads, {make_tensor<float>({1, 2, 8}, x), make_tensor<float>({8, 24}, w)});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("num_heads"), std::string::npos);
  const graph::Node rotary = ms_node(NodeBuilder("Attention").attr_int("num_heads", 2).attr_int("do_rotary", 1), 1);
  auto refused = run_kernel(rotary, {make_tensor<float>({1, 2, 8}, x), make_tensor<float>({8, 24}, w)});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), StatusCode::kNotImplemented);
  // A key end beyond T shows every key; a mask of the wrong length is an error.
  auto ends = run_kernel(node, {make_tensor<float>({1, 2, 8}, x), make_tensor<float>({8, 24}, w), Tensor(),
                                make_tensor<int32_t>({1}, {99})});
  EXPECT_TRUE(ends) << ends.status().to_string();
  auto wrong = run_kernel(node, {make_tensor<float>({1, 2, 8}, x), make_tensor<float>({8, 24}, w), Tensor(),
                                 make_tensor<int32_t>({4}, {1, 1, 1, 1})});
  EXPECT_FALSE(wrong);
}

TEST(ContribGroupQueryAttention, DecodeStepReadsThePastAndSharesKeyHeads) {
  const int64_t heads = 2, kv = 1, h = 4, past_len = 2;
  const auto q = random_values(heads * h, 21);
  const auto k = random_values(kv * h, 22);
  const auto v = random_values(kv * h, 23);
  const auto past_k = random_values(kv * past_len * h, 24);
  const auto past_v = random_values(kv * past_len * h, 25);
  const graph::Node node =
      ms_node(NodeBuilder("GroupQueryAttention").attr_int("num_heads", heads).attr_int("kv_num_heads", kv), 3);
  for (int threads : {1, 2}) {
    auto outputs = run_kernel(node,
                              {make_tensor<float>({1, 1, heads * h}, q), make_tensor<float>({1, 1, kv * h}, k),
                               make_tensor<float>({1, 1, kv * h}, v), make_tensor<float>({1, kv, past_len, h}, past_k),
                               make_tensor<float>({1, kv, past_len, h}, past_v), make_tensor<int32_t>({1}, {2}),
                               make_tensor<int32_t>({}, {3})},
                              threads);
    ASSERT_TRUE(outputs) << outputs.status().to_string();
    ASSERT_EQ((*outputs)[1].shape(), (Shape{1, kv, past_len + 1, h}));
    const auto y = to_vector<float>((*outputs)[0]);
    const auto key = [&](int64_t j, int64_t e) { return j < past_len ? past_k[j * h + e] : k[e]; };
    const auto value = [&](int64_t j, int64_t e) { return j < past_len ? past_v[j * h + e] : v[e]; };
    for (int64_t n = 0; n < heads; ++n) {  // both query heads read the one key / value head
      double scores[3], total = 0;
      for (int64_t j = 0; j < 3; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < h; ++e) dot += double(q[n * h + e]) * key(j, e);
        total += (scores[j] = std::exp(dot / 2.0));  // 1 / sqrt(4)
      }
      for (int64_t e = 0; e < h; ++e) {
        double want = 0;
        for (int64_t j = 0; j < 3; ++j) want += scores[j] / total * value(j, e);
        EXPECT_NEAR(y[n * h + e], want, 1e-5);
      }
    }
    EXPECT_EQ(to_vector<float>((*outputs)[1])[past_len * h], k[0]);
  }
  // seqlens_k beyond total_sequence_length is an error naming the entry.
  auto bad = run_kernel(node, {make_tensor<float>({1, 1, heads * h}, q), make_tensor<float>({1, 1, kv * h}, k),
                               make_tensor<float>({1, 1, kv * h}, v), make_tensor<float>({1, kv, past_len, h}, past_k),
                               make_tensor<float>({1, kv, past_len, h}, past_v), make_tensor<int32_t>({1}, {7}),
                               make_tensor<int32_t>({}, {3})});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("seqlens_k[0]"), std::string::npos);
}

TEST(ContribGroupQueryAttention, SharedPastPresentBufferWritesOnlyTheNewRows) {
  // past_present_share_buffer: present_key / present_value are the past buffers (capacity 4, 2 cached rows). The
  // step must give the output of a run with separate presents, write row 2 and leave row 3 as it was.
  const int64_t heads = 4, kv = 2, h = 8, capacity = 4, cached = 2;
  const auto q = random_values(heads * h, 31);
  const auto k = random_values(kv * h, 32);
  const auto v = random_values(kv * h, 33);
  std::vector<float> past_k = random_values(kv * capacity * h, 34);
  std::vector<float> past_v = random_values(kv * capacity * h, 35);
  const graph::Node node = ms_node(NodeBuilder("GroupQueryAttention")
                                       .attr_int("num_heads", heads)
                                       .attr_int("kv_num_heads", kv)
                                       .attr_int("do_rotary", 1),
                                   3);
  std::vector<float> cos(16 * h / 2), sin(16 * h / 2);
  for (size_t i = 0; i < cos.size(); ++i) {
    cos[i] = std::cos(0.1f * static_cast<float>(i));
    sin[i] = std::sin(0.1f * static_cast<float>(i));
  }
  const Tensor past_key = make_tensor<float>({1, kv, capacity, h}, past_k);
  const Tensor past_value = make_tensor<float>({1, kv, capacity, h}, past_v);
  std::vector<Tensor> inputs = {make_tensor<float>({1, 1, heads * h}, q), make_tensor<float>({1, 1, kv * h}, k),
                                make_tensor<float>({1, 1, kv * h}, v),   past_key,
                                past_value,                             make_tensor<int32_t>({1}, {cached}),
                                make_tensor<int32_t>({}, {cached + 1}), make_tensor<float>({16, h / 2}, cos),
                                make_tensor<float>({16, h / 2}, sin)};
  auto separate = run_kernel(node, inputs);
  ASSERT_TRUE(separate) << separate.status().to_string();

  graph::Node bound = node;
  bound.inputs.clear();
  for (size_t i = 0; i < inputs.size(); ++i) bound.inputs.push_back(static_cast<int>(i));
  const KernelDef* def = find_kernel(bound.domain, bound.op_type, bound.opset);
  ASSERT_NE(def, nullptr);
  KernelInfo info{bound, {}, std::vector<DataType>(3, DataType::kUndefined), {}};
  std::vector<const Tensor*> pointers;
  for (const Tensor& t : inputs) {
    pointers.push_back(&t);
    info.input_types.push_back(t.dtype());
    info.constant_inputs.push_back(nullptr);
  }
  auto kernel = def->create(info);
  ASSERT_TRUE(kernel) << kernel.status().to_string();
  std::vector<OutputDesc> descs;
  ASSERT_TRUE((*kernel)->reshape(pointers, descs).is_ok());
  ASSERT_EQ(descs[1].shape, past_key.shape());
  auto y = Tensor::allocate(DataType::kFloat32, descs[0].shape);
  ASSERT_TRUE(y);
  std::vector<Tensor> outputs = {*y, past_key, past_value};  // the presents share the past buffers
  ThreadPool pool(2);
  ASSERT_TRUE((*kernel)->run(pointers, outputs, pool).is_ok());

  EXPECT_EQ(to_vector<float>(outputs[0]), to_vector<float>((*separate)[0]));
  const std::vector<float> separate_key = to_vector<float>((*separate)[1]);
  const std::vector<float> shared_key = to_vector<float>(past_key);
  const std::vector<float> shared_value = to_vector<float>(past_value);
  for (int64_t g = 0; g < kv; ++g) {
    for (int64_t row = 0; row < capacity; ++row) {
      for (int64_t e = 0; e < h; ++e) {
        const int64_t at = (g * capacity + row) * h + e;
        if (row <= cached) {
          EXPECT_EQ(shared_key[at], separate_key[at]) << g << " " << row << " " << e;
        } else {
          EXPECT_EQ(shared_key[at], past_k[at]) << "row past T changed";
          EXPECT_EQ(separate_key[at], 0.0f) << "separate presents are zero past T";
        }
      }
      if (row == cached) {
        EXPECT_EQ(shared_value[(g * capacity + row) * h], v[g * h]);
      }
    }
  }
}

TEST(ContribQuantized, MatMulNBitsFourBitsWithPackedZeroPoints) {
  const int64_t k = 40, n = 3, block = 16, k_blocks = 3;  // the last block holds 8 of 16 values
  std::mt19937 engine(31);
  std::vector<int> codes(n * k_blocks * block, 0), zeros(n * k_blocks);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t i = 0; i < k; ++i) codes[r * k_blocks * block + i] = static_cast<int>(engine() % 16);
  }
  for (int& z : zeros) z = static_cast<int>(engine() % 16);
  std::vector<uint8_t> b(n * k_blocks * block / 2), zero_bytes(n * 2);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(codes[2 * i] | (codes[2 * i + 1] << 4));
  for (int64_t r = 0; r < n; ++r) {  // 3 zero points per row: 2 bytes, the last half-empty
    zero_bytes[r * 2] = static_cast<uint8_t>(zeros[r * 3] | (zeros[r * 3 + 1] << 4));
    zero_bytes[r * 2 + 1] = static_cast<uint8_t>(zeros[r * 3 + 2]);
  }
  const auto scales = random_values(n * k_blocks, 32, 0.1f);
  const auto a = random_values(2 * k, 33);
  const graph::Node node = ms_node(NodeBuilder("MatMulNBits").attr_int("K", k).attr_int("N", n).attr_int("bits", 4)
                                       .attr_int("block_size", block), 1);
  for (bool constant : {false, true}) {
    auto outputs = run_kernel(node,
                              {make_tensor<float>({2, k}, a), make_tensor<uint8_t>({n, k_blocks, block / 2}, b),
                               make_tensor<float>({n, k_blocks}, scales), make_tensor<uint8_t>({n, 2}, zero_bytes)},
                              1, {false, constant, constant, constant});
    ASSERT_TRUE(outputs) << outputs.status().to_string();
    const auto y = to_vector<float>((*outputs)[0]);
    for (int64_t m = 0; m < 2; ++m) {
      for (int64_t c = 0; c < n; ++c) {
        double want = 0;
        for (int64_t i = 0; i < k; ++i) {
          const int64_t blk = i / block;
          want += double(a[m * k + i]) * (codes[c * k_blocks * block + i] - zeros[c * 3 + blk]) *
                  scales[c * k_blocks + blk];
        }
        EXPECT_NEAR(y[m * n + c], want, 1e-4) << m << "," << c;
      }
    }
  }
  // B of the wrong shape is an error naming the expected one.
  auto bad = run_kernel(node, {make_tensor<float>({2, k}, a), make_tensor<uint8_t>({n, 2, 8}, std::vector<uint8_t>(48)),
                               make_tensor<float>({n, k_blocks}, scales)});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("[3,3,8]"), std::string::npos) << bad.status().to_string();
}

TEST(ContribQuantized, GatherBlockQuantizedUint8AndIndicesOutOfRange) {
  // 2 rows of 32 four-bit values (16 bytes each), one block per row, scales [2, 1], default zero point 8.
  std::vector<uint8_t> data(32);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>((i % 16) | ((15 - i % 16) << 4));
  const graph::Node node = ms_node(NodeBuilder("GatherBlockQuantized").attr_int("block_size", 32).attr_int("bits", 4),
                                   1);
  auto outputs = run_kernel(node, {make_tensor<uint8_t>({2, 16}, data), make_tensor<int64_t>({3}, {-1, 5, 0}),
                                   make_tensor<float>({2, 1}, {0.5f, 2.0f})});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  ASSERT_EQ((*outputs)[0].shape(), (Shape{3, 32}));
  const auto y = to_vector<float>((*outputs)[0]);
  EXPECT_EQ(y[0], (0 - 8) * 2.0f);       // index -1: row 1, value 0 (low nibble of byte 16)
  EXPECT_EQ(y[1], (15 - 8) * 2.0f);      // its high nibble
  for (int i = 32; i < 64; ++i) EXPECT_EQ(y[i], 0.0f);  // index 5 is outside [-2, 2): zeros
  EXPECT_EQ(y[64 + 2], (1 - 8) * 0.5f);  // row 0, byte 1, low nibble
}

TEST(ContribNorm, SkipLayerNormBFloat16WithBiasAndSum) {
  const int64_t rows = 3, h = 8;
  const auto x = random_values(rows * h, 7);
  const auto skip_rows = random_values(rows * h, 9);
  const auto gamma = random_values(h, 10);
  const auto beta = random_values(h, 11);
  const auto bias = random_values(h, 12);
  const graph::Node node = ms_node(NodeBuilder("SkipLayerNormalization").attr_float("epsilon", 1e-5f), 4);
  auto outputs = run_kernel(node, {make_half_tensor<BFloat16>({1, rows, h}, x),
                                   make_half_tensor<BFloat16>({1, rows, h}, skip_rows),
                                   make_half_tensor<BFloat16>({h}, gamma), make_half_tensor<BFloat16>({h}, beta),
                                   make_half_tensor<BFloat16>({h}, bias)});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  const auto y = to_float_vector((*outputs)[0]);
  const auto mean = to_vector<float>((*outputs)[1]);
  const auto sum = to_float_vector((*outputs)[3]);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> v(h);
    double m = 0, var = 0;
    for (int64_t i = 0; i < h; ++i) {
      v[i] = double(float(BFloat16(x[r * h + i]))) + float(BFloat16(skip_rows[r * h + i])) + float(BFloat16(bias[i]));
      m += v[i] / h;
    }
    for (int64_t i = 0; i < h; ++i) var += (v[i] - m) * (v[i] - m) / h;
    EXPECT_NEAR(mean[r], m, 1e-5);
    for (int64_t i = 0; i < h; ++i) {
      const double want = (v[i] - m) / std::sqrt(var + 1e-5) * float(BFloat16(gamma[i])) + float(BFloat16(beta[i]));
      EXPECT_NEAR(y[r * h + i], want, 0.02 * (1 + std::abs(want)));
      EXPECT_NEAR(sum[r * h + i], v[i], 0.01 * (1 + std::abs(v[i])));
    }
  }
}

TEST(ContribNorm, EmbedLayerNormCountsTheMaskAndRejectsBadIds) {
  const int64_t b = 2, s = 3, h = 4;
  const graph::Node node = ms_node(NodeBuilder("EmbedLayerNormalization"), 2);
  const auto word = random_values(5 * h, 13);
  const auto position = random_values(s * h, 14);
  const std::vector<float> gamma(h, 1.0f), beta(h, 0.0f);
  const auto run = [&](std::vector<int32_t> ids) {
    return run_kernel(node, {make_tensor<int32_t>({b, s}, ids), Tensor(), make_tensor<float>({5, h}, word),
                             make_tensor<float>({s, h}, position), Tensor(), make_tensor<float>({h}, gamma),
                             make_tensor<float>({h}, beta), make_tensor<int32_t>({b, s}, {1, 1, 0, 1, 0, 0})});
  };
  auto outputs = run({0, 1, 2, 3, 4, 0});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  EXPECT_EQ(to_vector<int32_t>((*outputs)[1]), (std::vector<int32_t>{2, 1}));
  const auto y = to_vector<float>((*outputs)[0]);
  double row_sum = 0;
  for (int64_t i = 0; i < h; ++i) row_sum += y[i];
  EXPECT_NEAR(row_sum, 0.0, 1e-5);  // gamma 1, beta 0: each row has mean 0
  auto bad = run({0, 1, 2, 3, 5, 0});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("5"), std::string::npos);
}

TEST(ContribActivation, BiasSoftmaxBroadcastsTheBias) {
  const graph::Node node =
      ms_node(NodeBuilder("BiasSoftmax").attr_int("axis", 1).attr_int("is_inner_broadcast", 0), 1);
  const std::vector<float> x = {0, 1, 2, 3, 4, 5};
  const std::vector<float> bias = {1, 0, -1};
  auto outputs = run_kernel(node, {make_tensor<float>({2, 3}, x), make_tensor<float>({1, 3}, bias)});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  const auto y = to_vector<float>((*outputs)[0]);
  for (int r = 0; r < 2; ++r) {
    double total = 0;
    for (int i = 0; i < 3; ++i) total += std::exp(double(x[r * 3 + i] + bias[i]));
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(y[r * 3 + i], std::exp(double(x[r * 3 + i] + bias[i])) / total, 1e-6);
  }
}

}  // namespace
}  // namespace nxrt::cpu::testing
