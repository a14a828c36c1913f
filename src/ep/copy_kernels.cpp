#include "ep/copy_kernels.h"

#include <optional>

#include "ep/provider.h"

namespace nxrt::ep {

namespace {

// Copies input 0 to output 0 (allocated by the executor where the row says) with the node's provider.
class CopyKernel final : public Kernel {
 public:
  CopyKernel(const ExecutionProvider& provider, std::optional<Tensor> constant)
      : provider_(provider), constant_(std::move(constant)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 1, "copy"));
    if (inputs[0]->dtype() == DataType::kString) {
      return make_error(StatusCode::kNotImplemented, "string tensors cannot be copied to ", provider_.name());
    }
    outputs.push_back(OutputDesc{inputs[0]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }

  Status execute(KernelContext& context) const override {
    return provider_.copy(*context.inputs[0], context.outputs[0], context.stream);
  }

  const Tensor* constant_output() const override { return constant_ ? &*constant_ : nullptr; }

 private:
  const ExecutionProvider& provider_;
  std::optional<Tensor> constant_;  // the device copy of a constant input
};

Expected<std::unique_ptr<Kernel>> create_copy(const KernelInfo& info, bool to_device) {
  if (info.provider == nullptr || is_host(info.provider->device())) {
    return make_error(StatusCode::kFail, info.node.describe(), " needs a provider with device memory");
  }
  if (info.node.inputs.size() != 1 || info.node.outputs.size() != 1) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), " takes one input and one output");
  }
  std::optional<Tensor> constant;
  const Tensor* source = info.constant_inputs.empty() ? nullptr : info.constant_inputs[0];
  if (to_device && source != nullptr && source->dtype() != DataType::kString) {
    TRY_ASSIGN(Tensor copy, Tensor::allocate(source->dtype(), source->shape(), info.provider->allocator()));
    TRY(info.provider->copy(*source, copy, nullptr));
    constant = std::move(copy);
  }
  return std::unique_ptr<Kernel>(new CopyKernel(*info.provider, std::move(constant)));
}

Expected<std::unique_ptr<Kernel>> create_copy_to_device(const KernelInfo& info) { return create_copy(info, true); }
Expected<std::unique_ptr<Kernel>> create_copy_to_host(const KernelInfo& info) { return create_copy(info, false); }

const KernelDef kCopyKernels[] = {
    {kCopyToDevice, kCopyDomain, 1, kLatestOpset, kAnyType, -1, create_copy_to_device, /*host_inputs=*/1u, 0u},
    {kCopyToHost, kCopyDomain, 1, kLatestOpset, kAnyType, -1, create_copy_to_host, 0u, /*host_outputs=*/1u},
};

}  // namespace

std::span<const KernelDef> copy_kernels() { return kCopyKernels; }

}  // namespace nxrt::ep
