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
using ep::SubgraphCompiler;
using ep::type_mask;
using ep::ValueKernel;
using ep::with_input_type_check;

// Per-family tables, each defined at the bottom of its family file and listed once in registry.cpp.
std::span<const KernelDef> elementwise_kernels();
std::span<const KernelDef> matmul_kernels();
std::span<const KernelDef> fused_attention_kernels();
std::span<const KernelDef> conv_max_pool_kernels();
std::span<const KernelDef> nchwc_kernels();
std::span<const KernelDef> tensor_kernels();
std::span<const KernelDef> cast_kernels();
std::span<const KernelDef> unary_math_kernels();
std::span<const KernelDef> activation_kernels();
std::span<const KernelDef> binary_math_kernels();
std::span<const KernelDef> compare_kernels();
std::span<const KernelDef> reduce_kernels();
std::span<const KernelDef> softmax_kernels();
std::span<const KernelDef> shape_ops_kernels();
std::span<const KernelDef> concat_split_kernels();
std::span<const KernelDef> gather_scatter_kernels();
std::span<const KernelDef> einsum_kernels();
std::span<const KernelDef> slice_pad_kernels();
std::span<const KernelDef> layout_kernels();
std::span<const KernelDef> select_kernels();
std::span<const KernelDef> scatter_kernels();
std::span<const KernelDef> linalg_kernels();
std::span<const KernelDef> topk_kernels();
std::span<const KernelDef> conv_kernels();
std::span<const KernelDef> pool_kernels();
std::span<const KernelDef> norm_kernels();
std::span<const KernelDef> loss_kernels();
std::span<const KernelDef> training_kernels();
std::span<const KernelDef> resize_kernels();
std::span<const KernelDef> image_kernels();
std::span<const KernelDef> image_decoder_kernels();
std::span<const KernelDef> signal_kernels();
std::span<const KernelDef> attention_kernels();
std::span<const KernelDef> rnn_kernels();
std::span<const KernelDef> detection_kernels();
std::span<const KernelDef> quantize_kernels();
std::span<const KernelDef> random_kernels();
std::span<const KernelDef> string_kernels();
std::span<const KernelDef> ml_kernels();
std::span<const KernelDef> control_flow_kernels();
std::span<const KernelDef> sequence_kernels();
std::span<const KernelDef> fused_elementwise_kernels();

// Every row of the CPU registry, in family order.
std::vector<const KernelDef*> all_kernels();

// The CPU row for (domain, op_type) whose opset range contains `opset`; nullptr when none.
const KernelDef* find_kernel(std::string_view domain, std::string_view op_type, int opset);

}  // namespace nxrt::cpu
