// Lane masks, lane-index vectors, lane sums and maxima, and the 16 x 16 transpose shared by the AVX-512 kernels;
// include only from AVX-512 translation units (kernels/avx512/). Index vectors are built by functions, not
// globals: a unit's code may run only once the CPU is known to have AVX-512.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

// GCC 12 reports the undefined pass-through operand of unmasked intrinsics (_mm512_max_ps, _mm512_roundscale_ps,
// _mm512_shuffle_f32x4, ...) as (maybe) uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace nxrt::cpu {

// The first n lanes (n clamped to [0, 16]).
inline __mmask16 first_lanes(int64_t n) {
  return static_cast<__mmask16>((1u << std::clamp<int64_t>(n, 0, 16)) - 1u);
}

// Combines the 16 lanes pairwise by halving swaps (256-bit halves, 128-bit quarters, then within 128 bits);
// every lane ends up holding the result.
template <class Combine>
inline float reduce_lanes(__m512 v, Combine combine) {
  v = combine(v, _mm512_shuffle_f32x4(v, v, 0x4E));
  v = combine(v, _mm512_shuffle_f32x4(v, v, 0xB1));
  v = combine(v, _mm512_permute_ps(v, 0x4E));
  v = combine(v, _mm512_permute_ps(v, 0xB1));
  return _mm512_cvtss_f32(v);
}

inline float sum_lanes(__m512 v) {
  return reduce_lanes(v, [](__m512 x, __m512 y) { return _mm512_add_ps(x, y); });
}

// No NaN lanes.
inline float max_lanes(__m512 v) {
  return reduce_lanes(v, [](__m512 x, __m512 y) { return _mm512_max_ps(x, y); });
}

// _mm512_permutex2var_ps indices of the even and the odd elements of a 32-float pair (a, b).
inline __m512i even_lanes() { return _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30); }
inline __m512i odd_lanes() { return _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31); }

// Transposes a 16 x 16 block held as 16 row vectors; on return rows[c] holds column c.
inline void transpose_16x16(__m512 rows[16]) {
  __m512 t[16];
  __m512 u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(rows[2 * i], rows[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(rows[2 * i], rows[2 * i + 1]);
  }
  // u[4g + j], 128-bit lane L: column 4L + j of rows 4g .. 4g + 3.
  for (int g = 0; g < 4; ++g) {
    const __m512d t0 = _mm512_castps_pd(t[4 * g]);
    const __m512d t1 = _mm512_castps_pd(t[4 * g + 1]);
    const __m512d t2 = _mm512_castps_pd(t[4 * g + 2]);
    const __m512d t3 = _mm512_castps_pd(t[4 * g + 3]);
    u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
  for (int j = 0; j < 4; ++j) {
    const __m512 w0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
    const __m512 w1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
    const __m512 w2 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    const __m512 w3 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
    rows[j] = _mm512_shuffle_f32x4(w0, w2, 0x88);
    rows[8 + j] = _mm512_shuffle_f32x4(w0, w2, 0xDD);
    rows[4 + j] = _mm512_shuffle_f32x4(w1, w3, 0x88);
    rows[12 + j] = _mm512_shuffle_f32x4(w1, w3, 0xDD);
  }
}

}  // namespace nxrt::cpu
