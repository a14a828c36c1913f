// com.microsoft QAttention (opset 1), as ONNX Runtime's contrib schema defines it:
//   QAttention(input (uint8 / int8) [B, S, Hin], weight (uint8 / int8) [Hin, 3 H], bias float [3 H], input_scale
//              (one float), weight_scale (one float or [3 H], per column), mask_index? int32, input_zero_point?
//              (one value), weight_zero_point? (one value or [3 H]), past? float [2, B, N, P, H / N])
//   -> output float [B, S, H], present? [2, B, N, P + S, H / N].
// It is Attention (contrib_attention.cpp, the same attributes) of dequantize(input) with dequantize(weight), where
// dequantize(q) = (q - zero_point) * scale; the kernel runs that Attention kernel on the dequantized float
// tensors (constant weights dequantized once, at creation). float16 bias and past are NOT_IMPLEMENTED, as in ONNX
// Runtime's CPU kernel.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ep/cpu/contrib/contrib_attention_common.h"
#include "ep/cpu/elementwise/unary_common.h"

namespace nxrt::cpu::contrib_detail {

namespace {

enum Input : size_t {
  kInput, kWeight, kBias, kInputScale, kWeightScale, kMaskIndex, kInputZero, kWeightZero, kPast,
};

constexpr DataTypeMask kQuantTypes = type_mask(TypeList<uint8_t, int8_t>{});

int32_t code_at(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kUInt8 ? t.data<uint8_t>()[i] : t.data<int8_t>()[i];
}

// The weight's scale and zero point must be one value or one per column (`columns`), of float and the weight's
// type; writes W as float [Hin, columns].
Status dequantize_weight(const Tensor& w, const Tensor& scale, const Tensor* zero, float* out,
                         const std::string& description) {
  const int64_t columns = w.rank() == 2 ? w.shape()[1] : 0;
  const auto per_column = [&](const Tensor& t) { return t.numel() == 1 || (t.rank() == 1 && t.numel() == columns); };
  if (w.rank() != 2 || scale.dtype() != DataType::kFloat32 || !per_column(scale) ||
      (zero != nullptr && (zero->dtype() != w.dtype() || !per_column(*zero)))) {
    return make_error(StatusCode::kInvalidArgument, description,
                      ": weight must be 2-D with weight_scale (float) and weight_zero_point (weight's type) of one "
                      "value or one per column");
  }
  const float* scales = scale.data<float>();
  for (int64_t i = 0; i < w.numel(); ++i) {
    const int64_t j = i % columns;
    const int32_t z = zero == nullptr ? 0 : code_at(*zero, zero->numel() == 1 ? 0 : j);
    out[i] = static_cast<float>(code_at(w, i) - z) * scales[scale.numel() == 1 ? 0 : j];
  }
  return Status::ok();
}

class QAttentionKernel final : public Kernel {
 public:
  QAttentionKernel(std::string description, std::unique_ptr<Kernel> attention, std::optional<Tensor> weight)
      : description_(std::move(description)), attention_(std::move(attention)), weight_(std::move(weight)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check(inputs));
    const Tensor x = Tensor::wrap(DataType::kFloat32, inputs[kInput]->shape(), nullptr);
    const Tensor w = Tensor::wrap(DataType::kFloat32, inputs[kWeight]->shape(), nullptr);
    const Tensor* forwarded[] = {&x, &w, inputs[kBias], optional_input(inputs, kMaskIndex),
                                 optional_input(inputs, kPast)};
    return attention_->reshape(forwarded, outputs);
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY(check(inputs));
    const Tensor& input = *inputs[kInput];
    const Tensor& weight = *inputs[kWeight];
    const int64_t x_count = input.numel(), w_count = weight_ ? 0 : weight.numel();
    // The inner Attention kernel takes the contrib scratch buffers; the dequantized operands get their own.
    TRY_ASSIGN(Tensor storage, Tensor::allocate(DataType::kFloat32, Shape{x_count + w_count}));
    float* const buffer = storage.data<float>();
    const Tensor* input_zero = optional_input(inputs, kInputZero);
    const int32_t zero = input_zero == nullptr ? 0 : code_at(*input_zero, 0);
    const float scale = inputs[kInputScale]->data<float>()[0];
    for (int64_t i = 0; i < x_count; ++i) buffer[i] = static_cast<float>(code_at(input, i) - zero) * scale;
    const Tensor x = Tensor::wrap(DataType::kFloat32, input.shape(), buffer);
    Tensor w_run;
    if (!weight_) {
      TRY(dequantize_weight(weight, *inputs[kWeightScale], optional_input(inputs, kWeightZero), buffer + x_count,
                            description_));
      w_run = Tensor::wrap(DataType::kFloat32, weight.shape(), buffer + x_count);
    }
    const Tensor* forwarded[] = {&x, weight_ ? &*weight_ : &w_run, inputs[kBias], optional_input(inputs, kMaskIndex),
                                 optional_input(inputs, kPast)};
    return attention_->run(forwarded, outputs, pool);
  }

