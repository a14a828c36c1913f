// AVX2 copy of quantize_int8_blocks (contract in ep/cpu/microkernels/int4_matmul.h). It gives the generic copy's
// bytes, scales and sums exactly: the same float products x * (127 / max), NaN products as 0, and the default
// rounding mode's round-half-even conversion in place of std::nearbyint.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ep/cpu/microkernels/int4_matmul.h"

namespace nxrt::cpu {

namespace {

// All-ones in the first `count` (clamped to 0..8) 32-bit lanes, for the masked loads.
inline __m256i first_lanes(int64_t count) {
  const int64_t lanes = std::clamp<int64_t>(count, 0, 8);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lanes)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

inline float lane_max(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

inline int32_t lane_sum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

}  // namespace

void quantize_int8_blocks__avx2(const float* a, int64_t lda, int64_t rows, int64_t k, int64_t k_blocks,
                                int64_t block, int8_t* q, float* scales, int32_t* sums) {
  const int64_t kp = k_blocks * block;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 low = _mm256_set1_ps(-127.0f), high = _mm256_set1_ps(127.0f);
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t b = 0; b < k_blocks; ++b) {
      const float* x = a + m * lda + b * block;
      const int64_t count = std::min(block, k - b * block);
      // max|x| ignoring NaN (maxps returns its second operand when either is NaN), and whether any is NaN.
      __m256 largest = _mm256_setzero_ps();
      int nan = 0;
      for (int64_t t = 0; t < count; t += 8) {
        const __m256 v = _mm256_maskload_ps(x + t, first_lanes(count - t));
        largest = _mm256_max_ps(_mm256_andnot_ps(sign, v), largest);
        nan |= _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      }
      const float max = lane_max(largest);
      const float inverse = max > 0.0f ? 127.0f / max : 0.0f;
      const __m256 scale_by = _mm256_set1_ps(inverse);
      int8_t* out = q + m * kp + b * block;
      __m256i total = _mm256_setzero_si256();
      for (int64_t t = 0; t < block; t += 8) {
        const __m256 r = _mm256_mul_ps(_mm256_maskload_ps(x + t, first_lanes(count - t)), scale_by);
        const __m256 number = _mm256_cmp_ps(r, r, _CMP_ORD_Q);
        const __m256i v = _mm256_and_si256(_mm256_castps_si256(number),
                                           _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(r, low), high)));
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
