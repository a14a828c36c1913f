// Kernel family "gather_scatter": no ops registered yet.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> gather_scatter_kernels() { return {}; }

}  // namespace nxrt::cpu
