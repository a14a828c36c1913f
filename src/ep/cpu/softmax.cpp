// Kernel family "softmax": no ops registered yet.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> softmax_kernels() { return {}; }

}  // namespace nxrt::cpu
