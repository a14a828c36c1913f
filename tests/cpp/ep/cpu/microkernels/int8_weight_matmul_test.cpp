// Products with packed 8-bit weights (int8_weight_matmul.h): the generic copy on panels of 8 and 16 rows, the
// dispatched one and every per-ISA copy the CPU runs, with float A against a double-precision product of the
// dequantized weights and with int8 A against the exact integer sums; row counts that exercise the 4-row tiles and
// their remainders, N not a multiple of the panel, K not a multiple of the block, codes over the whole 0..255 range.
#include "ep/cpu/microkernels/int8_weight_matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "ep/cpu/microkernels/cpu_features.h"

namespace nxrt::cpu {
namespace {

struct Case {
  int64_t rows, n, k, block;
};

// Random 8-bit weights: codes [n][k], per-block scales and zero points, MatMulNBits' blob (one byte per code, each
// block padded to block_size codes) and the offsets -zero_point * scale the repacking takes.
struct RandomWeights {
  int64_t k_blocks = 0, kp = 0;
  std::vector<std::vector<int>> codes;
  std::vector<float> scales, offsets;
  std::vector<uint8_t> blob;
};

RandomWeights random_weights(const Case& c, std::mt19937& rng) {
  std::uniform_int_distribution<int> code(0, 255);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  RandomWeights r;
  r.k_blocks = (c.k + c.block - 1) / c.block;
  r.kp = r.k_blocks * c.block;
  r.codes.assign(static_cast<size_t>(c.n), std::vector<int>(static_cast<size_t>(c.k)));
  r.blob.assign(static_cast<size_t>(c.n * r.kp), 0);
  for (int64_t n = 0; n < c.n; ++n) {
    for (int64_t k = 0; k < c.k; ++k) {
      const int v = code(rng);
      r.codes[static_cast<size_t>(n)][static_cast<size_t>(k)] = v;
      r.blob[static_cast<size_t>(n * r.kp + k)] = static_cast<uint8_t>(v);
    }
  }
  r.scales.resize(static_cast<size_t>(c.n * r.k_blocks));
  r.offsets.resize(r.scales.size());
  for (size_t i = 0; i < r.scales.size(); ++i) {
    r.scales[i] = 0.001f + 0.01f * uniform(rng);
    r.offsets[i] = -static_cast<float>(code(rng)) * r.scales[i];
  }
  return r;
}

struct Packed {
  int64_t panels = 0;
  std::vector<int8_t> codes;
  std::vector<float> scales, offsets;
  Int8Panels view(const RandomWeights& r, const Case& c, int64_t panel) const {
    return {codes.data(), scales.data(), offsets.data(), r.k_blocks, c.block, panel};
  }
};

Packed pack(const RandomWeights& r, const Case& c, int64_t panel) {
  Packed p;
  p.panels = (c.n + panel - 1) / panel;
  p.codes.resize(static_cast<size_t>(p.panels * r.kp * panel));
  p.scales.resize(static_cast<size_t>(p.panels * r.k_blocks * panel));
  p.offsets.resize(p.scales.size());
  repack_int8_weight_panels(r.blob.data(), r.scales.data(), r.offsets.data(), c.n, c.k, r.k_blocks, c.block, panel,
                            p.codes.data(), p.scales.data(), p.offsets.data());
  return p;
}

std::string describe(const Case& c) {
  return "rows " + std::to_string(c.rows) + " n " + std::to_string(c.n) + " k " + std::to_string(c.k) + " block " +
         std::to_string(c.block);
}

// Y (rows x ldy, two calls over a split of the panels as the kernel's tasks make them) against want; the column
// past N must stay untouched.
template <class Call>
void expect_product(const std::string& where, const Case& c, const std::vector<double>& want, int64_t panels,
                    const Call& call) {
  const int64_t ldy = c.n + 1;
  std::vector<float> y(static_cast<size_t>(c.rows * ldy), -7.0f);
  call(int64_t{0}, panels / 2, y.data(), ldy);
  call(panels / 2, panels, y.data(), ldy);
  for (int64_t m = 0; m < c.rows; ++m) {
    for (int64_t n = 0; n < c.n; ++n) {
      const double expected = want[static_cast<size_t>(m * c.n + n)];
      EXPECT_NEAR(y[static_cast<size_t>(m * ldy + n)], expected, 1e-5 * (1.0 + std::abs(expected)) * std::sqrt(c.k))
          << where << " at " << m << ", " << n;
    }
    EXPECT_EQ(y[static_cast<size_t>(m * ldy + c.n)], -7.0f) << where << " wrote past row " << m;
  }
}

using FloatFn = void (*)(const Int8Panels&, const float*, int64_t, const float*, int64_t, int64_t, int64_t, int64_t,
                         const float*, float*, int64_t);
using Int8Fn = void (*)(const Int8Panels&, const Int8Rows&, int64_t, int64_t, int64_t, int64_t, const float*, float*,
                        int64_t);

void check_case(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const RandomWeights r = random_weights(c, rng);
  const int64_t k_blocks = r.k_blocks, kp = r.kp;
  const int64_t lda = kp + 3;  // rows of A apart by more than the padded K; zeros past K
  std::vector<float> a(static_cast<size_t>(c.rows * lda), 0.0f), bias(static_cast<size_t>(c.n));
  std::vector<float> a_dense(static_cast<size_t>(c.rows * c.k)), a_sums(static_cast<size_t>(c.rows * k_blocks), 0.0f);
  for (int64_t m = 0; m < c.rows; ++m) {
    for (int64_t k = 0; k < c.k; ++k) {
      const float v = uniform(rng);
      a[static_cast<size_t>(m * lda + k)] = v;
      a_dense[static_cast<size_t>(m * c.k + k)] = v;
      a_sums[static_cast<size_t>(m * k_blocks + k / c.block)] += v;
    }
  }
  for (float& v : bias) v = uniform(rng);
  const auto weight = [&](int64_t n, int64_t k) {
    const size_t blk = static_cast<size_t>(n * k_blocks + k / c.block);
    return r.codes[static_cast<size_t>(n)][static_cast<size_t>(k)] * double{r.scales[blk]} + r.offsets[blk];
  };

  // Float A against the dequantized product.
  std::vector<double> want(static_cast<size_t>(c.rows * c.n));
  for (int64_t m = 0; m < c.rows; ++m) {
    for (int64_t n = 0; n < c.n; ++n) {
      double sum = bias[static_cast<size_t>(n)];
      for (int64_t k = 0; k < c.k; ++k) sum += double{a[static_cast<size_t>(m * lda + k)]} * weight(n, k);
      want[static_cast<size_t>(m * c.n + n)] = sum;
    }
  }
  std::vector<std::tuple<std::string, int64_t, FloatFn>> float_copies = {
      {"generic/8", 8, int8_weight_matmul_rows_generic},
      {"generic/16", 16, int8_weight_matmul_rows_generic},
      {"dispatched", int8_weight_panel_rows(), int8_weight_matmul_rows}};
#if defined(__x86_64__)
  if (detected_cpu_isa() >= CpuIsa::kAvx2) float_copies.emplace_back("avx2", 8, int8_weight_matmul_rows__avx2);
  if (detected_cpu_isa() >= CpuIsa::kAvx512) float_copies.emplace_back("avx512", 16, int8_weight_matmul_rows__avx512);
#endif
  for (const auto& [name, panel, copy] : float_copies) {
    const FloatFn fn = copy;  // a structured binding cannot be captured by clang 14's lambdas
    const Packed p = pack(r, c, panel);
    const Int8Panels w = p.view(r, c, panel);
    expect_product("float " + name + " " + describe(c), c, want, p.panels,
                   [&](int64_t begin, int64_t end, float* y, int64_t ldy) {
                     fn(w, a.data(), lda, a_sums.data(), c.rows, begin, end, c.n, bias.data(), y, ldy);
                   });
    // Dequantized rows match the codes, zeros past K.
    std::vector<float> rows(static_cast<size_t>(c.n * kp));
    int8_weight_dequantize_rows(w, 0, c.n, rows.data());
    for (int64_t n = 0; n < c.n; ++n) {
      for (int64_t k = 0; k < kp; ++k) {
        const float expected = k < c.k ? static_cast<float>(weight(n, k)) : 0.0f;
        const float scale = r.scales[static_cast<size_t>(n * k_blocks + k / c.block)];
        if (k < c.k) {
          EXPECT_NEAR(rows[static_cast<size_t>(n * kp + k)], expected, 1e-3f * scale) << name << " at " << n << ", " << k;
        } else {  // a zero code past K dequantizes to its block's offset; the zeros of A cancel it
          EXPECT_TRUE(std::isfinite(rows[static_cast<size_t>(n * kp + k)]));
        }
      }
    }
  }

  // Int8 A against the exact integer sums of the same quantized A.
  std::vector<int8_t> q(static_cast<size_t>(c.rows * kp));
  std::vector<float> q_scales(static_cast<size_t>(c.rows * k_blocks));
  std::vector<int32_t> q_sums(q_scales.size());
  quantize_int8_blocks(a_dense.data(), c.k, c.rows, c.k, k_blocks, c.block, q.data(), q_scales.data(), q_sums.data());
  for (int64_t m = 0; m < c.rows; ++m) {
    for (int64_t n = 0; n < c.n; ++n) {
      double total = bias[static_cast<size_t>(n)];
      for (int64_t b = 0; b < k_blocks; ++b) {
        const size_t ab = static_cast<size_t>(m * k_blocks + b);
        for (int64_t k = b * c.block; k < std::min(c.k, (b + 1) * c.block); ++k) {
          total += double{q_scales[ab]} * q[static_cast<size_t>(m * kp + k)] * weight(n, k);
        }
      }
      want[static_cast<size_t>(m * c.n + n)] = total;
    }
  }
  std::vector<std::tuple<std::string, int64_t, Int8Fn>> int8_copies = {
      {"generic/8", 8, int8_weight_matmul_int8_generic},
      {"generic/16", 16, int8_weight_matmul_int8_generic},
      {"dispatched", int8_weight_panel_rows(), int8_weight_matmul_int8}};
#if defined(__x86_64__)
  if (detected_cpu_isa() >= CpuIsa::kAvx2) int8_copies.emplace_back("avx2", 8, int8_weight_matmul_int8__avx2);
  if (detected_cpu_isa() >= CpuIsa::kAvx512) int8_copies.emplace_back("avx512", 16, int8_weight_matmul_int8__avx512);
  if (detected_cpu_isa() >= CpuIsa::kAvx512 && __builtin_cpu_supports("avx512vnni")) {
    int8_copies.emplace_back("avx512vnni", 16, int8_weight_matmul_int8__avx512vnni);
  }
#endif
  const Int8Rows rows{q.data(), q_scales.data(), q_sums.data()};
  for (const auto& [name, panel, copy] : int8_copies) {
    const Int8Fn fn = copy;
    const Packed p = pack(r, c, panel);
    const Int8Panels w = p.view(r, c, panel);
    expect_product("int8 " + name + " " + describe(c), c, want, p.panels,
                   [&](int64_t begin, int64_t end, float* y, int64_t ldy) {
                     fn(w, rows, c.rows, begin, end, c.n, bias.data(), y, ldy);
                   });
  }
}

TEST(Int8WeightMatmul, EveryCopyMatchesTheReferenceProducts) {
  const Case cases[] = {{1, 1, 16, 16},   {1, 9, 100, 32},  {2, 16, 64, 64},    {3, 17, 200, 128},
                        {4, 33, 256, 32}, {5, 8, 96, 16},   {9, 6, 40, 32},     {1, 40, 1000, 256},
                        {7, 5, 160, 64},  {16, 12, 64, 32}, {1, 64, 512, 128}};
  uint32_t seed = 100;
  for (const Case& c : cases) check_case(c, seed++);
}

// The extremes of the signed codes (stored 0 and 255 become -128 and 127) against A at +-127 after quantization: the
// int16 pair sums of the byte products must not saturate.
TEST(Int8WeightMatmul, ExtremeCodesAndValuesDoNotSaturate) {
  const Case c{2, 16, 64, 32};
  RandomWeights r;
  r.k_blocks = 2;
  r.kp = 64;
  r.codes.assign(16, std::vector<int>(64));
  r.blob.assign(16 * 64, 0);
  for (int64_t n = 0; n < 16; ++n) {
    for (int64_t k = 0; k < 64; ++k) {
      const int v = (n + k) % 3 == 0 ? 255 : 0;
      r.codes[static_cast<size_t>(n)][static_cast<size_t>(k)] = v;
      r.blob[static_cast<size_t>(n * 64 + k)] = static_cast<uint8_t>(v);
    }
  }
  r.scales.assign(32, 1.0f);
  r.offsets.assign(32, -128.0f);
  std::vector<float> a(2 * 64);
  for (size_t i = 0; i < a.size(); ++i) a[i] = (i % 2 == 0) ? 1.0f : -1.0f;
  std::vector<int8_t> q(2 * 64);
  std::vector<float> q_scales(4);
  std::vector<int32_t> q_sums(4);
  quantize_int8_blocks(a.data(), 64, 2, 64, 2, 32, q.data(), q_scales.data(), q_sums.data());
  std::vector<double> want(2 * 16, 0.0);
  for (int64_t m = 0; m < 2; ++m) {
    for (int64_t n = 0; n < 16; ++n) {
      double sum = 0.0;
      for (int64_t k = 0; k < 64; ++k) sum += a[static_cast<size_t>(m * 64 + k)] * (r.codes[static_cast<size_t>(n)][static_cast<size_t>(k)] - 128.0);
      want[static_cast<size_t>(m * 16 + n)] = sum;
    }
  }
  std::vector<std::tuple<std::string, int64_t, Int8Fn>> copies = {{"generic", 8, int8_weight_matmul_int8_generic}};
#if defined(__x86_64__)
  if (detected_cpu_isa() >= CpuIsa::kAvx2) copies.emplace_back("avx2", 8, int8_weight_matmul_int8__avx2);
  if (detected_cpu_isa() >= CpuIsa::kAvx512) copies.emplace_back("avx512", 16, int8_weight_matmul_int8__avx512);
  if (detected_cpu_isa() >= CpuIsa::kAvx512 && __builtin_cpu_supports("avx512vnni")) {
    copies.emplace_back("avx512vnni", 16, int8_weight_matmul_int8__avx512vnni);
  }
#endif
  const Int8Rows rows{q.data(), q_scales.data(), q_sums.data()};
  for (const auto& [name, panel, copy] : copies) {
    const Int8Fn fn = copy;
    const Packed p = pack(r, c, panel);
    const Int8Panels w = p.view(r, c, panel);
    expect_product("extremes " + name, c, want, p.panels, [&](int64_t begin, int64_t end, float* y, int64_t ldy) {
      fn(w, rows, c.rows, begin, end, c.n, nullptr, y, ldy);
    });
  }
}

}  // namespace
}  // namespace nxrt::cpu

