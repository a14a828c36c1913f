// The 8 x 8 register transpose of 32-bit lanes shared by the AVX2 kernels (the NCHWc reorders and the Transpose
// kernel's block transpose); include only from AVX2 translation units (microkernels/avx2/).
#pragma once

#include <immintrin.h>

namespace nxrt::cpu::avx2_block {

// On return rows[c] holds what was column c of the 8 x 8 block rows[0 .. 8).
inline void transpose_8x8(__m256 (&rows)[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(rows[i], rows[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(rows[i], rows[i + 1]);
  }
  // s[4 q + j]: rows 4q .. 4q + 3, column pairs j of each 128-bit half.
  __m256 s[8];
  for (int q = 0; q < 2; ++q) {
    const __m256 a0 = t[4 * q], a1 = t[4 * q + 1], b0 = t[4 * q + 2], b1 = t[4 * q + 3];
    s[4 * q + 0] = _mm256_shuffle_ps(a0, b0, _MM_SHUFFLE(1, 0, 1, 0));
    s[4 * q + 1] = _mm256_shuffle_ps(a0, b0, _MM_SHUFFLE(3, 2, 3, 2));
    s[4 * q + 2] = _mm256_shuffle_ps(a1, b1, _MM_SHUFFLE(1, 0, 1, 0));
    s[4 * q + 3] = _mm256_shuffle_ps(a1, b1, _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int j = 0; j < 4; ++j) {
    rows[j] = _mm256_permute2f128_ps(s[j], s[4 + j], 0x20);
    rows[4 + j] = _mm256_permute2f128_ps(s[j], s[4 + j], 0x31);
  }
}

// The first n lanes (n clamped to [0, 8]) as a maskload / maskstore mask.
inline __m256i first_lanes(int64_t n) {
  const int count = n <= 0 ? 0 : (n >= 8 ? 8 : static_cast<int>(n));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

}  // namespace nxrt::cpu::avx2_block
