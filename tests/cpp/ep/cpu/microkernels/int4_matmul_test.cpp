// Products with packed 4-bit weights (int4_matmul.h) against a double-precision product of the dequantized
// weights: the generic copy, the dispatched one (the active tier) and every per-ISA copy the CPU runs, over row
// counts that exercise the 4 x 4 tiles and their remainders, several block sizes and a K that is not a multiple
// of the block.
#include "ep/cpu/microkernels/int4_matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ep/cpu/microkernels/cpu_features.h"

namespace nxrt::cpu {
namespace {

using MatmulFn = void (*)(const Int4Weights&, const float*, int64_t, int64_t, int64_t, int64_t, const float*, float*,
                          int64_t);

struct Case {
  int64_t rows, n, k, block;
};

using Int8Fn = void (*)(const Int4Panels&, const Int8Rows&, int64_t, int64_t, int64_t, int64_t, const float*, float*,
                        int64_t);
struct Int8Copy {
  std::string name;
  int64_t panel;
  Int8Fn fn;
};

// The portable int8-A product at both panel widths and every per-ISA copy this CPU runs.
std::vector<Int8Copy> int8_copies() {
  std::vector<Int8Copy> copies = {{"generic/8", 8, int4_matmul_int8_generic},
                                  {"generic/16", 16, int4_matmul_int8_generic}};
#if defined(__x86_64__)
  if (detected_cpu_isa() >= CpuIsa::kAvx2) copies.push_back({"avx2", 16, int4_matmul_int8__avx2});
  if (detected_cpu_isa() >= CpuIsa::kAvx512) copies.push_back({"avx512", 16, int4_matmul_int8__avx512});
  if (detected_cpu_isa() >= CpuIsa::kAvx512 && __builtin_cpu_supports("avx512vnni")) {
    copies.push_back({"avx512vnni", 16, int4_matmul_int8__avx512vnni});
  }
#endif
  return copies;
}

// Codes in MatMulNBits' layout (low nibble first, each block padded to block_size codes) from codes[n][k].
std::vector<uint8_t> matmul_nbits_blob(const std::vector<std::vector<int>>& codes, int64_t k_blocks, int64_t block) {
  std::vector<uint8_t> blob(codes.size() * static_cast<size_t>(k_blocks * block / 2), 0);
  for (size_t n = 0; n < codes.size(); ++n) {
    for (size_t k = 0; k < codes[n].size(); ++k) {
      const size_t at = n * static_cast<size_t>(k_blocks * block / 2) + k / 2;
      blob[at] = static_cast<uint8_t>(blob[at] | (codes[n][k] << ((k % 2) * 4)));
    }
  }
  return blob;
}

// Random codes [n][k], per-block scales and offsets, and the codes in MatMulNBits' layout.
struct RandomWeights {
  int64_t k_blocks = 0, kp = 0;
  std::vector<std::vector<int>> codes;
  std::vector<float> scales, offsets;
  std::vector<uint8_t> blob;
};

RandomWeights random_weights(const Case& c, std::mt19937& rng) {
  std::uniform_int_distribution<int> code(0, 15);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  RandomWeights r;
  r.k_blocks = (c.k + c.block - 1) / c.block;
  r.kp = r.k_blocks * c.block;
  r.codes.assign(static_cast<size_t>(c.n), std::vector<int>(static_cast<size_t>(c.k)));
  for (auto& row : r.codes) {
    for (int& v : row) v = code(rng);
  }
  r.scales.resize(static_cast<size_t>(c.n * r.k_blocks));
  r.offsets.resize(r.scales.size());
  for (size_t i = 0; i < r.scales.size(); ++i) {
    r.scales[i] = 0.01f + 0.1f * std::abs(uniform(rng));
    r.offsets[i] = -static_cast<float>(code(rng)) * r.scales[i];
  }
  r.blob = matmul_nbits_blob(r.codes, r.k_blocks, c.block);
  return r;
}

void check_case(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const RandomWeights r = random_weights(c, rng);
  const int64_t k_blocks = r.k_blocks, kp = r.kp;
  const auto& codes = r.codes;
  const auto& scales = r.scales;
  const auto& offsets = r.offsets;
  const auto& blob = r.blob;
  std::vector<uint8_t> packed(blob.size());
  repack_int4_codes(blob.data(), c.n, c.k, k_blocks, c.block, packed.data());
  const Int4Weights w{packed.data(), scales.data(), offsets.data(), k_blocks, c.block};

  const int64_t lda = kp + 3;  // rows of A apart by more than the padded K
  std::vector<float> a(static_cast<size_t>(c.rows * lda), 0.0f), bias(static_cast<size_t>(c.n));
  for (int64_t m = 0; m < c.rows; ++m) {
    for (int64_t k = 0; k < c.k; ++k) a[static_cast<size_t>(m * lda + k)] = uniform(rng);
  }
  for (float& v : bias) v = uniform(rng);

  std::vector<double> want(static_cast<size_t>(c.rows * c.n));
  for (int64_t m = 0; m < c.rows; ++m) {
    for (int64_t n = 0; n < c.n; ++n) {
      double sum = bias[static_cast<size_t>(n)];
      for (int64_t k = 0; k < c.k; ++k) {
        const size_t blk = static_cast<size_t>(n * k_blocks + k / c.block);
        const double weight = codes[static_cast<size_t>(n)][static_cast<size_t>(k)] * double{scales[blk]} + offsets[blk];
        sum += double{a[static_cast<size_t>(m * lda + k)]} * weight;
      }
      want[static_cast<size_t>(m * c.n + n)] = sum;
    }
  }

  std::vector<std::pair<std::string, MatmulFn>> copies = {{"generic", int4_matmul_rows_generic},
                                                          {"dispatched", int4_matmul_rows}};
#if defined(__x86_64__)
  if (detected_cpu_isa() >= CpuIsa::kAvx2) copies.emplace_back("avx2", int4_matmul_rows__avx2);
  if (detected_cpu_isa() >= CpuIsa::kAvx512) copies.emplace_back("avx512", int4_matmul_rows__avx512);
#endif
  const std::string where = "rows " + std::to_string(c.rows) + " n " + std::to_string(c.n) + " k " +
                            std::to_string(c.k) + " block " + std::to_string(c.block);
  for (const auto& [name, fn] : copies) {
    const int64_t ldy = c.n + 1;
    std::vector<float> y(static_cast<size_t>(c.rows * ldy), -7.0f);
    // Two calls over a split of the weight rows, as the kernel's tasks make them.
    const int64_t split = c.n / 3;
    fn(w, a.data(), lda, c.rows, 0, split, bias.data(), y.data(), ldy);
    fn(w, a.data(), lda, c.rows, split, c.n, bias.data(), y.data(), ldy);
    for (int64_t m = 0; m < c.rows; ++m) {
      for (int64_t n = 0; n < c.n; ++n) {
        const double expected = want[static_cast<size_t>(m * c.n + n)];
        EXPECT_NEAR(y[static_cast<size_t>(m * ldy + n)], expected, 1e-5 * (1.0 + std::abs(expected)) * std::sqrt(c.k))
            << name << " " << where << " at " << m << ", " << n;
      }
      EXPECT_EQ(y[static_cast<size_t>(m * ldy + c.n)], -7.0f) << name << " wrote past row " << m;
    }
  }

  // Dequantized rows match the codes.
  std::vector<float> rows(static_cast<size_t>(c.n * kp));
  int4_dequantize_rows(w, 0, c.n, rows.data());
  for (int64_t n = 0; n < c.n; ++n) {
    for (int64_t k = 0; k < kp; ++k) {
      const size_t blk = static_cast<size_t>(n * k_blocks + k / c.block);
      const int q = k < c.k ? codes[static_cast<size_t>(n)][static_cast<size_t>(k)] : 0;
      EXPECT_FLOAT_EQ(rows[static_cast<size_t>(n * kp + k)], static_cast<float>(q) * scales[blk] + offsets[blk])
          << where << " at " << n << ", " << k;
    }
  }
}

TEST(Int4Matmul, EveryCopyMatchesTheDequantizedProduct) {
  const Case cases[] = {{1, 1, 32, 32},   {1, 9, 100, 32},  {2, 4, 64, 64},   {3, 7, 200, 128},
                        {4, 13, 256, 32}, {5, 8, 96, 32},   {9, 6, 33, 32},   {1, 17, 1000, 256},
                        {7, 5, 160, 64},  {16, 12, 64, 32}, {1, 64, 512, 128}};
  uint32_t seed = 1;
  for (const Case& c : cases) check_case(c, seed++);
}

// The int8-A products on panels of 8 and 16 rows against the exact integer sums of the same quantized A.
void check_int8_case(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const RandomWeights r = random_weights(c, rng);
  const int64_t k_blocks = r.k_blocks, kp = r.kp;
  const auto& codes = r.codes;
  const auto& scales = r.scales;
  const auto& offsets = r.offsets;
  const auto& blob = r.blob;
  std::vector<float> a(static_cast<size_t>(c.rows * c.k)), bias(static_cast<size_t>(c.n));
  for (float& v : a) v = uniform(rng);
  for (float& v : bias) v = uniform(rng);
  std::vector<int8_t> q(static_cast<size_t>(c.rows * kp));
  std::vector<float> a_scales(static_cast<size_t>(c.rows * k_blocks));
  std::vector<int32_t> a_sums(a_scales.size());
  quantize_int8_blocks(a.data(), c.k, c.rows, c.k, k_blocks, c.block, q.data(), a_scales.data(), a_sums.data());
  for (int64_t m = 0; m < c.rows; ++m) {
    for (int64_t b = 0; b < k_blocks; ++b) {  // the quantization: |q| <= 127, within half a step of a / scale
      int32_t sum = 0;
      for (int64_t t = 0; t < c.block; ++t) {
        const int64_t k = b * c.block + t;
        const int v = q[static_cast<size_t>(m * kp + k)];
        sum += v;
        if (k >= c.k) {
          EXPECT_EQ(v, 0);
          continue;
        }
        const float scale = a_scales[static_cast<size_t>(m * k_blocks + b)];
        EXPECT_LE(std::abs(v), 127);
        EXPECT_NEAR(v * scale, a[static_cast<size_t>(m * c.k + k)], 0.5001f * scale);
      }
      EXPECT_EQ(sum, a_sums[static_cast<size_t>(m * k_blocks + b)]);
    }
  }
  std::vector<double> want(static_cast<size_t>(c.rows * c.n));
  for (int64_t m = 0; m < c.rows; ++m) {
    for (int64_t n = 0; n < c.n; ++n) {
      double total = bias[static_cast<size_t>(n)];
      for (int64_t b = 0; b < k_blocks; ++b) {
        int64_t dot = 0;
        for (int64_t k = b * c.block; k < std::min(c.k, (b + 1) * c.block); ++k) {
          dot += codes[static_cast<size_t>(n)][static_cast<size_t>(k)] * q[static_cast<size_t>(m * kp + k)];
        }
        const size_t wb = static_cast<size_t>(n * k_blocks + b), ab = static_cast<size_t>(m * k_blocks + b);
        total += double{a_scales[ab]} * (double{scales[wb]} * dot + double{offsets[wb]} * a_sums[ab]);
      }
      want[static_cast<size_t>(m * c.n + n)] = total;
    }
  }
  std::vector<Int8Copy> copies = int8_copies();
  copies.push_back({"dispatched", int4_panel_rows(), int4_matmul_int8});
  const std::string where = "rows " + std::to_string(c.rows) + " n " + std::to_string(c.n) + " k " +
                            std::to_string(c.k) + " block " + std::to_string(c.block);
  std::vector<float> scaled_sums(a_scales.size());
  scale_block_sums(a_scales.data(), a_sums.data(), static_cast<int64_t>(a_scales.size()), scaled_sums.data());
  const Int8Rows rows{q.data(), a_scales.data(), a_sums.data(), scaled_sums.data()};
  for (const auto& [name, panel, fn] : copies) {
    const int64_t panels = (c.n + panel - 1) / panel;
    std::vector<uint8_t> packed(static_cast<size_t>(panels * kp * panel / 2));
    std::vector<float> panel_scales(static_cast<size_t>(panels * k_blocks * panel)), panel_offsets(panel_scales.size());
    repack_int4_panels(blob.data(), scales.data(), offsets.data(), c.n, c.k, k_blocks, c.block, panel, packed.data(),
                       panel_scales.data(), panel_offsets.data());
    const Int4Panels w{packed.data(), panel_scales.data(), panel_offsets.data(), k_blocks, c.block, panel};
    const int64_t ldy = c.n + 1;
    std::vector<float> y(static_cast<size_t>(c.rows * ldy), -7.0f);
    fn(w, rows, c.rows, 0, panels / 2, c.n, bias.data(), y.data(), ldy);
    fn(w, rows, c.rows, panels / 2, panels, c.n, bias.data(), y.data(), ldy);
    for (int64_t m = 0; m < c.rows; ++m) {
      for (int64_t n = 0; n < c.n; ++n) {
        const double expected = want[static_cast<size_t>(m * c.n + n)];
        EXPECT_NEAR(y[static_cast<size_t>(m * ldy + n)], expected, 1e-5 * (1.0 + std::abs(expected)) * std::sqrt(c.k))
            << name << " " << where << " at " << m << ", " << n;
      }
      EXPECT_EQ(y[static_cast<size_t>(m * ldy + c.n)], -7.0f) << name << " wrote past row " << m;
    }
  }
}

TEST(Int4Matmul, Int8ProductsOnEveryPanelWidthMatchTheIntegerSums) {
  const Case cases[] = {{1, 1, 16, 16},  {1, 9, 100, 32},  {2, 16, 64, 64},   {3, 17, 200, 128},
                        {4, 33, 256, 32}, {5, 8, 96, 16},   {9, 6, 40, 32},    {1, 40, 1000, 256},
                        {8, 20, 128, 32}, {19, 33, 96, 32}};
  uint32_t seed = 50;
  for (const Case& c : cases) check_int8_case(c, seed++);
}

}  // namespace
}  // namespace nxrt::cpu

