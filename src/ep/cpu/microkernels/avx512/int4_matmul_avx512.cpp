// AVX-512 products with packed 4-bit weights (contract and layout in ep/cpu/microkernels/int4_matmul.h). Compiled
// with -mavx512f and friends; callers check the CPU first.
//
// A tile is NT weight rows by M rows of A. Each 16-byte group of codes is widened once per weight row, split into
// its low and high nibbles (codes j and j + 16), dequantized with one FMA each and used for all M rows of A.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined pass-through operands inside the conversion intrinsics as
// maybe-uninitialized; they are never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>

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

}  // namespace

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

}  // namespace nxrt::cpu
