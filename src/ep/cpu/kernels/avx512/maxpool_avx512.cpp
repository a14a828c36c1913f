// AVX-512 interior rows of MaxPool 3x3 stride 2 (contract in ep/cpu/pool_kernels.h). Compiled with -mavx512f
// and friends; pool.cpp calls it only when the CPU has avx512f.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined_epi32() pass-through operand inside _mm512_alignr_epi32 as
// maybe-uninitialized; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>

#include "ep/cpu/pool_kernels.h"

namespace nxrt::cpu::pool {

namespace {

inline __mmask16 first_lanes(int64_t n) {
  return static_cast<__mmask16>((1u << std::clamp<int64_t>(n, 0, 16)) - 1u);
}

// The running max of pool.cpp: v replaces best when v is not NaN and not <= best (so NaN best is replaced, ties
// keep the earlier tap).
inline __m512 take_max(__m512 best, __m512 v) {
  const __mmask16 ordered = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
  const __mmask16 take = _mm512_mask_cmp_ps_mask(ordered, v, best, _CMP_NLE_UQ);
  return _mm512_mask_mov_ps(best, take, v);
}

}  // namespace

void f32_max_pool_3x3s2_row__avx512(const float* window, int64_t in_w, int64_t count, float* out) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int64_t j = 0; j < count; j += 16) {
    const int64_t lanes = std::min<int64_t>(16, count - j);
    const int64_t needed = 2 * lanes + 1;  // window columns 0 .. 2 * lanes of this vector's outputs
    const __mmask16 m0 = first_lanes(needed);
    const __mmask16 m1 = first_lanes(needed - 16);
    const __mmask16 m2 = first_lanes(needed - 32);
    __m512 best = _mm512_set1_ps(__builtin_nanf(""));  // pool.cpp's start value: any non-NaN tap replaces it
    for (int a = 0; a < 3; ++a) {
      const float* row = window + a * in_w + 2 * j;
      const __m512 v0 = _mm512_maskz_loadu_ps(m0, row);
      const __m512 v1 = _mm512_maskz_loadu_ps(m1, row + 16);
      const __m512 v2 = _mm512_maskz_loadu_ps(m2, row + 32);
      const __m512 tap0 = _mm512_permutex2var_ps(v0, even, v1);  // row[2 * lane]
      const __m512 tap1 = _mm512_permutex2var_ps(v0, odd, v1);   // row[2 * lane + 1]
      const __m512 tap2 = _mm512_castsi512_ps(  // row[2 * lane + 2]: tap0 moved down one lane, row[32] on top
          _mm512_alignr_epi32(_mm512_castps_si512(v2), _mm512_castps_si512(tap0), 1));
      best = take_max(best, tap0);
      best = take_max(best, tap1);
      best = take_max(best, tap2);
    }
    _mm512_mask_storeu_ps(out + j, first_lanes(lanes), best);
  }
}

}  // namespace nxrt::cpu::pool
