// AVX-512 copy of quantize_int8_blocks (contract in ep/cpu/microkernels/int4_matmul.h). It gives the generic copy's
// bytes, scales and sums exactly: the same float products x * (127 / max), NaN products as 0, and the default
// rounding mode's round-half-even conversion in place of std::nearbyint.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined pass-through operands inside the conversion intrinsics as
// maybe-uninitialized; they are never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cmath>

#include "ep/cpu/microkernels/int4_matmul.h"

namespace nxrt::cpu {

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
