// com.microsoft quantized elementwise ops on uint8 / int8 with per-tensor (scalar) scales and zero points, as
// ONNX Runtime's contrib schemas define them:
//   QLinearAdd / QLinearMul(A, A_scale, A_zero_point?, B, B_scale, B_zero_point?, C_scale, C_zero_point?):
//     C = quantize(dequantize(A) op dequantize(B)) with numpy broadcasting;
//   QLinearSigmoid(X, X_scale, X_zero_point?, Y_scale, Y_zero_point?) and QLinearLeakyRelu(..., alpha 0.01):
//     Y = quantize(f(dequantize(X))), through a 256-entry table built per run.
// dequantize(q) = (q - zero_point) * scale, quantize(v) = saturate(round_half_even(v / scale) + zero_point), in
// float. A value within float rounding of a half-way point may land on either neighbour of another runtime's.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ep/cpu/elementwise/broadcast.h"
#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

constexpr int64_t kGrain = 16384;
constexpr DataTypeMask kQuantTypes = type_mask(TypeList<uint8_t, int8_t>{});

// A scalar scale and an optional scalar zero point of the quantized type `type`.
struct QuantParams {
  float scale = 1.0f;
  int32_t zero = 0;
};

Expected<QuantParams> read_params(KernelInputs inputs, size_t scale_index, size_t zero_index, DataType type,
                                  const std::string& description) {
  const Tensor* scale = optional_input(inputs, scale_index);
  const Tensor* zero = optional_input(inputs, zero_index);
  if (scale == nullptr || scale->dtype() != DataType::kFloat32 || scale->numel() != 1 ||
      (zero != nullptr && (zero->dtype() != type || zero->numel() != 1))) {
    return make_error(StatusCode::kInvalidArgument, description, ": inputs ", scale_index, " and ", zero_index,
                      " must be a float scale and a zero point of the data's type, each one value (per tensor)");
  }
  QuantParams p;
  p.scale = scale->data<float>()[0];
  if (zero != nullptr) {
    p.zero = type == DataType::kUInt8 ? zero->data<uint8_t>()[0] : zero->data<int8_t>()[0];
  }
  if (!(p.scale > 0.0f) || !std::isfinite(p.scale)) {
    return make_error(StatusCode::kInvalidArgument, description, ": scale (input ", scale_index,
                      ") must be positive and finite, got ", p.scale);
  }
  return p;
}

template <class Q>
Q quantize(float value, const QuantParams& p) {
  const float q = std::nearbyint(value / p.scale) + static_cast<float>(p.zero);
  const float low = static_cast<float>(std::numeric_limits<Q>::min());
  const float high = static_cast<float>(std::numeric_limits<Q>::max());
  return static_cast<Q>(std::isnan(q) ? static_cast<float>(p.zero) : std::clamp(q, low, high));
}

class QLinearUnaryKernel final : public Kernel {
 public:
  enum class Function { kSigmoid, kLeakyRelu };

