// Sequence and Optional operators.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> sequence_kernels() { return {}; }

}  // namespace nxrt::cpu
