// AVX2 products with packed 4-bit weights (contract and layout in ep/cpu/microkernels/int4_matmul.h). Compiled with
// -mavx2 -mfma; callers check the CPU first.
//
// Float A: a tile is NT weight rows by M rows of A. Each 16-byte group of codes is widened once per weight row as two
// halves of 8 bytes, each split into its low nibbles (codes j) and high nibbles (codes j + 16), dequantized with
// one FMA each and used for all M rows of A.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ep/cpu/microkernels/avx2/vector_lanes_avx2.h"
#include "ep/cpu/microkernels/int4_matmul.h"

namespace nxrt::cpu {

namespace {

template <int NT, int M>
void int4_tile(const Int4Weights& w, const float* a, int64_t lda, int64_t n0, const float* bias, float* y,
               int64_t ldy) {
  // One accumulator per (row, A row) leaves a single FMA chain per row at M = 1; two halve its latency.
  constexpr int kSplit = M == 1 ? 2 : 1;
  __m256 acc[NT][M][kSplit];
  for (auto& row : acc) {
    for (auto& parts : row) {
      for (auto& v : parts) v = _mm256_setzero_ps();
    }
  }
  const int64_t block_bytes = w.block / 2;
  const __m256i low_nibble = _mm256_set1_epi32(0xF);
  for (int64_t b = 0; b < w.k_blocks; ++b) {
    const uint8_t* codes[NT];
    for (int t = 0; t < NT; ++t) codes[t] = w.codes + ((n0 + t) * w.k_blocks + b) * block_bytes;
    for (int64_t g = 0; g < w.block / 32; ++g) {
      const int64_t k = b * w.block + g * 32;
      for (int t = 0; t < NT; ++t) {
        const int64_t at = (n0 + t) * w.k_blocks + b;
        const __m256 scale = _mm256_broadcast_ss(w.scales + at);
        const __m256 offset = _mm256_broadcast_ss(w.offsets + at);
        for (int half = 0; half < 2; ++half) {
          const __m256i bytes = _mm256_cvtepu8_epi32(
              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes[t] + g * 16 + half * 8)));
          const __m256 low =
              _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(bytes, low_nibble)), scale, offset);
          const __m256 high = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(bytes, 4)), scale, offset);
          for (int m = 0; m < M; ++m) {
            const float* a_row = a + m * lda + k + half * 8;
            acc[t][m][0] = _mm256_fmadd_ps(low, _mm256_loadu_ps(a_row), acc[t][m][0]);
            acc[t][m][kSplit - 1] = _mm256_fmadd_ps(high, _mm256_loadu_ps(a_row + 16), acc[t][m][kSplit - 1]);
          }
        }
      }
    }
  }
  for (int t = 0; t < NT; ++t) {
    for (int m = 0; m < M; ++m) {
      __m256 total = acc[t][m][0];
      if constexpr (kSplit == 2) total = _mm256_add_ps(total, acc[t][m][1]);
      const float sum = avx2_lanes::sum_lanes(total);
      y[m * ldy + n0 + t] = bias != nullptr ? sum + bias[n0 + t] : sum;
    }
  }
}

using TileFn = void (*)(const Int4Weights&, const float*, int64_t, int64_t, const float*, float*, int64_t);
constexpr TileFn kFourRowTiles[4] = {int4_tile<4, 1>, int4_tile<4, 2>, int4_tile<4, 3>, int4_tile<4, 4>};
constexpr TileFn kOneRowTiles[4] = {int4_tile<1, 1>, int4_tile<1, 2>, int4_tile<1, 3>, int4_tile<1, 4>};

constexpr int64_t kPrefetchBytes = 4096;
// Chunks of 8 k's whose byte products may add up in 16 bits: per chunk and lane, two pairs of a code (0..15) times
// an A byte (|q| <= 127, as quantize_int8_blocks makes them) reach at most 2 x 2 x 15 x 127 = 7620, so four chunks
// stay below 32767.
constexpr int64_t kChunksPer16Bits = 4;

