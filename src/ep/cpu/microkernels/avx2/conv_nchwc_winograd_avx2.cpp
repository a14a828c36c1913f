// AVX2 + FMA instance of the blocked-channel Winograd F(2x2, 3x3) convolution (nchwc_winograd_kernel.h; contract in
// ep/cpu/conv/nchwc.h). Built with -mavx2 -mfma; callers check the CPU first.
#include "ep/cpu/microkernels/avx2/nchwc_block_avx2.h"
#include "ep/cpu/microkernels/nchwc_winograd_kernel.h"

namespace nxrt::cpu::nchwc {

void f32_conv_nchwc_winograd_rows__avx2(const ConvJob& job, int64_t th_begin, int64_t th_end, float* scratch) {
  block_kernel::conv_nchwc_winograd_rows<BlockAvx2>(job, th_begin, th_end, scratch);
}

}  // namespace nxrt::cpu::nchwc