namespace nxrt::cpu {
namespace {

// Null offsets stand for the implicit zero point 8: the same results, bit for bit, as offsets of -8 * scale.
TEST(Int4Matmul, Int8ProductsWithoutOffsetsUseZeroPointEight) {
  const Case c{3, 21, 96, 32};
  std::mt19937 rng(7);
  RandomWeights r = random_weights(c, rng);
  for (size_t i = 0; i < r.scales.size(); ++i) r.offsets[i] = -8.0f * r.scales[i];
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(c.rows * c.k));
  for (float& v : a) v = uniform(rng);
  std::vector<int8_t> q(static_cast<size_t>(c.rows * r.kp));
  std::vector<float> a_scales(static_cast<size_t>(c.rows * r.k_blocks));
  std::vector<int32_t> a_sums(a_scales.size());
  quantize_int8_blocks(a.data(), c.k, c.rows, c.k, r.k_blocks, c.block, q.data(), a_scales.data(), a_sums.data());
  std::vector<float> scaled_sums(a_scales.size());
  scale_block_sums(a_scales.data(), a_sums.data(), static_cast<int64_t>(a_scales.size()), scaled_sums.data());
  const Int8Rows rows{q.data(), a_scales.data(), a_sums.data(), scaled_sums.data()};
  const std::vector<Int8Copy> copies = int8_copies();
  for (const auto& [name, panel, fn] : copies) {
    const int64_t panels = (c.n + panel - 1) / panel;
    std::vector<uint8_t> packed(static_cast<size_t>(panels * r.kp * panel / 2));
    std::vector<float> panel_scales(static_cast<size_t>(panels * r.k_blocks * panel));
    std::vector<float> panel_offsets(panel_scales.size());
    repack_int4_panels(r.blob.data(), r.scales.data(), r.offsets.data(), c.n, c.k, r.k_blocks, c.block, panel,
                       packed.data(), panel_scales.data(), panel_offsets.data());
    std::vector<float> with(static_cast<size_t>(c.rows * c.n)), without(with.size());
    const Int4Panels explicit_offsets{packed.data(), panel_scales.data(), panel_offsets.data(),
                                      r.k_blocks, c.block, panel};
    const Int4Panels implicit_offsets{packed.data(), panel_scales.data(), nullptr, r.k_blocks, c.block, panel};
    fn(explicit_offsets, rows, c.rows, 0, panels, c.n, nullptr, with.data(), c.n);
    fn(implicit_offsets, rows, c.rows, 0, panels, c.n, nullptr, without.data(), c.n);
    EXPECT_EQ(with, without) << name;
  }
}

}  // namespace
}  // namespace nxrt::cpu

