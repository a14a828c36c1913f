// Kernel family "einsum": no ops registered yet.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> einsum_kernels() { return {}; }

}  // namespace nxrt::cpu
