// If, Loop, Scan.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> control_flow_kernels() { return {}; }

}  // namespace nxrt::cpu
