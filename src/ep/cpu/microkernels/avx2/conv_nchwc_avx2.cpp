// AVX2 + FMA instances of the blocked-channel direct and depthwise convolutions (nchwc_conv_kernel.h,
// nchwc_depthwise_kernel.h; contracts in ep/cpu/conv/nchwc.h). Built with -mavx2 -mfma; callers check the CPU first.
#include "ep/cpu/microkernels/avx2/nchwc_block_avx2.h"
#include "ep/cpu/microkernels/nchwc_conv_kernel.h"
#include "ep/cpu/microkernels/nchwc_depthwise_kernel.h"

namespace nxrt::cpu::nchwc {

void f32_conv_nchwc_rows__avx2(const ConvJob& job, int64_t block_begin, int64_t block_end, int64_t oh_begin,
                               int64_t oh_end, float* edge_scratch) {
  block_kernel::conv_nchwc_rows<BlockAvx2>(job, block_begin, block_end, oh_begin, oh_end, edge_scratch);
}

void f32_depthwise_nchwc_rows__avx2(const ConvJob& job, int64_t block_begin, int64_t block_end, int64_t oh_begin,
                                    int64_t oh_end) {
  block_kernel::depthwise_nchwc_rows<BlockAvx2>(job, block_begin, block_end, oh_begin, oh_end);
}

}  // namespace nxrt::cpu::nchwc
