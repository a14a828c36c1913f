// BatchNormalization, InstanceNormalization, LayerNormalization, GroupNormalization, RMSNormalization, LpNormalization, LRN, MeanVarianceNormalization, Dropout.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> norm_kernels() { return {}; }

}  // namespace nxrt::cpu
