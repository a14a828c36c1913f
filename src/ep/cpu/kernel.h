// CPU kernels: the device-neutral contract of ep/kernel.h (lifecycle documented there) under the names the CPU
// kernel files use, and the per-family tables of the CPU provider's registry.
#pragma once

#include <span>
#include <vector>

#include "ep/kernel.h"

namespace nxrt::cpu {

using ep::CompiledSubgraph;
using ep::DataTypeMask;
using ep::Kernel;
using ep::KernelContext;
using ep::KernelCreateFn;
using ep::KernelDef;
using ep::KernelInfo;
using ep::KernelInputs;
using ep::kAnyType;
using ep::kLatestOpset;
using ep::missing_kernel_error;
using ep::optional_input;
using ep::OutputDesc;
using ep::require_inputs;
using ep::RunContext;
using ep::SlotMask;
using ep::SubgraphCompiler;
using ep::type_mask;
using ep::ValueKernel;
using ep::with_input_type_check;

// The kernel tables of the CPU provider, grouped by family folder, in registry order: the one list of them.
// X(name) stands for the table `name_kernels()`, defined at the bottom of its file; registry.cpp walks the list.
#define NXRT_CPU_KERNEL_TABLES(X)                                                                       \
  /* elementwise/ */ X(elementwise) X(cast) X(unary_math) X(activation) X(binary_math) X(compare)       \
  X(fused_elementwise)                                                                                  \
  /* linalg/ */ X(matmul) X(einsum) X(linalg)                                                           \
  /* attention/ */ X(fused_attention) X(attention)                                                      \
  /* tensor/ */ X(tensor) X(shape_ops) X(concat_split) X(gather_scatter) X(slice_pad) X(layout) X(select) \
  X(scatter) X(random)                                                                                  \
  /* reduce/ */ X(reduce) X(topk)                                                                       \
  /* norm/ */ X(softmax) X(norm)                                                                        \
  /* conv/ */ X(conv) X(conv_max_pool) X(nchwc)                                                         \
  /* pool/ */ X(pool)                                                                                   \
  /* training/ */ X(loss) X(training)                                                                   \
  /* image/ */ X(resize) X(image) X(image_decoder) X(detection)                                         \
  /* signal/ */ X(signal)                                                                               \
  /* rnn/ */ X(rnn)                                                                                     \
  /* quantize/ */ X(quantize)                                                                           \
  /* text/ */ X(string)                                                                                 \
  /* ml/ */ X(ml)                                                                                       \
  /* control/ */ X(control_flow) X(sequence)                                                          \
  /* contrib/ (com.microsoft) */ X(contrib_activation) X(contrib_norm) X(contrib_attention) \
  X(contrib_mha) X(contrib_gqa) X(contrib_quant) X(contrib_gather_quant) \
  X(contrib_qlinear) X(contrib_int_matmul)

#define NXRT_DECLARE_KERNEL_TABLE(name) std::span<const KernelDef> name##_kernels();
NXRT_CPU_KERNEL_TABLES(NXRT_DECLARE_KERNEL_TABLE)
#undef NXRT_DECLARE_KERNEL_TABLE

// Every row of the CPU registry, in family order.
std::vector<const KernelDef*> all_kernels();

// The CPU row for (domain, op_type) whose opset range contains `opset`; nullptr when none.
const KernelDef* find_kernel(std::string_view domain, std::string_view op_type, int opset);

}  // namespace nxrt::cpu
