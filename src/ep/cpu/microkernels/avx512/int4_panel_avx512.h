// The steps the AVX-512 int8-A panel kernels share (int4_matmul_avx512.cpp without VNNI, int4_matmul_vnni_avx512.cpp
// with it; the store and the broadcast also serve the 8-bit weight kernels): broadcasting 4 bytes of A (the VNNI
// and 8-bit kernels), scaling a block's integer sums into the float accumulators, and storing a panel's rows. Internal linkage on purpose: each per-ISA file compiles its own copy with its own flags, so no copy
// built with -mavx512vnni can be picked by the linker for the file built without it.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ep/cpu/microkernels/int4_matmul.h"

namespace nxrt::cpu {
namespace {

// The 4 bytes at `at` (4 k's of one row of int8 A) in every 32-bit lane.
inline __m512i broadcast_four_bytes(const int8_t* at) {
  int32_t four;
  std::memcpy(&four, at, 4);
  return _mm512_set1_epi32(four);
}

// acc[m] += a_scale[m, b] * (w_scale[p, b] * sums[m] + w_offset[p, b] * a_sum[m, b]) over the 16 rows of panel p;
// null offsets stand for the zero point 8 (offset -8 * scale).
template <int M>
inline void add_panel_block(const Int4Panels& w, const Int8Rows& a, int64_t p, int64_t b, const __m512i (&sums)[M],
                            __m512 (&acc)[M]) {
  const __m512 scales = _mm512_loadu_ps(w.scales + (p * w.k_blocks + b) * 16);
  const __m512 offsets = w.offsets != nullptr ? _mm512_loadu_ps(w.offsets + (p * w.k_blocks + b) * 16)
                                              : _mm512_mul_ps(scales, _mm512_set1_ps(-8.0f));
  for (int m = 0; m < M; ++m) {
    const float a_scale = a.scales[m * w.k_blocks + b];
    const float a_sum = a.scaled_sums[m * w.k_blocks + b];
    acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums[m]), _mm512_mul_ps(scales, _mm512_set1_ps(a_scale)), acc[m]);
    acc[m] = _mm512_fmadd_ps(offsets, _mm512_set1_ps(a_sum), acc[m]);
  }
}

// y[m, 16 p + i] = acc[m][i] (+ bias[16 p + i]) for the panel's rows below n_total.
template <int M>
inline void store_panel(const __m512 (&acc)[M], int64_t p, int64_t n_total, const float* bias, float* y, int64_t ldy) {
  const __mmask16 valid = static_cast<__mmask16>((1u << std::min<int64_t>(16, n_total - p * 16)) - 1u);
  const __m512 add = bias != nullptr ? _mm512_maskz_loadu_ps(valid, bias + p * 16) : _mm512_setzero_ps();
  for (int m = 0; m < M; ++m) _mm512_mask_storeu_ps(y + m * ldy + p * 16, valid, _mm512_add_ps(acc[m], add));
}

}  // namespace
}  // namespace nxrt::cpu
