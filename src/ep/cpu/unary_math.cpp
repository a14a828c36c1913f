// Kernel family "unary_math": no ops registered yet.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> unary_math_kernels() { return {}; }

}  // namespace nxrt::cpu
