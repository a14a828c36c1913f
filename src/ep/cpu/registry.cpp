#include <string>
#include <unordered_map>

#include "ep/cpu/kernel.h"

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

struct KernelIndex {
  std::unordered_map<std::string, std::vector<const KernelDef*>> by_op;  // "domain\x1fop_type" -> rows
  std::vector<const KernelDef*> all;
};

std::string index_key(std::string_view domain, std::string_view op_type) {
  std::string key(domain);
  key += '\x1f';
  key += op_type;
  return key;
}

const KernelIndex& kernel_index() {
  static const KernelIndex index = [] {
    KernelIndex built;
    for (FamilyFn family : kFamilies) {
      for (const KernelDef& def : family()) {
        built.by_op[index_key(def.domain, def.op_type)].push_back(&def);
        built.all.push_back(&def);
      }
    }
    return built;
  }();
  return index;
}

}  // namespace

const KernelDef* find_kernel(std::string_view domain, std::string_view op_type, int opset) {
  const auto& index = kernel_index();
  const auto found = index.by_op.find(index_key(domain, op_type));
  if (found == index.by_op.end()) return nullptr;
  for (const KernelDef* def : found->second) {
    if (def->since_opset <= opset && opset <= def->last_opset) return def;
  }
  return nullptr;
}

Status Kernel::run_values(std::span<const Value* const>, std::span<Value>, RunContext&) const {
  return make_error(StatusCode::kFail, "run_values called on a tensor kernel");
}

Status ValueKernel::reshape(KernelInputs, std::vector<OutputDesc>&) const {
  return make_error(StatusCode::kFail, "reshape called on a value kernel");
}

Status ValueKernel::run(KernelInputs, std::span<Tensor>, ThreadPool&) const {
  return make_error(StatusCode::kFail, "run called on a value kernel");
}

std::vector<const KernelDef*> all_kernels() { return kernel_index().all; }

Status missing_kernel_error(const graph::Node& node, std::string_view detail) {
  return make_error(StatusCode::kNotImplemented, "Could not find an implementation for ", node.op_type, "(",
                    node.opset, ") node with name '", node.name, "'", detail.empty() ? "" : ": ", detail);
}

}  // namespace nxrt::cpu
