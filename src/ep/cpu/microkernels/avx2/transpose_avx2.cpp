// AVX2 block transpose of 32-bit elements for the Transpose kernel (contract in
// ep/cpu/microkernels/transpose_block.h): up to 16 x 16 as 8 x 8 register blocks, edges through lane masks.
// Compiled with -mavx2 -mfma; callers check the CPU first.
#include <immintrin.h>

#include "ep/cpu/microkernels/avx2/vector_lanes_avx2.h"
#include "ep/cpu/microkernels/transpose_block.h"

namespace nxrt::cpu {

void transpose_32bit_block__avx2(const void* src, int64_t src_stride, void* dst, int64_t dst_stride, int64_t rows,
                                 int64_t cols) {
  const float* in = static_cast<const float*>(src);
  float* out = static_cast<float*>(dst);
  for (int64_t r0 = 0; r0 < rows; r0 += 8) {
    const int64_t block_rows = rows - r0 < 8 ? rows - r0 : 8;
    for (int64_t c0 = 0; c0 < cols; c0 += 8) {
      const int64_t block_cols = cols - c0 < 8 ? cols - c0 : 8;
      const __m256i column_lanes = avx2_lanes::first_lanes(block_cols);
      __m256 block[8];
      for (int r = 0; r < 8; ++r) {
        const float* row = in + (r0 + r) * src_stride + c0;
        block[r] = r >= block_rows  ? _mm256_setzero_ps()
                   : block_cols == 8 ? _mm256_loadu_ps(row)
                                     : _mm256_maskload_ps(row, column_lanes);
      }
      avx2_lanes::transpose_8x8(block);
      // Masked stores are slow on some cores (microcoded on AMD): whole rows store plainly, a partial one by lanes.
      for (int64_t c = 0; c < block_cols; ++c) {
        float* column = out + (c0 + c) * dst_stride + r0;
        if (block_rows == 8) {
          _mm256_storeu_ps(column, block[c]);
        } else {
          alignas(32) float lanes[8];
          _mm256_store_ps(lanes, block[c]);
          for (int64_t r = 0; r < block_rows; ++r) column[r] = lanes[r];
        }
      }
    }
  }
}

}  // namespace nxrt::cpu
