// AVX-512 16 x 16 block transpose of 32-bit elements for the Transpose kernel (contract in
// ep/cpu/microkernels/transpose_block.h). Compiled with -mavx512f and friends; callers check the CPU first.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined_ps() pass-through operand inside the shuffle intrinsics as maybe-uninitialized;
// the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "ep/cpu/microkernels/avx512/vector_lanes_avx512.h"
#include "ep/cpu/microkernels/transpose_block.h"

namespace nxrt::cpu {

void transpose_32bit_block__avx512(const void* src, int64_t src_stride, void* dst, int64_t dst_stride, int64_t rows,
                                   int64_t cols) {
  const float* in = static_cast<const float*>(src);
  float* out = static_cast<float*>(dst);
  const __mmask16 columns = first_lanes(cols);
  __m512 block[16];
  for (int r = 0; r < 16; ++r) {
    block[r] = r < rows ? _mm512_maskz_loadu_ps(columns, in + r * src_stride) : _mm512_setzero_ps();
  }
  transpose_16x16(block);
  const __mmask16 out_lanes = first_lanes(rows);
  for (int64_t c = 0; c < cols; ++c) _mm512_mask_storeu_ps(out + c * dst_stride, out_lanes, block[c]);
}

}  // namespace nxrt::cpu
