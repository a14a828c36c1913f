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

namespace {

class InputTypeCheckedKernel final : public Kernel {
 public:
  InputTypeCheckedKernel(const KernelDef& def, const graph::Node& node, std::unique_ptr<Kernel> kernel)
      : def_(def), kernel_(std::move(kernel)) {
    node_.name = node.name;
    node_.op_type = node.op_type;
    node_.domain = node.domain;
    node_.opset = node.opset;
  }

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    const size_t index = static_cast<size_t>(def_.type_input);
    TRY(check(index < inputs.size() && inputs[index] != nullptr ? inputs[index]->dtype() : DataType::kUndefined));
    return kernel_->reshape(inputs, outputs);
  }
  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    return kernel_->run(inputs, outputs, pool);
  }
  int alias_input() const override { return kernel_->alias_input(); }
  const Tensor* constant_output() const override { return kernel_->constant_output(); }
  bool takes_values() const override { return kernel_->takes_values(); }
  Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext& ctx) const override {
    const size_t index = static_cast<size_t>(def_.type_input);
    const bool tensor = index < inputs.size() && inputs[index] != nullptr && inputs[index]->is_tensor();
    TRY(check(tensor ? inputs[index]->tensor().dtype() : DataType::kUndefined));
    return kernel_->run_values(inputs, outputs, ctx);
  }

 private:
  // An absent input is the kernel's to report.
  Status check(DataType type) const {
    if (type == DataType::kUndefined || (def_.types & (DataTypeMask{1} << static_cast<int>(type))) != 0) {
      return Status::ok();
    }
    return missing_kernel_error(node_, "no kernel for input type " + tensor_type_string(type));
  }

  const KernelDef& def_;
  graph::Node node_;  // name, op type, domain and opset: for the error message
  std::unique_ptr<Kernel> kernel_;
};

}  // namespace

std::unique_ptr<Kernel> with_input_type_check(const KernelDef& def, const graph::Node& node,
                                              std::unique_ptr<Kernel> kernel) {
  if (def.type_input < 0 || def.types == kAnyType) return kernel;
  return std::make_unique<InputTypeCheckedKernel>(def, node, std::move(kernel));
}

std::vector<const KernelDef*> all_kernels() { return kernel_index().all; }

Status missing_kernel_error(const graph::Node& node, std::string_view detail) {
  return make_error(StatusCode::kNotImplemented, "Could not find an implementation for ", node.op_type, "(",
                    node.opset, ") node with name '", node.name, "'", detail.empty() ? "" : ": ", detail);
}

}  // namespace nxrt::cpu
