// Kernel family "reduce": no ops registered yet.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> reduce_kernels() { return {}; }

}  // namespace nxrt::cpu
