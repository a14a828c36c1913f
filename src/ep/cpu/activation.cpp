// Kernel family "activation": no ops registered yet.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> activation_kernels() { return {}; }

}  // namespace nxrt::cpu
