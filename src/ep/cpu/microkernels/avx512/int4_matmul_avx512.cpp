// AVX-512 products with packed 4-bit weights (contract and layout in ep/cpu/microkernels/int4_matmul.h). Compiled
// with -mavx512f and friends; callers check the CPU first.
//
// Float A: a tile is NT weight rows by M rows of A. Each 16-byte group of codes is widened once per weight row, split into
// its low and high nibbles (codes j and j + 16), dequantized with one FMA each and used for all M rows of A.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined pass-through operands inside the conversion intrinsics as
// maybe-uninitialized; they are never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ep/cpu/microkernels/avx512/int4_panel_avx512.h"
#include "ep/cpu/microkernels/int4_matmul.h"

namespace nxrt::cpu {

namespace {

// The sum of the 16 lanes, once per output (the reduction intrinsics read undefined pass-through operands).
inline float horizontal_sum(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float sum = 0.0f;
  for (float lane : lanes) sum += lane;
  return sum;
}

template <int NT, int M>
void int4_tile(const Int4Weights& w, const float* a, int64_t lda, int64_t n0, const float* bias, float* y,
               int64_t ldy) {
  // One accumulator per (row, A row) leaves a single FMA chain per row at M = 1; two halve its latency.
  constexpr int kSplit = M == 1 ? 2 : 1;
  __m512 acc[NT][M][kSplit];
  for (auto& row : acc) {
    for (auto& parts : row) {
      for (auto& v : parts) v = _mm512_setzero_ps();
    }
  }
  const int64_t block_bytes = w.block / 2;
  const __m512i low_nibble = _mm512_set1_epi32(0xF);
  for (int64_t b = 0; b < w.k_blocks; ++b) {
    const uint8_t* codes[NT];
    __m512 scale[NT], offset[NT];
    for (int t = 0; t < NT; ++t) {
      const int64_t at = (n0 + t) * w.k_blocks + b;
      codes[t] = w.codes + at * block_bytes;
      scale[t] = _mm512_set1_ps(w.scales[at]);
      offset[t] = _mm512_set1_ps(w.offsets[at]);
    }
    for (int64_t g = 0; g < w.block / 32; ++g) {
      const int64_t k = b * w.block + g * 32;
      __m512 a_low[M], a_high[M];
      for (int m = 0; m < M; ++m) {
        a_low[m] = _mm512_loadu_ps(a + m * lda + k);
        a_high[m] = _mm512_loadu_ps(a + m * lda + k + 16);
      }
      for (int t = 0; t < NT; ++t) {
        const __m512i bytes =
            _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes[t] + g * 16)));
        const __m512 low =
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(bytes, low_nibble)), scale[t], offset[t]);
        const __m512 high = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(bytes, 4)), scale[t], offset[t]);
        for (int m = 0; m < M; ++m) {
          acc[t][m][0] = _mm512_fmadd_ps(low, a_low[m], acc[t][m][0]);
          acc[t][m][kSplit - 1] = _mm512_fmadd_ps(high, a_high[m], acc[t][m][kSplit - 1]);
        }
      }
    }
  }
  for (int t = 0; t < NT; ++t) {
    for (int m = 0; m < M; ++m) {
      __m512 total = acc[t][m][0];
      if constexpr (kSplit == 2) total = _mm512_add_ps(total, acc[t][m][1]);
      const float sum = horizontal_sum(total);
      y[m * ldy + n0 + t] = bias != nullptr ? sum + bias[n0 + t] : sum;
    }
  }
}

using TileFn = void (*)(const Int4Weights&, const float*, int64_t, int64_t, const float*, float*, int64_t);
constexpr TileFn kFourRowTiles[4] = {int4_tile<4, 1>, int4_tile<4, 2>, int4_tile<4, 3>, int4_tile<4, 4>};
constexpr TileFn kOneRowTiles[4] = {int4_tile<1, 1>, int4_tile<1, 2>, int4_tile<1, 3>, int4_tile<1, 4>};

// int8 A (accuracy_level 4): one 16-row panel by M rows of A. Each 64-byte chunk (8 k's of 16 rows) splits into
// its low and high nibbles; an unsigned x signed byte multiply-add with 4 bytes of A broadcast gives every row's
// sum over 4 k's in its lane, summed to int32 over the block, then scaled in float once per block.
constexpr int64_t kPrefetchBytes = 4096;
// Chunks of 8 k's whose byte products may add up in 16 bits: per chunk and lane, two pairs of a code (0..15) times
// an A byte (|q| <= 127, as quantize_int8_blocks makes them) reach at most 2 x 2 x 15 x 127 = 7620, so four chunks
// stay below 32767.
constexpr int64_t kChunksPer16Bits = 4;

