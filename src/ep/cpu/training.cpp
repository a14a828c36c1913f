// Adagrad, Adam, Momentum (ai.onnx.preview.training).
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> training_kernels() { return {}; }

}  // namespace nxrt::cpu