// The byte products of one 8-k chunk of a panel (64 code bytes: rows 0-7, then rows 8-15) with M rows of A, added
// in 16 bits to pairs[m][half]. Each broadcast of A's bytes serves both halves of the panel.
template <int M>
inline __attribute__((always_inline)) void add_chunk(const uint8_t* codes, const int8_t* q, int64_t kp,
                                                     __m256i (&pairs)[M][2]) {
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  __m256i low[2], high[2];
  for (int h = 0; h < 2; ++h) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 32 * h));
    low[h] = _mm256_and_si256(bytes, nibble);
    high[h] = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), nibble);
  }
  for (int m = 0; m < M; ++m) {
    int32_t first, second;
    std::memcpy(&first, q + m * kp, 4);
    std::memcpy(&second, q + m * kp + 4, 4);
    const __m256i first_k = _mm256_set1_epi32(first), second_k = _mm256_set1_epi32(second);
    for (int h = 0; h < 2; ++h) {
      pairs[m][h] = _mm256_add_epi16(pairs[m][h], _mm256_maddubs_epi16(low[h], first_k));
      pairs[m][h] = _mm256_add_epi16(pairs[m][h], _mm256_maddubs_epi16(high[h], second_k));
    }
  }
}

// The int32 lane sums of `chunks` chunks (at most kChunksPer16Bits; kFull: exactly that many) from k on: pairs
// widened once.
template <int M, bool kFull>
inline __attribute__((always_inline)) void add_group(const uint8_t* codes, const int8_t* q, int64_t kp,
                                                     int64_t chunks, __m256i (&sums)[M][2]) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i pairs[M][2];
  for (auto& row : pairs) {
    for (auto& v : row) v = _mm256_setzero_si256();
  }
  // One sequential stream per panel, fetched ahead (a prefetch past the end is harmless): a full group reads 4
  // cache lines.
  for (int line = 0; line < 4; ++line) {
    _mm_prefetch(reinterpret_cast<const char*>(codes) + kPrefetchBytes + 64 * line, _MM_HINT_T0);
  }
  if constexpr (kFull && M == 1) {
    for (int c = 0; c < kChunksPer16Bits; ++c) add_chunk<M>(codes + c * 64, q + c * 8, kp, pairs);
  } else {
    // Unrolled at 2-4 rows, GCC schedules all the chunks' products first and spills them (16 vector registers).
#pragma GCC unroll 1
    for (int64_t c = 0; c < chunks; ++c) add_chunk<M>(codes + c * 64, q + c * 8, kp, pairs);
  }
  for (int m = 0; m < M; ++m) {
    for (int h = 0; h < 2; ++h) sums[m][h] = _mm256_add_epi32(sums[m][h], _mm256_madd_epi16(pairs[m][h], ones));
  }
}

