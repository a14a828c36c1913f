// DFT, STFT, window functions, MelWeightMatrix.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> signal_kernels() { return {}; }

}  // namespace nxrt::cpu
