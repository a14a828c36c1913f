// Kernel family "shape_ops": no ops registered yet.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> shape_ops_kernels() { return {}; }

}  // namespace nxrt::cpu