// int8 A (accuracy_level 4): one 16-row panel by M rows of A, as two halves of 8 lanes. With blocks of one 32-k
// group (kOneGroup) the group's sums go straight to the float step.
template <int M, bool kOneGroup>
void int8_panel(const Int4Panels& w, const Int8Rows& a, int64_t p, int64_t n_total, const float* bias, float* y,
                int64_t ldy) {
  constexpr int64_t kPanel = 16;
  const int64_t kp = w.padded_k();
  __m256 acc[M][2];
  for (auto& row : acc) {
    for (auto& v : row) v = _mm256_setzero_ps();
  }
  const uint8_t* codes = w.codes + p * (kp / 8) * kPanel * 4;
  const float* block_scales = w.scales + p * w.k_blocks * kPanel;
  const float* block_offsets = w.offsets != nullptr ? w.offsets + p * w.k_blocks * kPanel : nullptr;
  constexpr int64_t kGroup = 8 * kChunksPer16Bits;
  for (int64_t b = 0; b < w.k_blocks; ++b) {
    __m256i sums[M][2];
    for (auto& row : sums) {
      for (auto& v : row) v = _mm256_setzero_si256();
    }
    const int8_t* q = a.q + b * w.block;
    if constexpr (kOneGroup) {
      add_group<M, true>(codes, q, kp, kChunksPer16Bits, sums);
      codes += kGroup * kPanel / 2;
    } else {
      int64_t k = 0;
      for (; k + kGroup <= w.block; k += kGroup, codes += kGroup * kPanel / 2) {
        add_group<M, true>(codes, q + k, kp, kChunksPer16Bits, sums);
      }
      if (k < w.block) {
        add_group<M, false>(codes, q + k, kp, (w.block - k) / 8, sums);
        codes += (w.block - k) * kPanel / 2;
      }
    }
    for (int h = 0; h < 2; ++h) {
      const __m256 scales = _mm256_loadu_ps(block_scales + b * kPanel + h * 8);
      const __m256 offsets = block_offsets != nullptr ? _mm256_loadu_ps(block_offsets + b * kPanel + h * 8)
                                                      : _mm256_mul_ps(scales, _mm256_set1_ps(-8.0f));
      for (int m = 0; m < M; ++m) {
        const __m256 a_scale = _mm256_broadcast_ss(a.scales + m * w.k_blocks + b);
        const __m256 a_sum = _mm256_broadcast_ss(a.scaled_sums + m * w.k_blocks + b);
        acc[m][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums[m][h]), _mm256_mul_ps(scales, a_scale), acc[m][h]);
        acc[m][h] = _mm256_fmadd_ps(offsets, a_sum, acc[m][h]);
      }
    }
  }
  const int64_t valid = std::min<int64_t>(kPanel, n_total - p * kPanel);
  for (int m = 0; m < M; ++m) {
    float* out = y + m * ldy + p * kPanel;
    if (valid == kPanel) {
      for (int h = 0; h < 2; ++h) {
        const __m256 total = bias != nullptr ? _mm256_add_ps(acc[m][h], _mm256_loadu_ps(bias + p * kPanel + 8 * h))
                                             : acc[m][h];
        _mm256_storeu_ps(out + 8 * h, total);
      }
      continue;
    }
    alignas(32) float lanes[kPanel];
    _mm256_store_ps(lanes, acc[m][0]);
    _mm256_store_ps(lanes + 8, acc[m][1]);
    for (int64_t i = 0; i < valid; ++i) out[i] = bias != nullptr ? lanes[i] + bias[p * kPanel + i] : lanes[i];
  }
}

using PanelFn = void (*)(const Int4Panels&, const Int8Rows&, int64_t, int64_t, const float*, float*, int64_t);
template <bool kOneGroup>
constexpr PanelFn kPanelsOf[4] = {int8_panel<1, kOneGroup>, int8_panel<2, kOneGroup>, int8_panel<3, kOneGroup>,
                                  int8_panel<4, kOneGroup>};

}  // namespace

void int4_matmul_int8__avx2(const Int4Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                            int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy) {
  const int64_t kp = w.padded_k();
  const PanelFn* panels = w.block == 8 * kChunksPer16Bits ? kPanelsOf<true> : kPanelsOf<false>;
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    for (int64_t m = 0; m < rows; m += 4) {
      panels[std::min<int64_t>(4, rows - m) - 1](w, a.from_row(m, kp, w.k_blocks), p, n_total, bias, y + m * ldy, ldy);
    }
  }
}

void int4_matmul_rows__avx2(const Int4Weights& w, const float* a, int64_t lda, int64_t rows, int64_t n_begin,
                            int64_t n_end, const float* bias, float* y, int64_t ldy) {
  for (int64_t n = n_begin; n < n_end;) {
    const bool four = n + 4 <= n_end;
    const TileFn* tiles = four ? kFourRowTiles : kOneRowTiles;
    for (int64_t m = 0; m < rows; m += 4) {
      tiles[std::min<int64_t>(4, rows - m) - 1](w, a + m * lda, lda, n, bias, y + m * ldy, ldy);
    }
    n += four ? 4 : 1;
  }
}

