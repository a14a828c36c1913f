// AVX-512 instance of the blocked-channel Winograd F(2x2, 3x3) convolution (nchwc_winograd_kernel.h; contract in
// ep/cpu/conv/nchwc.h). Compiled with -mavx512f and friends; callers check the CPU first.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined_ps() pass-through operand inside _mm512_max_ps/_mm512_min_ps as
// maybe-uninitialized; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "ep/cpu/microkernels/avx512/nchwc_block_avx512.h"
#include "ep/cpu/microkernels/nchwc_winograd_kernel.h"

namespace nxrt::cpu::nchwc {

void f32_conv_nchwc_winograd_rows__avx512(const ConvJob& job, int64_t th_begin, int64_t th_end, float* scratch) {
  block_kernel::conv_nchwc_winograd_rows<BlockAvx512>(job, th_begin, th_end, scratch);
}

}  // namespace nxrt::cpu::nchwc