template <int M>
void int8_panel(const Int4Panels& w, const Int8Rows& a, int64_t p, int64_t n_total, const float* bias, float* y,
                int64_t ldy) {
  const int64_t kp = w.padded_k();
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const __m512i ones = _mm512_set1_epi16(1);
  __m512 acc[M];
  for (auto& v : acc) v = _mm512_setzero_ps();
  const uint8_t* codes = w.codes + p * (kp / 8) * 64;
  for (int64_t b = 0; b < w.k_blocks; ++b) {
    __m512i sums[M];
    for (auto& v : sums) v = _mm512_setzero_si512();
    // 16-bit partial sums over up to kChunksPer16Bits chunks of 8 k's, then widened to 32 bits once.
    for (int64_t group = b * w.block; group < (b + 1) * w.block; group += 8 * kChunksPer16Bits) {
      const int64_t group_end = std::min((b + 1) * w.block, group + 8 * kChunksPer16Bits);
      __m512i pairs[M];
      for (auto& v : pairs) v = _mm512_setzero_si512();
      for (int64_t kk = group; kk < group_end; kk += 8, codes += 64) {
        // The panel is one sequential stream; fetching a few lines ahead hides the memory latency of a matrix
        // that does not fit the caches (reading past the end is harmless for a prefetch).
        _mm_prefetch(reinterpret_cast<const char*>(codes) + kPrefetchBytes, _MM_HINT_T0);
        const __m512i bytes = _mm512_loadu_si512(codes);
        const __m512i low = _mm512_and_si512(bytes, nibble);
        const __m512i high = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble);
        for (int m = 0; m < M; ++m) {
          int32_t first, second;
          std::memcpy(&first, a.q + m * kp + kk, 4);
          std::memcpy(&second, a.q + m * kp + kk + 4, 4);
          const __m512i products = _mm512_add_epi16(_mm512_maddubs_epi16(low, _mm512_set1_epi32(first)),
                                                   _mm512_maddubs_epi16(high, _mm512_set1_epi32(second)));
          pairs[m] = _mm512_add_epi16(pairs[m], products);
        }
      }
      for (int m = 0; m < M; ++m) sums[m] = _mm512_add_epi32(sums[m], _mm512_madd_epi16(pairs[m], ones));
    }
    add_panel_block<M>(w, a, p, b, sums, acc);
  }
  store_panel<M>(acc, p, n_total, bias, y, ldy);
}

using PanelFn = void (*)(const Int4Panels&, const Int8Rows&, int64_t, int64_t, const float*, float*, int64_t);
constexpr PanelFn kPanels[4] = {int8_panel<1>, int8_panel<2>, int8_panel<3>, int8_panel<4>};

}  // namespace

void int4_matmul_int8__avx512(const Int4Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                              int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy) {
  const int64_t kp = w.padded_k();
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    for (int64_t m = 0; m < rows; m += 4) {
      const Int8Rows at = a.from_row(m, kp, w.k_blocks);
      kPanels[std::min<int64_t>(4, rows - m) - 1](w, at, p, n_total, bias, y + m * ldy, ldy);
    }
  }
}

void int4_matmul_rows__avx512(const Int4Weights& w, const float* a, int64_t lda, int64_t rows, int64_t n_begin,
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

inline __mmask16 first_lanes(int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << std::max<int64_t>(count, 0)) - 1u);
}

}  // namespace

void quantize_int8_blocks__avx512(const float* a, int64_t lda, int64_t rows, int64_t k, int64_t k_blocks,
                                  int64_t block, int8_t* q, float* scales, int32_t* sums) {
  const int64_t kp = k_blocks * block;
  const __m512 sign = _mm512_set1_ps(-0.0f);
  const __m512 low = _mm512_set1_ps(-127.0f), high = _mm512_set1_ps(127.0f);
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t b = 0; b < k_blocks; ++b) {
      const float* x = a + m * lda + b * block;
      const int64_t count = std::min(block, k - b * block);
      // max|x| ignoring NaN (maxps returns its second operand when either is NaN), and whether any is NaN.
      __m512 largest = _mm512_setzero_ps();
      __mmask16 nan = 0;
      for (int64_t t = 0; t < count; t += 16) {
        const __m512 v = _mm512_maskz_loadu_ps(first_lanes(count - t), x + t);
        largest = _mm512_max_ps(_mm512_andnot_ps(sign, v), largest);
        nan = static_cast<__mmask16>(nan | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q));
      }
      const float max = _mm512_reduce_max_ps(largest);
      const float inverse = max > 0.0f ? 127.0f / max : 0.0f;
      const __m512 scale_by = _mm512_set1_ps(inverse);
      int8_t* out = q + m * kp + b * block;
      __m512i total = _mm512_setzero_si512();
      for (int64_t t = 0; t < block; t += 16) {
        const __m512 r = _mm512_mul_ps(_mm512_maskz_loadu_ps(first_lanes(count - t), x + t), scale_by);
        const __mmask16 number = static_cast<__mmask16>(~_mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q));
        const __m512i v = _mm512_maskz_mov_epi32(number, _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(r, low), high)));
        total = _mm512_add_epi32(total, v);
        _mm_mask_storeu_epi8(out + t, first_lanes(block - t), _mm512_cvtepi32_epi8(v));
      }
      scales[m * k_blocks + b] = nan != 0 ? std::nanf("") : max / 127.0f;
      sums[m * k_blocks + b] = _mm512_reduce_add_epi32(total);
    }
  }
}

}  // namespace nxrt::cpu
