// Kernel family "compare": no ops registered yet.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> compare_kernels() { return {}; }

}  // namespace nxrt::cpu