  QLinearUnaryKernel(std::string description, Function function, float alpha)
      : description_(std::move(description)), function_(function), alpha_(alpha) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_input_type(inputs, 0, kQuantTypes, description_));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY(check_input_type(inputs, 0, kQuantTypes, description_));
    const DataType type = inputs[0]->dtype();
    TRY_ASSIGN(const QuantParams x, read_params(inputs, 1, 2, type, description_));
    TRY_ASSIGN(const QuantParams y, read_params(inputs, 3, 4, type, description_));
    visit_dtype<TypeList<uint8_t, int8_t>>(type, [&]<class Q>() {
      std::array<Q, 256> table;
      for (int code = 0; code < 256; ++code) {
        const Q q = static_cast<Q>(static_cast<uint8_t>(code));
        const float v = (static_cast<float>(q) - static_cast<float>(x.zero)) * x.scale;
        const float f = function_ == Function::kSigmoid ? 1.0f / (1.0f + std::exp(-v)) : (v >= 0 ? v : alpha_ * v);
        table[static_cast<uint8_t>(q)] = quantize<Q>(f, y);
      }
      const Q* in = inputs[0]->data<Q>();
      Q* out = outputs[0].data<Q>();
      pool.parallel_for(inputs[0]->numel(), kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = table[static_cast<uint8_t>(in[i])];
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  Function function_;
  float alpha_;
};

class QLinearBinaryKernel final : public Kernel {
 public:
  QLinearBinaryKernel(std::string description, bool multiply)
      : description_(std::move(description)), multiply_(multiply) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Shape out, output_shape(inputs));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), out});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Shape out, output_shape(inputs));
    const DataType type = inputs[0]->dtype();
    TRY_ASSIGN(const QuantParams a, read_params(inputs, 1, 2, type, description_));
    TRY_ASSIGN(const QuantParams b, read_params(inputs, 4, 5, type, description_));
    TRY_ASSIGN(const QuantParams c, read_params(inputs, 6, 7, type, description_));
    visit_dtype<TypeList<uint8_t, int8_t>>(type, [&]<class Q>() {
      const bool multiply = multiply_;
      broadcast_binary(inputs[0]->data<Q>(), inputs[0]->shape(), inputs[3]->data<Q>(), inputs[3]->shape(),
                       outputs[0].data<Q>(), out, pool, [&](Q qa, Q qb) {
                         const float va = (static_cast<float>(qa) - static_cast<float>(a.zero)) * a.scale;
                         const float vb = (static_cast<float>(qb) - static_cast<float>(b.zero)) * b.scale;
                         return quantize<Q>(multiply ? va * vb : va + vb, c);
                       }, kGrain);
    });
    return Status::ok();
  }

 private:
  Expected<Shape> output_shape(KernelInputs inputs) const {
    for (size_t required : {0, 1, 3, 4, 6}) {
      if (optional_input(inputs, required) == nullptr) {
        return make_error(StatusCode::kInvalidArgument, description_, ": missing input ", required);
      }
    }
    TRY(check_input_type(inputs, 0, kQuantTypes, description_));
    if (inputs[3]->dtype() != inputs[0]->dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": A and B must have one type");
    }
    auto out = broadcast_shapes(inputs[0]->shape(), inputs[3]->shape());
    if (!out) {
      return make_error(StatusCode::kInvalidArgument, description_, ": shapes ", shape_to_string(inputs[0]->shape()),
                        " and ", shape_to_string(inputs[3]->shape()), " do not broadcast");
    }
    return *out;
  }

  std::string description_;
  bool multiply_;
};

Expected<std::unique_ptr<Kernel>> create_qlinear_add(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<QLinearBinaryKernel>(info.node.describe(), false));
}

Expected<std::unique_ptr<Kernel>> create_qlinear_mul(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<QLinearBinaryKernel>(info.node.describe(), true));
}

Expected<std::unique_ptr<Kernel>> create_qlinear_sigmoid(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(
      std::make_unique<QLinearUnaryKernel>(info.node.describe(), QLinearUnaryKernel::Function::kSigmoid, 0.0f));
}

Expected<std::unique_ptr<Kernel>> create_qlinear_leaky_relu(const KernelInfo& info) {
  TRY_ASSIGN(const float alpha, info.node.attr_float("alpha", 0.01f));
  return std::unique_ptr<Kernel>(
      std::make_unique<QLinearUnaryKernel>(info.node.describe(), QLinearUnaryKernel::Function::kLeakyRelu, alpha));
}

const KernelDef kContribQLinearKernels[] = {
    {"QLinearAdd", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 0, create_qlinear_add},
    {"QLinearMul", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 0, create_qlinear_mul},
    {"QLinearSigmoid", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 0, create_qlinear_sigmoid},
    {"QLinearLeakyRelu", graph::kMsDomain, 1, kLatestOpset, kQuantTypes, 0, create_qlinear_leaky_relu},
};

}  // namespace

std::span<const KernelDef> contrib_qlinear_kernels() { return kContribQLinearKernels; }

}  // namespace nxrt::cpu
