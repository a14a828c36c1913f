#include "ep/test_device/test_device_kernels.h"

#include <algorithm>
#include <array>

#include "ep/provider.h"

namespace nxrt::ep {

namespace {

constexpr Device kTestDevice{DeviceType::kTestDevice, 0};

Status require_on_device(KernelInputs inputs, std::string_view op) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] != nullptr && inputs[i]->device() != kTestDevice) {
      return make_error(StatusCode::kFail, op, " on TestDevice: input ", i, " is in ",
                        device_name(inputs[i]->device()), " memory");
    }
  }
  return Status::ok();
}

Status require_float(const Tensor& tensor, std::string_view op) {
  if (tensor.dtype() == DataType::kFloat32) return Status::ok();
  return make_error(StatusCode::kNotImplemented, op, " on TestDevice takes float, got ",
                    tensor_type_string(tensor.dtype()));
}

// Offset into a broadcast operand of `shape` (right-aligned against the output's rank) for output index `index`.
int64_t broadcast_offset(const Shape& shape, const Shape& out, int64_t index) {
  int64_t offset = 0;
  int64_t stride = 1;
  for (size_t d = 0; d < out.size(); ++d) {
    const size_t axis = out.size() - 1 - d;
    const int64_t coordinate = index % out[axis];
    index /= out[axis];
    if (d < shape.size()) {
      const int64_t extent = shape[shape.size() - 1 - d];
      if (extent != 1) offset += coordinate * stride;
      stride *= extent;
    }
  }
  return offset;
}

class AddKernel final : public Kernel {
 public:
  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 2, "Add"));
    TRY(require_float(*inputs[0], "Add"));
    TRY(require_float(*inputs[1], "Add"));
    const Shape& a = inputs[0]->shape();
    const Shape& b = inputs[1]->shape();
    Shape out(std::max(a.size(), b.size()), 1);
    for (size_t d = 0; d < out.size(); ++d) {
      const int64_t da = d < a.size() ? a[a.size() - 1 - d] : 1;
      const int64_t db = d < b.size() ? b[b.size() - 1 - d] : 1;
      if (da != db && da != 1 && db != 1) {
        return make_error(StatusCode::kInvalidArgument, "Add: shapes ", shape_to_string(a), " and ",
                          shape_to_string(b), " do not broadcast");
      }
      out[out.size() - 1 - d] = da == 1 ? db : da;
    }
    outputs.push_back(OutputDesc{DataType::kFloat32, std::move(out)});
    return Status::ok();
  }

  Status execute(KernelContext& context) const override {
    TRY(require_on_device(context.inputs, "Add"));
    const Tensor& a = *context.inputs[0];
    const Tensor& b = *context.inputs[1];
    Tensor& out = context.outputs[0];
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* po = out.data<float>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      po[i] = pa[broadcast_offset(a.shape(), out.shape(), i)] + pb[broadcast_offset(b.shape(), out.shape(), i)];
    }
    count_test_device_kernel_run();
    return Status::ok();
  }
};

class ReluKernel final : public Kernel {
 public:
  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 1, "Relu"));
    TRY(require_float(*inputs[0], "Relu"));
    outputs.push_back(OutputDesc{DataType::kFloat32, inputs[0]->shape()});
    return Status::ok();
  }

  Status execute(KernelContext& context) const override {
    TRY(require_on_device(context.inputs, "Relu"));
    const float* in = context.inputs[0]->data<float>();
    float* out = context.outputs[0].data<float>();
    for (int64_t i = 0; i < context.outputs[0].numel(); ++i) out[i] = in[i] > 0.0f || in[i] != in[i] ? in[i] : 0.0f;
    count_test_device_kernel_run();
    return Status::ok();
  }
};

class MatMulKernel final : public Kernel {
 public:
  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 2, "MatMul"));
    TRY(require_float(*inputs[0], "MatMul"));
    TRY(require_float(*inputs[1], "MatMul"));
    const Shape& a = inputs[0]->shape();
    const Shape& b = inputs[1]->shape();
    if (a.size() != 2 || b.size() != 2 || a[1] != b[0]) {
      return make_error(StatusCode::kInvalidArgument, "MatMul on TestDevice multiplies 2-D matrices, got ",
                        shape_to_string(a), " and ", shape_to_string(b));
    }
    outputs.push_back(OutputDesc{DataType::kFloat32, Shape{a[0], b[1]}});
    return Status::ok();
  }

  Status execute(KernelContext& context) const override {
    TRY(require_on_device(context.inputs, "MatMul"));
    const Tensor& a = *context.inputs[0];
    const Tensor& b = *context.inputs[1];
    const int64_t m = a.shape()[0];
    const int64_t k = a.shape()[1];
    const int64_t n = b.shape()[1];
    if (context.allocator == nullptr) {
      return make_error(StatusCode::kFail, "MatMul on TestDevice: the kernel context has no device allocator");
    }
    // B transposed into a device temporary from the context's allocator, so that every output element reads two
    // contiguous rows.
    TRY_ASSIGN(Tensor b_transposed, Tensor::allocate(DataType::kFloat32, Shape{n, k}, *context.allocator));
    TRY(require_on_device(std::array<const Tensor*, 1>{&b_transposed}, "MatMul temporary"));
    const float* pb = b.data<float>();
    float* pbt = b_transposed.data<float>();
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j) pbt[j * k + p] = pb[p * n + j];
    }
    const float* pa = a.data<float>();
    float* po = context.outputs[0].data<float>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(pa[i * k + p]) * pbt[j * k + p];
        po[i * n + j] = static_cast<float>(sum);
      }
    }
    count_test_device_kernel_run();
    return Status::ok();
  }
};

template <class K>
Expected<std::unique_ptr<Kernel>> create(const KernelInfo&) {
  return std::unique_ptr<Kernel>(new K());
}

constexpr DataTypeMask kFloat = DataTypeMask{1} << static_cast<int>(DataType::kFloat32);

const KernelDef kKernels[] = {
    {"Add", "", 7, kLatestOpset, kFloat, 0, create<AddKernel>},
    {"Relu", "", 6, kLatestOpset, kFloat, 0, create<ReluKernel>},
    {"MatMul", "", 1, kLatestOpset, kFloat, 0, create<MatMulKernel>},
};

bool known_rank(const graph::Graph& graph, int value, size_t rank) {
  if (value == graph::kNoValue) return false;
  const graph::TypeInfo& type = graph.values[value].type;
  return type.is_tensor() && type.shape && type.shape->size() == rank;
}

}  // namespace

std::span<const KernelDef> test_device_kernels() { return kKernels; }

bool test_device_can_run(const graph::Graph& graph, const graph::Node& node) {
  if (node.domain.empty() && node.op_type == "MatMul") {
    return node.inputs.size() == 2 && known_rank(graph, node.inputs[0], 2) && known_rank(graph, node.inputs[1], 2);
  }
  return true;
}

}  // namespace nxrt::ep
