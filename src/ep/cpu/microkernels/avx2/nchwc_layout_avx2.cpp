// AVX2 reorders and pools (nchwc_pool_kernel.h) of the blocked-channel layout (contracts in ep/cpu/conv/nchwc.h).
// Built with -mavx2 -mfma; callers check the CPU first.
#include <immintrin.h>

#include <algorithm>

#include "ep/cpu/conv/nchwc.h"
#include "ep/cpu/microkernels/avx2/nchwc_block_avx2.h"
#include "ep/cpu/microkernels/avx2/vector_lanes_avx2.h"
#include "ep/cpu/microkernels/nchwc_pool_kernel.h"

namespace nxrt::cpu::nchwc {

namespace {

// dst[c * dst_stride + r] = src[r * src_stride + c] for an 8 x 8 block.
inline void transpose_8x8(const float* src, int64_t src_stride, float* dst, int64_t dst_stride) {
  __m256 rows[8];
  for (int i = 0; i < 8; ++i) rows[i] = _mm256_loadu_ps(src + i * src_stride);
  avx2_lanes::transpose_8x8(rows);
  for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + i * dst_stride, rows[i]);
}

}  // namespace

void f32_reorder_to_nchwc__avx2(const float* x, int64_t channels, int64_t plane, int64_t block, float* y, int64_t begin,
                                int64_t end) {
  for (int64_t half = 0; half < kBlock; half += 8) {
    const int64_t first = block * kBlock + half;
    const int64_t lanes = std::clamp<int64_t>(channels - first, 0, 8);
    int64_t p = begin;
    if (lanes == 8) {
      for (; p + 8 <= end; p += 8) transpose_8x8(x + first * plane + p, plane, y + p * kBlock + half, kBlock);
    }
    for (; p < end; ++p) {
      for (int64_t l = 0; l < 8; ++l) y[p * kBlock + half + l] = l < lanes ? x[(first + l) * plane + p] : 0.0f;
    }
  }
}

void f32_reorder_from_nchwc__avx2(const float* x, int64_t channels, int64_t plane, int64_t block, float* y,
                                  int64_t begin, int64_t end) {
  for (int64_t half = 0; half < kBlock; half += 8) {
    const int64_t first = block * kBlock + half;
    const int64_t lanes = std::clamp<int64_t>(channels - first, 0, 8);
    int64_t p = begin;
    if (lanes == 8) {
      for (; p + 8 <= end; p += 8) transpose_8x8(x + p * kBlock + half, kBlock, y + first * plane + p, plane);
    }
    for (; p < end; ++p) {
      for (int64_t l = 0; l < lanes; ++l) y[(first + l) * plane + p] = x[p * kBlock + half + l];
    }
  }
}

void f32_max_pool_nchwc_rows__avx2(const PoolJob& job, const float* x, float* y, int64_t oh_begin, int64_t oh_end) {
  block_kernel::max_pool_nchwc_rows<BlockAvx2>(job, x, y, oh_begin, oh_end);
}

void f32_global_average_pool_nchwc__avx2(const float* x, int64_t plane, float* y) {
  block_kernel::global_average_pool_nchwc<BlockAvx2>(x, plane, y);
}

}  // namespace nxrt::cpu::nchwc
