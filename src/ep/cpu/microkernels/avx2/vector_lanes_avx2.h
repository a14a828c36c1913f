// Lane masks, partial loads and stores, lane sums and maxima, the even / odd split and the 8 x 8 register transpose
// shared by the AVX2 kernels (vector math, GEMM, the NCHWc reorders, the Transpose kernel's block transpose, int4
// quantization, the plain-layout conv and pool kernels); include only from AVX2 translation units
// (microkernels/avx2/).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace nxrt::cpu::avx2_lanes {

// All bits set in the 32-bit lanes l < n (n clamped to [0, 8]): the mask of maskload / maskstore for a row's tail.
inline __m256i first_lanes(int64_t n) {
  const int32_t count = n < 0 ? 0 : (n > 8 ? 8 : static_cast<int32_t>(n));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// All bits set in the 32-bit lanes l whose bit l of `bits` is set.
inline __m256i lanes_of_bits(unsigned bits) {
  const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), bit), bit);
}

// Lanes l < n of p (n may be <= 0 or >= 8); the other lanes read as +0 and are not accessed.
inline __m256 load_first(const float* p, int64_t n) {
  return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, first_lanes(n));
}

// Lanes l < n of v to p (n may be <= 0 or >= 8), nothing else: a whole vector stores plainly, as masked stores are
// microcoded on AMD.
inline void store_first(float* p, int64_t n, __m256 v) {
  if (n >= 8) {
    _mm256_storeu_ps(p, v);
  } else if (n > 0) {
    _mm256_maskstore_ps(p, first_lanes(n), v);
  }
}

// Lanes 0 2 4 6 of a then of b (even) or lanes 1 3 5 7 (odd): the even / odd elements of 16 consecutive ones.
inline __m256 even_columns(__m256 a, __m256 b) {
  const __m256 s = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // per 128-bit half: a's pair, then b's
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), _MM_SHUFFLE(3, 1, 2, 0)));
}
inline __m256 odd_columns(__m256 a, __m256 b) {
  const __m256 s = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), _MM_SHUFFLE(3, 1, 2, 0)));
}

inline float sum_lanes(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// No NaN lanes.
inline float max_lanes(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

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

}  // namespace nxrt::cpu::avx2_lanes
