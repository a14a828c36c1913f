// Kernel family "concat_split": no ops registered yet.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> concat_split_kernels() { return {}; }

}  // namespace nxrt::cpu
