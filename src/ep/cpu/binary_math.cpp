// Kernel family "binary_math": no ops registered yet.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> binary_math_kernels() { return {}; }

}  // namespace nxrt::cpu
