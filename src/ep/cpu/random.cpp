// RandomNormal, RandomUniform, the Like variants, Multinomial, Bernoulli.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> random_kernels() { return {}; }

}  // namespace nxrt::cpu
