// AVX-512 instances of the blocked-channel direct and depthwise convolutions (nchwc_conv_kernel.h,
// nchwc_depthwise_kernel.h; contracts in ep/cpu/conv/nchwc.h). Compiled with -mavx512f and friends; callers check
// the CPU first.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined_ps() pass-through operand inside _mm512_max_ps/_mm512_min_ps as
// maybe-uninitialized; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "ep/cpu/microkernels/avx512/nchwc_block_avx512.h"
#include "ep/cpu/microkernels/nchwc_conv_kernel.h"
#include "ep/cpu/microkernels/nchwc_depthwise_kernel.h"

namespace nxrt::cpu::nchwc {

void f32_conv_nchwc_rows__avx512(const ConvJob& job, int64_t block_begin, int64_t block_end, int64_t oh_begin,
                                 int64_t oh_end, float* edge_scratch) {
  block_kernel::conv_nchwc_rows<BlockAvx512>(job, block_begin, block_end, oh_begin, oh_end, edge_scratch);
}

void f32_depthwise_nchwc_rows__avx512(const ConvJob& job, int64_t block_begin, int64_t block_end, int64_t oh_begin,
                                      int64_t oh_end) {
  block_kernel::depthwise_nchwc_rows<BlockAvx512>(job, block_begin, block_end, oh_begin, oh_end);
}

}  // namespace nxrt::cpu::nchwc