namespace nxrt::cpu {
namespace {

// Every copy of quantize_int8_blocks gives the generic copy's bytes, scales and sums exactly, over blocks that end
// inside K, all-zero blocks, halfway values (round half to even), NaN and infinities, subnormal maxima.
TEST(Int4Matmul, Int8QuantizationCopiesMatchTheGenericOneExactly) {
  using QuantizeFn = void (*)(const float*, int64_t, int64_t, int64_t, int64_t, int64_t, int8_t*, float*, int32_t*);
  std::vector<std::pair<std::string, QuantizeFn>> copies = {{"dispatched", quantize_int8_blocks}};
#if defined(__x86_64__)
  if (detected_cpu_isa() >= CpuIsa::kAvx2) copies.emplace_back("avx2", quantize_int8_blocks__avx2);
  if (detected_cpu_isa() >= CpuIsa::kAvx512) copies.emplace_back("avx512", quantize_int8_blocks__avx512);
#endif
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
  const struct {
    int64_t rows, k, block;
  } shapes[] = {{1, 16, 16}, {3, 100, 32}, {2, 40, 8}, {4, 250, 64}, {2, 12, 12}, {1, 5, 24}};
  for (const auto& shape : shapes) {
    const int64_t k_blocks = (shape.k + shape.block - 1) / shape.block, kp = k_blocks * shape.block;
    const int64_t lda = shape.k + 3;
    std::vector<float> a(static_cast<size_t>(shape.rows * lda));
    for (float& v : a) v = uniform(rng);
    a[1] = 127.0f;  // with max 127 at the front of row 0's first block, 0.5 and 2.5 sit halfway between codes
    a[2] = 0.5f;
    a[3] = 2.5f;
    if (shape.rows > 1) {
      for (int64_t t = 0; t < std::min(shape.k, shape.block); ++t) a[static_cast<size_t>(lda + t)] = 0.0f;
    }
    if (shape.rows > 2) {
      a[static_cast<size_t>(2 * lda + 1)] = std::nanf("");
      if (shape.k > shape.block) a[static_cast<size_t>(2 * lda + shape.block)] = INFINITY;
      if (shape.k > shape.block + 1) a[static_cast<size_t>(2 * lda + shape.block + 1)] = -INFINITY;
    }
    if (shape.rows > 3) {
      // A block of subnormals and zeros: 127 / max overflows to infinity, so codes saturate and 0 * inf is no NaN.
      for (int64_t t = 0; t < std::min(shape.k, shape.block); ++t) {
        a[static_cast<size_t>(3 * lda + t)] = t % 3 == 0 ? 0.0f : (t % 3 == 1 ? 1e-45f : -3e-45f);
      }
    }
    const auto run = [&](QuantizeFn fn, std::vector<int8_t>& q, std::vector<float>& scales, std::vector<int32_t>& sums) {
      q.assign(static_cast<size_t>(shape.rows * kp), 99);
      scales.assign(static_cast<size_t>(shape.rows * k_blocks), -1.0f);
      sums.assign(scales.size(), -1);
      fn(a.data(), lda, shape.rows, shape.k, k_blocks, shape.block, q.data(), scales.data(), sums.data());
    };
    std::vector<int8_t> want_q;
    std::vector<float> want_scales;
    std::vector<int32_t> want_sums;
    run(quantize_int8_blocks_generic, want_q, want_scales, want_sums);
    EXPECT_EQ(want_q[2], 0) << "0.5 rounds to the even 0";
    EXPECT_EQ(want_q[3], 2) << "2.5 rounds to the even 2";
    for (const auto& [name, fn] : copies) {
      std::vector<int8_t> q;
      std::vector<float> scales;
      std::vector<int32_t> sums;
      run(fn, q, scales, sums);
      const std::string where = name + " rows " + std::to_string(shape.rows) + " k " + std::to_string(shape.k) +
                                " block " + std::to_string(shape.block);
      EXPECT_EQ(q, want_q) << where;
      EXPECT_EQ(sums, want_sums) << where;
      ASSERT_EQ(scales.size(), want_scales.size());
      for (size_t i = 0; i < scales.size(); ++i) {
        if (std::isnan(want_scales[i])) {
          EXPECT_TRUE(std::isnan(scales[i])) << where << " scale " << i;
        } else {
          EXPECT_EQ(scales[i], want_scales[i]) << where << " scale " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace nxrt::cpu

namespace nxrt::cpu {
namespace {

// The largest products the int8 kernels can meet (every code 15, every A byte +-127) over long blocks: the 16-bit
// partial sums of the non-VNNI copies must not wrap.
TEST(Int4Matmul, Int8ProductsOfTheLargestCodesAndBytesDoNotWrap) {
  const std::vector<Int8Copy> copies = int8_copies();
  for (const int64_t block : {32, 128}) {
    const int64_t n = 16, k = 256, k_blocks = k / block, rows = 2;
    const std::vector<uint8_t> blob(static_cast<size_t>(n * k / 2), 0xFF);  // every code 15
    const std::vector<float> scales(static_cast<size_t>(n * k_blocks), 1.0f), offsets(scales.size(), 0.0f);
    std::vector<float> a(static_cast<size_t>(rows * k), 1.0f);
    std::fill(a.begin() + k, a.end(), -1.0f);  // row 1: every byte -127
    std::vector<int8_t> q(static_cast<size_t>(rows * k));
    std::vector<float> a_scales(static_cast<size_t>(rows * k_blocks));
    std::vector<int32_t> a_sums(a_scales.size());
    quantize_int8_blocks(a.data(), k, rows, k, k_blocks, block, q.data(), a_scales.data(), a_sums.data());
    ASSERT_EQ(q[0], 127);
    ASSERT_EQ(q[static_cast<size_t>(k)], -127);
    std::vector<float> scaled_sums(a_scales.size());
    scale_block_sums(a_scales.data(), a_sums.data(), static_cast<int64_t>(a_scales.size()), scaled_sums.data());
    for (const auto& [name, panel, fn] : copies) {
      const int64_t panels = n / panel;
      std::vector<uint8_t> packed(static_cast<size_t>(panels * k * panel / 2));
      std::vector<float> panel_scales(static_cast<size_t>(panels * k_blocks * panel));
      std::vector<float> panel_offsets(panel_scales.size());
      repack_int4_panels(blob.data(), scales.data(), offsets.data(), n, k, k_blocks, block, panel, packed.data(),
                         panel_scales.data(), panel_offsets.data());
      const Int4Panels w{packed.data(), panel_scales.data(), panel_offsets.data(), k_blocks, block, panel};
      std::vector<float> y(static_cast<size_t>(rows * n));
      fn(w, Int8Rows{q.data(), a_scales.data(), a_sums.data(), scaled_sums.data()}, rows, 0, panels, n, nullptr,
         y.data(), n);
      for (int64_t j = 0; j < n; ++j) {
        EXPECT_NEAR(y[static_cast<size_t>(j)], 15.0f * k, 1e-3f * k) << name << " block " << block;
        EXPECT_NEAR(y[static_cast<size_t>(n + j)], -15.0f * k, 1e-3f * k) << name << " block " << block;
      }
    }
  }
}

}  // namespace
}  // namespace nxrt::cpu
