// Attention, RotaryEmbedding, LinearAttention, SwiGLU, TensorScatter.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> attention_kernels() { return {}; }

}  // namespace nxrt::cpu
