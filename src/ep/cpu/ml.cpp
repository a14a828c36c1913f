// ai.onnx.ml operators.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> ml_kernels() { return {}; }

}  // namespace nxrt::cpu
