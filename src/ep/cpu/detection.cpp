// NonMaxSuppression.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> detection_kernels() { return {}; }

}  // namespace nxrt::cpu
