// Lane masks and lane-index vectors shared by the AVX-512 kernels; include only from AVX-512 translation units
// (kernels/avx512/). Index vectors are built by functions, not globals: a unit's code may run only once the CPU
// is known to have AVX-512.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace nxrt::cpu {

// The first n lanes (n clamped to [0, 16]).
inline __mmask16 first_lanes(int64_t n) {
  return static_cast<__mmask16>((1u << std::clamp<int64_t>(n, 0, 16)) - 1u);
}

// _mm512_permutex2var_ps indices of the even and the odd elements of a 32-float pair (a, b).
inline __m512i even_lanes() { return _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30); }
inline __m512i odd_lanes() { return _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31); }

}  // namespace nxrt::cpu