 private:
  Status check(KernelInputs inputs) const {
    for (size_t i : {kInput, kWeight, kBias, kInputScale, kWeightScale}) {
      if (optional_input(inputs, i) == nullptr) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " is required");
      }
    }
    TRY(check_input_type(inputs, kInput, kQuantTypes, description_));
    TRY(check_input_type(inputs, kWeight, kQuantTypes, description_));
    if (inputs[kBias]->dtype() != DataType::kFloat32) {
      return make_error(StatusCode::kNotImplemented, description_, ": only a float bias (and past) is supported");
    }
    const Tensor* input_zero = optional_input(inputs, kInputZero);
    const Tensor& input_scale = *inputs[kInputScale];
    if (input_scale.dtype() != DataType::kFloat32 || input_scale.numel() != 1 ||
        (input_zero != nullptr && (input_zero->dtype() != inputs[kInput]->dtype() || input_zero->numel() != 1))) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": input_scale must be one float and input_zero_point one value of input's type");
    }
    if (weight_ && weight_->shape() != inputs[kWeight]->shape()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": weight shape changed");
    }
    return Status::ok();
  }

  std::string description_;
  std::unique_ptr<Kernel> attention_;  // com.microsoft Attention over the dequantized tensors
  std::optional<Tensor> weight_;       // the dequantized weight, when it is constant
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_qattention(const KernelInfo& info) {
  const graph::Node& node = info.node;
  const auto constant = [&](size_t i) { return i < info.constant_inputs.size() ? info.constant_inputs[i] : nullptr; };
  const auto input_of = [&](size_t i) { return i < node.inputs.size() ? node.inputs[i] : graph::kNoValue; };
  std::optional<Tensor> weight;
  const bool zero_ready = input_of(kWeightZero) == graph::kNoValue || constant(kWeightZero) != nullptr;
  if (constant(kWeight) != nullptr && constant(kWeightScale) != nullptr && zero_ready &&
      ((kQuantTypes >> static_cast<int>(constant(kWeight)->dtype())) & 1u) != 0) {
    TRY_ASSIGN(Tensor w, Tensor::allocate(DataType::kFloat32, constant(kWeight)->shape()));
    TRY(dequantize_weight(*constant(kWeight), *constant(kWeightScale), constant(kWeightZero), w.data<float>(),
                          node.describe()));
    weight = std::move(w);
  }
  graph::Node attention_node = node;
  attention_node.op_type = "Attention";
  attention_node.inputs = {input_of(kInput), input_of(kWeight), input_of(kBias), input_of(kMaskIndex),
                           input_of(kPast)};
  const KernelDef* def = find_kernel(graph::kMsDomain, "Attention", 1);
  if (def == nullptr) {
    return make_error(StatusCode::kNotImplemented, node.describe(), ": no Attention kernel to run it");
  }
  const auto type_of = [&](size_t i) {
    return i < info.input_types.size() ? info.input_types[i] : DataType::kUndefined;
  };
  const KernelInfo attention_info{attention_node,
                                  {DataType::kFloat32, DataType::kFloat32, type_of(kBias), type_of(kMaskIndex),
                                   type_of(kPast)},
                                  info.output_types,
                                  {nullptr, weight ? &*weight : nullptr, constant(kBias), nullptr, nullptr},
                                  info.graph,
                                  info.subgraphs};
  TRY_ASSIGN(std::unique_ptr<Kernel> attention, def->create(attention_info));
  return std::unique_ptr<Kernel>(
      std::make_unique<QAttentionKernel>(node.describe(), std::move(attention), std::move(weight)));
}

}  // namespace nxrt::cpu::contrib_detail
