// AVX-512 products with packed 8-bit weights on 16-row panels (contract and layout in
// ep/cpu/microkernels/int8_weight_matmul.h). Compiled with -mavx512f -mavx512bw and friends; callers check the CPU
// first.
//
// Each 64-byte chunk holds 4 k's of the panel's 16 rows, one row per 32-bit lane. Float A: the chunk's 4 bytes per
// lane are sign-extended one k at a time and multiplied by that k of A broadcast, into one accumulator per k so
// that four FMA chains run side by side; a block's sums are scaled and offset once per block. Int8 A: an unsigned
// x signed byte multiply-add of |code| with A's 4 bytes carrying the code's sign sums 4 k's of every row in its lane
// (|code| <= 128 and |a| <= 127 keep the int16 pair sums exact), accumulated to int32 over the block.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined pass-through operands inside the conversion intrinsics as
// maybe-uninitialized; they are never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cstring>

#include "ep/cpu/microkernels/avx512/int4_panel_avx512.h"
#include "ep/cpu/microkernels/avx512/int8_weight_panel_avx512.h"
#include "ep/cpu/microkernels/int8_weight_matmul.h"

namespace nxrt::cpu {

namespace {

// Bytes ahead of the chunk being read that are prefetched: the panel is one sequential stream.
constexpr int64_t kPrefetchBytes = 4096;

template <int M>
void float_panel(const Int8Panels& w, const float* a, int64_t lda, const float* a_sums, int64_t p, int64_t n_total,
                 const float* bias, float* y, int64_t ldy) {
  const int64_t kp = w.padded_k();
  __m512 acc[M];
  for (auto& v : acc) v = _mm512_setzero_ps();
  const int8_t* codes = w.codes + p * (kp / 4) * 64;
  for (int64_t b = 0; b < w.k_blocks; ++b) {
    __m512 dots[M][4];
    for (auto& parts : dots) {
      for (auto& v : parts) v = _mm512_setzero_ps();
    }
    for (int64_t kk = b * w.block; kk < (b + 1) * w.block; kk += 4, codes += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(codes) + kPrefetchBytes, _MM_HINT_T0);
      const __m512i bytes = _mm512_loadu_si512(codes);
      const __m512 weights[4] = {
          _mm512_cvtepi32_ps(_mm512_srai_epi32(_mm512_slli_epi32(bytes, 24), 24)),
          _mm512_cvtepi32_ps(_mm512_srai_epi32(_mm512_slli_epi32(bytes, 16), 24)),
          _mm512_cvtepi32_ps(_mm512_srai_epi32(_mm512_slli_epi32(bytes, 8), 24)),
          _mm512_cvtepi32_ps(_mm512_srai_epi32(bytes, 24)),
      };
      for (int m = 0; m < M; ++m) {
        for (int j = 0; j < 4; ++j) {
          dots[m][j] = _mm512_fmadd_ps(weights[j], _mm512_set1_ps(a[m * lda + kk + j]), dots[m][j]);
        }
      }
    }
    const __m512 scales = _mm512_loadu_ps(w.scales + (p * w.k_blocks + b) * 16);
    const bool offset = w.offsets != nullptr;  // else every offset is 0
    const __m512 offsets = offset ? _mm512_loadu_ps(w.offsets + (p * w.k_blocks + b) * 16) : _mm512_setzero_ps();
    for (int m = 0; m < M; ++m) {
      const __m512 dot = _mm512_add_ps(_mm512_add_ps(dots[m][0], dots[m][1]), _mm512_add_ps(dots[m][2], dots[m][3]));
      acc[m] = _mm512_fmadd_ps(dot, scales, acc[m]);
      if (offset) acc[m] = _mm512_fmadd_ps(offsets, _mm512_set1_ps(a_sums[m * w.k_blocks + b]), acc[m]);
    }
  }
  store_panel<M>(acc, p, n_total, bias, y, ldy);
}

template <int M>
void int8_panel(const Int8Panels& w, const Int8Rows& a, int64_t p, int64_t n_total, const float* bias, float* y,
                int64_t ldy) {
  const int64_t kp = w.padded_k();
  const __m512i ones = _mm512_set1_epi16(1);
  const __m512i zero = _mm512_setzero_si512();
  __m512 acc[M];
  for (auto& v : acc) v = _mm512_setzero_ps();
  const int8_t* codes = w.codes + p * (kp / 4) * 64;
  for (int64_t b = 0; b < w.k_blocks; ++b) {
    __m512i sums[M];
    for (auto& v : sums) v = _mm512_setzero_si512();
    for (int64_t kk = b * w.block; kk < (b + 1) * w.block; kk += 4, codes += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(codes) + kPrefetchBytes, _MM_HINT_T0);
      const __m512i bytes = _mm512_loadu_si512(codes);
      const __m512i magnitude = _mm512_abs_epi8(bytes);
      const __mmask64 negative = _mm512_movepi8_mask(bytes);
      for (int m = 0; m < M; ++m) {
        const __m512i a4 = broadcast_four_bytes(a.q + m * kp + kk);
        const __m512i signed_a = _mm512_mask_sub_epi8(a4, negative, zero, a4);
        sums[m] = _mm512_add_epi32(sums[m], _mm512_madd_epi16(_mm512_maddubs_epi16(magnitude, signed_a), ones));
      }
    }
    add_int8_weight_block<M>(w, a, p, b, sums, acc);
  }
  store_panel<M>(acc, p, n_total, bias, y, ldy);
}

using FloatPanelFn = void (*)(const Int8Panels&, const float*, int64_t, const float*, int64_t, int64_t, const float*,
                              float*, int64_t);
constexpr FloatPanelFn kFloatPanels[4] = {float_panel<1>, float_panel<2>, float_panel<3>, float_panel<4>};
using Int8PanelFn = void (*)(const Int8Panels&, const Int8Rows&, int64_t, int64_t, const float*, float*, int64_t);
constexpr Int8PanelFn kInt8Panels[4] = {int8_panel<1>, int8_panel<2>, int8_panel<3>, int8_panel<4>};

}  // namespace

void int8_weight_matmul_rows__avx512(const Int8Panels& w, const float* a, int64_t lda, const float* a_sums,
                                     int64_t rows, int64_t panel_begin, int64_t panel_end, int64_t n_total,
                                     const float* bias, float* y, int64_t ldy) {
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    for (int64_t m = 0; m < rows; m += 4) {
      kFloatPanels[std::min<int64_t>(4, rows - m) - 1](w, a + m * lda, lda, a_sums + m * w.k_blocks, p, n_total,
                                                       bias, y + m * ldy, ldy);
    }
  }
}

void int8_weight_matmul_int8__avx512(const Int8Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
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