// ---- quantize_int8_blocks: the generic copy's bytes, scales and sums exactly (the same float products
// x * (127 / max), NaN products as 0, and the default rounding mode's round-half-even conversion in place of
// std::nearbyint) ----
namespace {

inline int32_t lane_sum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// The codes of 8 products x * (127 / max) as int32 lanes: rounded half to even (the default rounding mode),
// clamped to +-127 (127 / max overflows for subnormal maxima), NaN products as 0.
inline __m256i code_lanes(__m256 r) {
  const __m256 number = _mm256_cmp_ps(r, r, _CMP_ORD_Q);
  const __m256 clamped = _mm256_min_ps(_mm256_max_ps(r, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
  const __m256i code = _mm256_cvtps_epi32(clamped);
  return _mm256_and_si256(_mm256_castps_si256(number), code);
}

// One whole block of `block` floats (a multiple of 32, all inside K): the general loop's bytes, scale and sum, with
// plain loads and 32 codes packed per store.
inline void quantize_whole_block(const float* x, int64_t block, int8_t* out, float* scale, int32_t* sum) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 largest = _mm256_setzero_ps();
  __m256 unordered = _mm256_setzero_ps();
  for (int64_t t = 0; t < block; t += 8) {
    const __m256 v = _mm256_loadu_ps(x + t);
    largest = _mm256_max_ps(_mm256_andnot_ps(sign, v), largest);
    unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  const float max = avx2_lanes::max_lanes(largest);
  const __m256 scale_by = _mm256_set1_ps(max > 0.0f ? 127.0f / max : 0.0f);
  // packs work within 128-bit halves: the 8 dwords of the packed bytes hold quarters of v0 v1 v2 v3 in the order
  // v0 lo, v1 lo, v2 lo, v3 lo, v0 hi, v1 hi, v2 hi, v3 hi.
  const __m256i in_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  __m256i total = _mm256_setzero_si256();
  for (int64_t t = 0; t < block; t += 32) {
    __m256i v[4];
    for (int i = 0; i < 4; ++i) v[i] = code_lanes(_mm256_mul_ps(_mm256_loadu_ps(x + t + 8 * i), scale_by));
    total = _mm256_add_epi32(total, _mm256_add_epi32(_mm256_add_epi32(v[0], v[1]), _mm256_add_epi32(v[2], v[3])));
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + t), _mm256_permutevar8x32_epi32(bytes, in_order));
  }
  *scale = _mm256_movemask_ps(unordered) != 0 ? std::nanf("") : max / 127.0f;
  *sum = lane_sum(total);
}

}  // namespace

void quantize_int8_blocks__avx2(const float* a, int64_t lda, int64_t rows, int64_t k, int64_t k_blocks,
                                int64_t block, int8_t* q, float* scales, int32_t* sums) {
  const int64_t kp = k_blocks * block;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t b = 0; b < k_blocks; ++b) {
      const float* x = a + m * lda + b * block;
      const int64_t count = std::min(block, k - b * block);
      if (count == block && block % 32 == 0) {
        quantize_whole_block(x, block, q + m * kp + b * block, scales + m * k_blocks + b, sums + m * k_blocks + b);
        continue;
      }
      // max|x| ignoring NaN (maxps returns its second operand when either is NaN), and whether any is NaN.
      __m256 largest = _mm256_setzero_ps();
      int nan = 0;
      for (int64_t t = 0; t < count; t += 8) {
        const __m256 v = _mm256_maskload_ps(x + t, avx2_lanes::first_lanes(count - t));
        largest = _mm256_max_ps(_mm256_andnot_ps(sign, v), largest);
        nan |= _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      }
      const float max = avx2_lanes::max_lanes(largest);
      const float inverse = max > 0.0f ? 127.0f / max : 0.0f;
      const __m256 scale_by = _mm256_set1_ps(inverse);
      int8_t* out = q + m * kp + b * block;
      __m256i total = _mm256_setzero_si256();
      for (int64_t t = 0; t < block; t += 8) {
        const __m256i v =
            code_lanes(_mm256_mul_ps(_mm256_maskload_ps(x + t, avx2_lanes::first_lanes(count - t)), scale_by));
        total = _mm256_add_epi32(total, v);
        const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        const __m128i bytes = _mm_packs_epi16(words, words);
        std::memcpy(out + t, &bytes, static_cast<size_t>(std::min<int64_t>(8, block - t)));
      }
      scales[m * k_blocks + b] = nan != 0 ? std::nanf("") : max / 127.0f;
      sums[m * k_blocks + b] = lane_sum(total);
    }
  }
}

}  // namespace nxrt::cpu
