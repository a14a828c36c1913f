// AVX2 products with packed 8-bit weights on 8-row panels (contract and layout in
// ep/cpu/microkernels/int8_weight_matmul.h). Compiled with -mavx2 -mfma; callers check the CPU first.
//
// Each 32-byte chunk holds 4 k's of the panel's 8 rows, one row per 32-bit lane. Float A: the chunk's 4 bytes per
// lane are sign-extended one k at a time and multiplied by that k of A broadcast, into two accumulators (even and
// odd k) so that two FMA chains run side by side; a block's sums are scaled and offset once per block. Int8 A: an
// unsigned x signed byte multiply-add of |code| with A's 4 bytes given the code's sign sums 4 k's of every row in its
// lane (|code| <= 128 and |a| <= 127 keep the int16 pair sums exact), accumulated to int32 over the block.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ep/cpu/microkernels/int8_weight_matmul.h"

namespace nxrt::cpu {

namespace {

constexpr int64_t kPrefetchBytes = 2048;

// Stores the 8 lanes of v (plus bias) as the panel's rows of one Y row, only the rows below n_total.
inline void store_rows(__m256 v, const float* bias, int64_t p, int64_t n_total, float* y_row) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  const int64_t count = std::min<int64_t>(8, n_total - p * 8);
  for (int64_t i = 0; i < count; ++i) {
    y_row[p * 8 + i] = bias != nullptr ? lanes[i] + bias[p * 8 + i] : lanes[i];
  }
}

template <int M>
void float_panel(const Int8Panels& w, const float* a, int64_t lda, const float* a_sums, int64_t p, int64_t n_total,
                 const float* bias, float* y, int64_t ldy) {
  const int64_t kp = w.padded_k();
  __m256 acc[M];
  for (auto& v : acc) v = _mm256_setzero_ps();
  const int8_t* codes = w.codes + p * (kp / 4) * 32;
  for (int64_t b = 0; b < w.k_blocks; ++b) {
    __m256 dots[M][2];
    for (auto& parts : dots) {
      for (auto& v : parts) v = _mm256_setzero_ps();
    }
    for (int64_t kk = b * w.block; kk < (b + 1) * w.block; kk += 4, codes += 32) {
      _mm_prefetch(reinterpret_cast<const char*>(codes) + kPrefetchBytes, _MM_HINT_T0);
      const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes));
      const __m256 weights[4] = {
          _mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(bytes, 24), 24)),
          _mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(bytes, 16), 24)),
          _mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(bytes, 8), 24)),
          _mm256_cvtepi32_ps(_mm256_srai_epi32(bytes, 24)),
      };
      for (int m = 0; m < M; ++m) {
        for (int j = 0; j < 4; ++j) {
          dots[m][j % 2] = _mm256_fmadd_ps(weights[j], _mm256_broadcast_ss(a + m * lda + kk + j), dots[m][j % 2]);
        }
      }
    }
    const __m256 scales = _mm256_loadu_ps(w.scales + (p * w.k_blocks + b) * 8);
    const bool offset = w.offsets != nullptr;  // else every offset is 0
    const __m256 offsets = offset ? _mm256_loadu_ps(w.offsets + (p * w.k_blocks + b) * 8) : _mm256_setzero_ps();
    for (int m = 0; m < M; ++m) {
      acc[m] = _mm256_fmadd_ps(_mm256_add_ps(dots[m][0], dots[m][1]), scales, acc[m]);
      if (offset) acc[m] = _mm256_fmadd_ps(offsets, _mm256_set1_ps(a_sums[m * w.k_blocks + b]), acc[m]);
    }
  }
  for (int m = 0; m < M; ++m) store_rows(acc[m], bias, p, n_total, y + m * ldy);
}

template <int M>
void int8_panel(const Int8Panels& w, const Int8Rows& a, int64_t p, int64_t n_total, const float* bias, float* y,
                int64_t ldy) {
  const int64_t kp = w.padded_k();
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[M];
  for (auto& v : acc) v = _mm256_setzero_ps();
  const int8_t* codes = w.codes + p * (kp / 4) * 32;
  for (int64_t b = 0; b < w.k_blocks; ++b) {
    __m256i sums[M];
    for (auto& v : sums) v = _mm256_setzero_si256();
    for (int64_t kk = b * w.block; kk < (b + 1) * w.block; kk += 4, codes += 32) {
      _mm_prefetch(reinterpret_cast<const char*>(codes) + kPrefetchBytes, _MM_HINT_T0);
      const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes));
      const __m256i magnitude = _mm256_abs_epi8(bytes);
      for (int m = 0; m < M; ++m) {
        int32_t four;
        std::memcpy(&four, a.q + m * kp + kk, 4);
        // sign_epi8 zeroes A where the code is 0, where the product is 0 anyway.
        const __m256i signed_a = _mm256_sign_epi8(_mm256_set1_epi32(four), bytes);
        sums[m] = _mm256_add_epi32(sums[m], _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude, signed_a), ones));
      }
    }
    const __m256 scales = _mm256_loadu_ps(w.scales + (p * w.k_blocks + b) * 8);
    const bool offset = w.offsets != nullptr;  // else every offset is 0
    const __m256 offsets = offset ? _mm256_loadu_ps(w.offsets + (p * w.k_blocks + b) * 8) : _mm256_setzero_ps();
    for (int m = 0; m < M; ++m) {
      const float a_scale = a.scales[m * w.k_blocks + b];
      const float a_sum = a_scale * static_cast<float>(a.sums[m * w.k_blocks + b]);
      acc[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums[m]), _mm256_mul_ps(scales, _mm256_set1_ps(a_scale)), acc[m]);
      if (offset) acc[m] = _mm256_fmadd_ps(offsets, _mm256_set1_ps(a_sum), acc[m]);
    }
  }
  for (int m = 0; m < M; ++m) store_rows(acc[m], bias, p, n_total, y + m * ldy);
}

using FloatPanelFn = void (*)(const Int8Panels&, const float*, int64_t, const float*, int64_t, int64_t, const float*,
                              float*, int64_t);
constexpr FloatPanelFn kFloatPanels[4] = {float_panel<1>, float_panel<2>, float_panel<3>, float_panel<4>};
using Int8PanelFn = void (*)(const Int8Panels&, const Int8Rows&, int64_t, int64_t, const float*, float*, int64_t);
constexpr Int8PanelFn kInt8Panels[4] = {int8_panel<1>, int8_panel<2>, int8_panel<3>, int8_panel<4>};

}  // namespace

void int8_weight_matmul_rows__avx2(const Int8Panels& w, const float* a, int64_t lda, const float* a_sums,
                                   int64_t rows, int64_t panel_begin, int64_t panel_end, int64_t n_total,
                                   const float* bias, float* y, int64_t ldy) {
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    for (int64_t m = 0; m < rows; m += 4) {
      kFloatPanels[std::min<int64_t>(4, rows - m) - 1](w, a + m * lda, lda, a_sums + m * w.k_blocks, p, n_total,
                                                       bias, y + m * ldy, ldy);
    }
  }
}

void int8_weight_matmul_int8__avx2(const Int8Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                                   int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy) {
  const int64_t kp = w.padded_k();
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    for (int64_t m = 0; m < rows; m += 4) {
      const Int8Rows at = a.from_row(m, kp, w.k_blocks);
      kInt8Panels[std::min<int64_t>(4, rows - m) - 1](w, at, p, n_total, bias, y + m * ldy, ldy);
    }
  }
}

}  // namespace nxrt::cpu
