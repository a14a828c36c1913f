// Conv, ConvTranspose, ConvInteger, DeformConv, CausalConvWithState.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> conv_kernels() { return {}; }

}  // namespace nxrt::cpu