namespace nxrt::cpu {
namespace {

// Null offsets stand for the implicit zero point 128 (stored offsets of 0): the same results, bit for bit.
TEST(Int8WeightMatmul, NoOffsetsMeansZeroPoint128) {
  const Case c{3, 21, 96, 32};
  std::mt19937 rng(9);
  RandomWeights r = random_weights(c, rng);
  for (size_t i = 0; i < r.scales.size(); ++i) r.offsets[i] = -128.0f * r.scales[i];
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(c.rows * r.kp), 0.0f), a_sums(static_cast<size_t>(c.rows * r.k_blocks), 0.0f);
  for (int64_t m = 0; m < c.rows; ++m) {
    for (int64_t k = 0; k < c.k; ++k) {
      a[static_cast<size_t>(m * r.kp + k)] = uniform(rng);
      a_sums[static_cast<size_t>(m * r.k_blocks + k / c.block)] += a[static_cast<size_t>(m * r.kp + k)];
    }
  }
  std::vector<int8_t> q(static_cast<size_t>(c.rows * r.kp));
  std::vector<float> q_scales(static_cast<size_t>(c.rows * r.k_blocks));
  std::vector<int32_t> q_sums(q_scales.size());
  quantize_int8_blocks(a.data(), r.kp, c.rows, c.k, r.k_blocks, c.block, q.data(), q_scales.data(), q_sums.data());
  const Int8Rows rows{q.data(), q_scales.data(), q_sums.data()};
  std::vector<std::tuple<int64_t, FloatFn, Int8Fn>> copies = {
      {8, int8_weight_matmul_rows_generic, int8_weight_matmul_int8_generic},
      {16, int8_weight_matmul_rows_generic, int8_weight_matmul_int8_generic}};
#if defined(__x86_64__)
  if (detected_cpu_isa() >= CpuIsa::kAvx2) {
    copies.emplace_back(8, int8_weight_matmul_rows__avx2, int8_weight_matmul_int8__avx2);
  }
  if (detected_cpu_isa() >= CpuIsa::kAvx512) {
    copies.emplace_back(16, int8_weight_matmul_rows__avx512, int8_weight_matmul_int8__avx512);
  }
  if (detected_cpu_isa() >= CpuIsa::kAvx512 && __builtin_cpu_supports("avx512vnni")) {
    copies.emplace_back(16, int8_weight_matmul_rows__avx512, int8_weight_matmul_int8__avx512vnni);
  }
#endif
  for (const auto& [panel, float_fn, int8_fn] : copies) {
    const Packed with = pack(r, c, panel);
    Packed without = with;
    repack_int8_weight_panels(r.blob.data(), r.scales.data(), nullptr, c.n, c.k, r.k_blocks, c.block, panel,
                              without.codes.data(), without.scales.data(), nullptr);
    Int8Panels implicit = without.view(r, c, panel);
    implicit.offsets = nullptr;
    const Int8Panels explicit_zero = with.view(r, c, panel);
    std::vector<float> y1(static_cast<size_t>(c.rows * c.n)), y2(y1.size()), y3(y1.size()), y4(y1.size());
    float_fn(explicit_zero, a.data(), r.kp, a_sums.data(), c.rows, 0, with.panels, c.n, nullptr, y1.data(), c.n);
    float_fn(implicit, a.data(), r.kp, a_sums.data(), c.rows, 0, with.panels, c.n, nullptr, y2.data(), c.n);
    int8_fn(explicit_zero, rows, c.rows, 0, with.panels, c.n, nullptr, y3.data(), c.n);
    int8_fn(implicit, rows, c.rows, 0, with.panels, c.n, nullptr, y4.data(), c.n);
    EXPECT_EQ(y1, y2) << "float A, panel " << panel;
    EXPECT_EQ(y3, y4) << "int8 A, panel " << panel;
  }
}

// The VNNI copy forms the same integer sums as the AVX-512 copy without VNNI and then the same float steps: equal
// results bit for bit, with and without offsets, at every row count of A up to two passes of 8.
TEST(Int8WeightMatmul, VnniCopyEqualsTheAvx512CopyBitForBit) {
#if defined(__x86_64__)
  if (detected_cpu_isa() < CpuIsa::kAvx512 || !__builtin_cpu_supports("avx512vnni")) {
    GTEST_SKIP() << "the CPU has no AVX512_VNNI";
  }
  std::mt19937 rng(21);
  for (int64_t rows_of_a : {1, 3, 8, 9, 16}) {
    const Case c{rows_of_a, 37, 160, 32};
    const RandomWeights r = random_weights(c, rng);
    std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
    std::vector<float> a(static_cast<size_t>(c.rows * r.kp), 0.0f);
    for (int64_t m = 0; m < c.rows; ++m) {
      for (int64_t k = 0; k < c.k; ++k) a[static_cast<size_t>(m * r.kp + k)] = uniform(rng);
    }
    std::vector<int8_t> q(static_cast<size_t>(c.rows * r.kp));
    std::vector<float> q_scales(static_cast<size_t>(c.rows * r.k_blocks));
    std::vector<int32_t> q_sums(q_scales.size());
    quantize_int8_blocks(a.data(), r.kp, c.rows, c.k, r.k_blocks, c.block, q.data(), q_scales.data(), q_sums.data());
    const Int8Rows rows{q.data(), q_scales.data(), q_sums.data()};
    const Packed p = pack(r, c, 16);
    for (bool offsets : {true, false}) {
      Int8Panels w = p.view(r, c, 16);
      if (!offsets) w.offsets = nullptr;
      std::vector<float> plain(static_cast<size_t>(c.rows * c.n)), vnni(plain.size());
      int8_weight_matmul_int8__avx512(w, rows, c.rows, 0, p.panels, c.n, nullptr, plain.data(), c.n);
      int8_weight_matmul_int8__avx512vnni(w, rows, c.rows, 0, p.panels, c.n, nullptr, vnni.data(), c.n);
      EXPECT_EQ(plain, vnni) << c.rows << " rows of A, offsets " << offsets;
    }
  }
#else
  GTEST_SKIP() << "not an x86-64 build";
#endif
}

}  // namespace
}  // namespace nxrt::cpu
