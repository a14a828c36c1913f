// AVX-512 reorders and pools (nchwc_pool_kernel.h) of the blocked-channel layout (contracts in ep/cpu/conv/nchwc.h).
// Compiled with -mavx512f and friends; callers check the CPU first.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined_ps() pass-through operand inside _mm512_max_ps as maybe-uninitialized; the
// value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cstring>

#include "ep/cpu/conv/nchwc.h"
#include "ep/cpu/microkernels/avx512/nchwc_block_avx512.h"
#include "ep/cpu/microkernels/nchwc_pool_kernel.h"
#include "ep/cpu/microkernels/transpose_block.h"

namespace nxrt::cpu::nchwc {

void f32_reorder_to_nchwc__avx512(const float* x, int64_t channels, int64_t plane, int64_t block, float* y,
                                  int64_t begin, int64_t end) {
  const int64_t first = block * kBlock;
  const int64_t lanes = std::min<int64_t>(kBlock, channels - first);
  // The block transpose writes the real lanes only; a last partial block's padding lanes are zeroed first.
  if (lanes < kBlock) std::memset(y + begin * kBlock, 0, static_cast<size_t>((end - begin) * kBlock) * sizeof(float));
  for (int64_t p = begin; p < end; p += kBlock) {
    transpose_32bit_block__avx512(x + first * plane + p, plane, y + p * kBlock, kBlock, lanes,
                                  std::min<int64_t>(kBlock, end - p));
  }
}

void f32_reorder_from_nchwc__avx512(const float* x, int64_t channels, int64_t plane, int64_t block, float* y,
                                    int64_t begin, int64_t end) {
  const int64_t first = block * kBlock;
  const int64_t lanes = std::min<int64_t>(kBlock, channels - first);
  for (int64_t p = begin; p < end; p += kBlock) {
    transpose_32bit_block__avx512(x + p * kBlock, kBlock, y + first * plane + p, plane,
                                  std::min<int64_t>(kBlock, end - p), lanes);
  }
}

void f32_max_pool_nchwc_rows__avx512(const PoolJob& job, const float* x, float* y, int64_t oh_begin, int64_t oh_end) {
  block_kernel::max_pool_nchwc_rows<BlockAvx512>(job, x, y, oh_begin, oh_end);
}

void f32_global_average_pool_nchwc__avx512(const float* x, int64_t plane, float* y) {
  block_kernel::global_average_pool_nchwc<BlockAvx512>(x, plane, y);
}

}  // namespace nxrt::cpu::nchwc
