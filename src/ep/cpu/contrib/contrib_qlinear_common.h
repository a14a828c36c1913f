// Per-tensor quantization parameters shared by the com.microsoft QLinear kernels (contrib_qlinear.cpp,
// contrib_qlinear_pool.cpp): dequantize(q) = (q - zero_point) * scale, quantize(v) = saturate(round_half_even(v /
// scale) + zero_point), in float.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu::qlinear {

constexpr int64_t kGrain = 16384;
constexpr DataTypeMask kQuantTypes = type_mask(TypeList<uint8_t, int8_t>{});

// A scalar scale and an optional scalar zero point of the quantized type `type`.
struct QuantParams {
  float scale = 1.0f;
  int32_t zero = 0;
};

// Inputs scale_index (float, one value, positive and finite) and zero_index (optional, one value of `type`).
inline Expected<QuantParams> read_params(KernelInputs inputs, size_t scale_index, size_t zero_index, DataType type,
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


// The inputs of the QLinear pools (X, x_scale, x_zero_point?, y_scale, y_zero_point?): X quantized, of rank 3 or
// more, the scales present. Returns X's shape.
inline Expected<Shape> check_pool_inputs(KernelInputs inputs, const std::string& description) {
  TRY(require_inputs(inputs, 4, description));
  for (size_t i : {0, 1, 3}) {
    if (inputs[i] == nullptr) return make_error(StatusCode::kInvalidArgument, description, ": missing input ", i);
  }
  TRY(check_input_type(inputs, 0, kQuantTypes, description));
  const Shape& shape = inputs[0]->shape();
  if (shape.size() < 3) {
    return make_error(StatusCode::kInvalidArgument, description, ": X ", shape_to_string(shape),
                      " must have rank 3 or more (batch, channels and spatial dims)");
  }
  return shape;
}

// The QLinearAveragePool row's create function (contrib_qlinear_pool.cpp).
Expected<std::unique_ptr<Kernel>> create_qlinear_average_pool(const KernelInfo& info);

}  // namespace nxrt::cpu::qlinear
