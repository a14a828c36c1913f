// AVX-512 interior rows of MaxPool 3x3 stride 2 (contract in ep/cpu/pool/pool_kernels.h). Compiled with -mavx512f
// and friends; pool.cpp calls it only when the CPU has avx512f.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined_epi32() pass-through operand inside _mm512_alignr_epi32 as
// maybe-uninitialized; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>

#include "ep/cpu/microkernels/avx512/vector_lanes_avx512.h"
#include "ep/cpu/pool/pool_kernels.h"

namespace nxrt::cpu::pool {

namespace {

// The running max of pool.cpp: v replaces best when v is not NaN and not <= best (so NaN best is replaced, ties
// keep the earlier tap).
inline __m512 take_max(__m512 best, __m512 v) {
  const __mmask16 ordered = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
  const __mmask16 take = _mm512_mask_cmp_ps_mask(ordered, v, best, _CMP_NLE_UQ);
  return _mm512_mask_mov_ps(best, take, v);
}

// The three taps of 16 stride-2 windows along one row: row[2 * lane], row[2 * lane + 1], row[2 * lane + 2] for
// lanes 0..15, loading row[0 .. 48) in three vectors where m0, m1, m2 allow (masked-off floats read as 0).
inline void stride_two_taps(const float* row, __mmask16 m0, __mmask16 m1, __mmask16 m2, __m512 taps[3]) {
  const __m512 v0 = _mm512_maskz_loadu_ps(m0, row);
  const __m512 v1 = _mm512_maskz_loadu_ps(m1, row + 16);
  const __m512 v2 = _mm512_maskz_loadu_ps(m2, row + 32);
  taps[0] = _mm512_permutex2var_ps(v0, even_lanes(), v1);
  taps[1] = _mm512_permutex2var_ps(v0, odd_lanes(), v1);
  taps[2] = _mm512_castsi512_ps(  // taps[0] moved down one lane, row[32] on top
      _mm512_alignr_epi32(_mm512_castps_si512(v2), _mm512_castps_si512(taps[0]), 1));
}

}  // namespace

void f32_max_pool_3x3s2_row__avx512(const float* window, int64_t in_w, int64_t count, float* out) {
  for (int64_t j = 0; j < count; j += 16) {
    const int64_t lanes = std::min<int64_t>(16, count - j);
    const int64_t needed = 2 * lanes + 1;  // window columns 0 .. 2 * lanes of this vector's outputs
    const __mmask16 m0 = first_lanes(needed);
    const __mmask16 m1 = first_lanes(needed - 16);
    const __mmask16 m2 = first_lanes(needed - 32);
    __m512 best = _mm512_set1_ps(__builtin_nanf(""));  // pool.cpp's start value: any non-NaN tap replaces it
    for (int a = 0; a < 3; ++a) {
      __m512 taps[3];
      stride_two_taps(window + a * in_w + 2 * j, m0, m1, m2, taps);
      best = take_max(best, taps[0]);
      best = take_max(best, taps[1]);
      best = take_max(best, taps[2]);
    }
    _mm512_mask_storeu_ps(out + j, first_lanes(lanes), best);
  }
}

bool f32_max_pool_3x3s2_plane__avx512(const float* x, int64_t in_h, int64_t in_w, float* y, int64_t out_h,
                                      int64_t out_w, int64_t pad_top, int64_t pad_left, float* cols) {
  // cols: vertical maxima of one output row's window rows, indexed by padded column (input column + pad_left);
  // the columns outside the input and the slack hold -inf, which never wins against a present tap.
  const int64_t padded_w = 2 * out_w + 1;
  const float minus_inf = -__builtin_inff();
  const int64_t in_end = std::min(padded_w, pad_left + in_w);  // padded columns [pad_left, in_end) are input
  for (int64_t c = 0; c < pad_left; ++c) cols[c] = minus_inf;
  for (int64_t c = in_end; c < padded_w + kMaxPoolPlaneSlack; ++c) cols[c] = minus_inf;
  const int64_t width = in_end - pad_left;
  __mmask16 unordered_or_minus_zero = 0;  // fpclass: QNaN 0x01, -0 0x04, SNaN 0x80
  constexpr int kNanOrMinusZero = 0x85;
  for (int64_t oh = 0; oh < out_h; ++oh) {
    const int64_t top = 2 * oh - pad_top;
    const int64_t r0 = std::max<int64_t>(top, 0);
    const int64_t r1 = std::min<int64_t>(top + 3, in_h);
    for (int64_t c = 0; c < width; c += 16) {
      const __mmask16 lanes = first_lanes(width - c);
      __m512 m = _mm512_maskz_loadu_ps(lanes, x + r0 * in_w + c);
      unordered_or_minus_zero |= _mm512_mask_fpclass_ps_mask(lanes, m, kNanOrMinusZero);
      for (int64_t r = r0 + 1; r < r1; ++r) {
        const __m512 v = _mm512_maskz_loadu_ps(lanes, x + r * in_w + c);
        unordered_or_minus_zero |= _mm512_mask_fpclass_ps_mask(lanes, v, kNanOrMinusZero);
        m = _mm512_max_ps(v, m);
      }
      _mm512_mask_storeu_ps(cols + pad_left + c, lanes, m);
    }
    float* out = y + oh * out_w;
    for (int64_t j = 0; j < out_w; j += 16) {
      __m512 taps[3];
      stride_two_taps(cols + 2 * j, 0xFFFF, 0xFFFF, 0xFFFF, taps);
      const __m512 best = _mm512_max_ps(taps[2], _mm512_max_ps(taps[1], taps[0]));
      _mm512_mask_storeu_ps(out + j, first_lanes(out_w - j), best);
    }
  }
  return unordered_or_minus_zero == 0;
}

}  // namespace nxrt::cpu::pool
