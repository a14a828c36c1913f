// The float step both AVX-512 int8-A kernels for 8-bit weight panels share (int8_weight_matmul_avx512.cpp without
// VNNI, int8_weight_matmul_vnni_avx512.cpp with it): scaling a block's integer sums into the float accumulators.
// The panel store is int4_panel_avx512.h's store_panel. Internal linkage on purpose, as in that header: each per-ISA
// file compiles its own copy with its own flags.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ep/cpu/microkernels/int8_weight_matmul.h"

namespace nxrt::cpu {
namespace {

// acc[m] += a_scale[m, b] * (w_scale[p, b] * sums[m] + w_offset[p, b] * a_sum[m, b]) over the 16 rows of panel p;
// null offsets stand for the zero point 128 (stored offsets of 0).
template <int M>
inline void add_int8_weight_block(const Int8Panels& w, const Int8Rows& a, int64_t p, int64_t b,
                                  const __m512i (&sums)[M], __m512 (&acc)[M]) {
  const __m512 scales = _mm512_loadu_ps(w.scales + (p * w.k_blocks + b) * 16);
  const bool offset = w.offsets != nullptr;
  const __m512 offsets = offset ? _mm512_loadu_ps(w.offsets + (p * w.k_blocks + b) * 16) : _mm512_setzero_ps();
  for (int m = 0; m < M; ++m) {
    const float a_scale = a.scales[m * w.k_blocks + b];
    const float a_sum = a_scale * static_cast<float>(a.sums[m * w.k_blocks + b]);
    acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums[m]), _mm512_mul_ps(scales, _mm512_set1_ps(a_scale)), acc[m]);
    if (offset) acc[m] = _mm512_fmadd_ps(offsets, _mm512_set1_ps(a_sum), acc[m]);
  }
}

}  // namespace
}  // namespace nxrt::cpu
