// The CPU provider's registry: the one list of kernel families.
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/kernel_registry.h"

namespace nxrt::cpu {

namespace {

using FamilyFn = std::span<const KernelDef> (*)();

constexpr FamilyFn kFamilies[] = {
    elementwise_kernels,
    matmul_kernels,
    fused_attention_kernels,
    tensor_kernels,
    cast_kernels,
    unary_math_kernels,
    activation_kernels,
    binary_math_kernels,
    compare_kernels,
    reduce_kernels,
    softmax_kernels,
    shape_ops_kernels,
    concat_split_kernels,
    gather_scatter_kernels,
    einsum_kernels,
    slice_pad_kernels,
    layout_kernels,
    select_kernels,
    scatter_kernels,
    linalg_kernels,
    topk_kernels,
    conv_kernels,
    conv_max_pool_kernels,
    nchwc_kernels,
    pool_kernels,
    norm_kernels,
    loss_kernels,
    training_kernels,
    resize_kernels,
    image_kernels,
    image_decoder_kernels,
    signal_kernels,
    attention_kernels,
    rnn_kernels,
    detection_kernels,
    quantize_kernels,
    random_kernels,
    string_kernels,
    ml_kernels,
    control_flow_kernels,
    sequence_kernels,
    fused_elementwise_kernels,
};

}  // namespace

const ep::KernelRegistry& cpu_registry() {
  static const ep::KernelRegistry registry = [] {
    std::vector<std::span<const KernelDef>> tables;
    for (FamilyFn family : kFamilies) tables.push_back(family());
    return ep::KernelRegistry(tables);
  }();
  return registry;
}

const KernelDef* find_kernel(std::string_view domain, std::string_view op_type, int opset) {
  return cpu_registry().find(domain, op_type, opset);
}

std::vector<const KernelDef*> all_kernels() { return cpu_registry().rows(); }

}  // namespace nxrt::cpu
