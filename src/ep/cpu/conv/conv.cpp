// Conv, com.microsoft FusedConv, ConvInteger, QLinearConv (im2col + GEMM in conv_common.cpp), and the conv family
// table, which also lists ConvTranspose (conv_transpose.cpp), DeformConv and CausalConvWithState (conv_deform.cpp).
// Float types compute in float (double for double). The integer convolutions subtract the zero points and run
// the f64 GEMM, which is exact for 8-bit products summed over any realistic reduction length.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

#include "ep/cpu/conv/conv_direct.h"
#include "ep/cpu/conv/conv_winograd.h"
#include "ep/cpu/conv/conv_kernels.h"

namespace nxrt::cpu {

namespace conv {

Expected<ConvProblem> conv_problem(const WindowAttrs& attrs, const Shape& x, const Shape& w,
                                   const std::string& description) {
  if (x.size() < 3 || x.size() > kMaxConvRank + 2) {
    return make_error(StatusCode::kInvalidArgument, description, ": input X must have rank 3 to ", kMaxConvRank + 2,
                      ", got ", shape_to_string(x));
  }
  if (w.size() != x.size()) {
    return make_error(StatusCode::kInvalidArgument, description, ": input W ", shape_to_string(w),
                      " must have the same rank as X ", shape_to_string(x));
  }
  int64_t grouped_channels = 0;  // W dim 1 times group, overflow-checked (both come from the model)
  if (__builtin_mul_overflow(w[1], attrs.group, &grouped_channels) || x[1] != grouped_channels) {
    return make_error(StatusCode::kInvalidArgument, description, ": X channels (", x[1], ") must equal W dim 1 (", w[1],
                      ") times group (", attrs.group, ")");
  }
  if (w[0] % attrs.group != 0) {
    return make_error(StatusCode::kInvalidArgument, description, ": W output channels (", w[0],
                      ") are not divisible by group ", attrs.group);
  }
  const std::span<const int64_t> kernel(w.data() + 2, w.size() - 2);
  if (!attrs.kernel_shape.empty() &&
      !std::equal(kernel.begin(), kernel.end(), attrs.kernel_shape.begin(), attrs.kernel_shape.end())) {
    return make_error(StatusCode::kInvalidArgument, description, ": kernel_shape does not match W ",
                      shape_to_string(w));
  }
  ConvProblem p;
  p.batch = x[0];
  p.in_channels = x[1];
  p.out_channels = w[0];
  TRY_ASSIGN(p.geometry,
             resolve_geometry(attrs, std::span<const int64_t>(x.data() + 2, x.size() - 2), kernel, description));
  p.y_shape = {p.batch, p.out_channels};
  p.y_shape.insert(p.y_shape.end(), p.geometry.out.begin(), p.geometry.out.end());
  return p;
}

}  // namespace conv

namespace {

using conv::ConvProblem;
using conv::WindowAttrs;

// Conv (inputs X, W, B?) and com.microsoft FusedConv (X, W, B?, Z?): Y = activation(Conv(X, W) + B + Z).
class ConvKernel final : public Kernel {
 public:
  ConvKernel(std::string description, DataTypeMask types, WindowAttrs attrs, FusedActivation activation,
             const Tensor* constant_w)
      : description_(std::move(description)),
        types_(types),
        attrs_(std::move(attrs)),
        activation_(activation),
        constant_f32_w_(constant_w != nullptr && constant_w->dtype() == DataType::kFloat32) {
    if (constant_w != nullptr && constant_w->dtype() == DataType::kFloat32 && constant_w->rank() == 4 &&
        attrs_.group == 1) {
      const Shape& s = constant_w->shape();
      direct_weights_ = conv::DirectConvWeights::pack(constant_w->data<float>(), s[0], s[1], s[2], s[3]);
      if (conv::winograd_weights_fit(s[0], s[1], s[2], s[3])) {
        winograd_weights_ = conv::WinogradWeights::pack(constant_w->data<float>(), s[0], s[1]);
      }
    }
  }

  const conv::DirectConvWeights& direct_weights() const { return direct_weights_; }

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 2, description_));
    const Tensor& x = *inputs[0];
    const Tensor& w = *inputs[1];
    if (!conv::type_in(types_, x.dtype()) || w.dtype() != x.dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input types X ",
                        data_type_name(x.dtype()), ", W ", data_type_name(w.dtype()));
    }
    TRY_ASSIGN(const ConvProblem p, conv::conv_problem(attrs_, x.shape(), w.shape(), description_));
    if (const Tensor* b = optional_input(inputs, 2)) {
      if (b->dtype() != x.dtype() || b->rank() != 1 || b->shape()[0] != p.out_channels) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input B ", shape_to_string(b->shape()),
                          " must be a 1-D ", data_type_name(x.dtype()), " tensor of ", p.out_channels, " values");
      }
    }
    if (const Tensor* z = optional_input(inputs, 3)) {
      if (z->dtype() != x.dtype() || z->shape() != p.y_shape) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input Z ", shape_to_string(z->shape()),
                          " must be a ", data_type_name(x.dtype()), " tensor of the output shape ",
                          shape_to_string(p.y_shape));
      }
    }
    outputs.assign(1, OutputDesc{x.dtype(), p.y_shape});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const Tensor& w = *inputs[1];
    const Tensor* b = optional_input(inputs, 2);
    const Tensor* z = optional_input(inputs, 3);
    TRY_ASSIGN(const ConvProblem p, conv::conv_problem(attrs_, x.shape(), w.shape(), description_));
    Tensor& y = outputs[0];
    if (y.numel() == 0) return Status::ok();
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      using Acc = conv::AccOf<T>;
      if constexpr (std::is_same_v<T, Acc>) {
        const conv::ConvEpilogue<Acc> epilogue{b ? b->data<T>() : nullptr, z ? z->data<T>() : nullptr, activation_};
        if constexpr (std::is_same_v<T, float>) {
          if (constant_f32_w_ && conv::narrow_conv_applies(attrs_.group, p.geometry, z != nullptr)) {
            const int64_t k_dim = w.numel() / p.out_channels;
            std::call_once(narrow_packed_, [&] {
              narrow_weights_ = conv::pack_narrow_conv_weights(w.data<float>(), p.out_channels, k_dim);
            });
            conv::conv_narrow_f32(x.data<float>(), narrow_weights_, y.data<float>(), p.batch, p.in_channels,
                                  p.out_channels, p.geometry, pool, epilogue);
            return;
          }
          if (!winograd_weights_.empty() && winograd_weights_.out_channels() == p.out_channels &&
              winograd_weights_.in_channels() == p.in_channels &&
              conv::winograd_applies(attrs_.group, p.geometry, p.in_channels, p.out_channels)) {
            conv::conv_winograd_f32(x.data<float>(), winograd_weights_, y.data<float>(), p.batch, p.geometry, pool,
                                    epilogue);
            return;
          }
          if (conv::direct_conv_applies(attrs_.group, p.geometry, p.in_channels, p.out_channels)) {
            run_direct(x.data<float>(), w, y.data<float>(), p, pool, epilogue);
            return;
          }
          if (conv::depthwise_conv_applies(attrs_.group, p.geometry, p.in_channels, p.out_channels)) {
            conv::conv_depthwise_f32(x.data<float>(), w.data<float>(), y.data<float>(), p.batch, p.out_channels,
                                     p.geometry, pool, epilogue);
            return;
          }
        }
        conv::conv_forward<Acc>(x.data<T>(), w.data<T>(), y.data<T>(), p.batch, p.in_channels, p.out_channels,
                                attrs_.group, p.geometry, pool, epilogue);
      } else {
        const auto xs = conv::to_acc<Acc>(x.data<T>(), x.numel());
        const auto ws = conv::to_acc<Acc>(w.data<T>(), w.numel());
        const auto bs = b ? conv::to_acc<Acc>(b->data<T>(), b->numel()) : std::vector<Acc>{};
        const auto zs = z ? conv::to_acc<Acc>(z->data<T>(), z->numel()) : std::vector<Acc>{};
        std::vector<Acc> ys(static_cast<size_t>(y.numel()));
        const conv::ConvEpilogue<Acc> epilogue{b ? bs.data() : nullptr, z ? zs.data() : nullptr, activation_};
        // Acc is float here.
        if (conv::direct_conv_applies(attrs_.group, p.geometry, p.in_channels, p.out_channels)) {
          const auto packed = conv::DirectConvWeights::pack(ws.data(), p.out_channels, p.in_channels,
                                                            p.geometry.kernel[0], p.geometry.kernel[1]);
          conv::conv_direct_f32(xs.data(), packed, ys.data(), p.batch, p.geometry, pool, epilogue);
        } else {
          conv::conv_forward<Acc>(xs.data(), ws.data(), ys.data(), p.batch, p.in_channels, p.out_channels,
                                  attrs_.group, p.geometry, pool, epilogue);
        }
        conv::from_acc(ys.data(), y.numel(), y.data<T>());
      }
    });
    return Status::ok();
  }

 private:
  // Direct kernel with the weights packed at create when W was constant and has this shape, else packed now.
  void run_direct(const float* x, const Tensor& w, float* y, const ConvProblem& p, ThreadPool& pool,
                  const conv::ConvEpilogue<float>& epilogue) const {
    const Shape& s = w.shape();
    if (!direct_weights_.empty() && direct_weights_.out_channels() == s[0] && direct_weights_.in_channels() == s[1] &&
        direct_weights_.kernel_h() == s[2] && direct_weights_.kernel_w() == s[3]) {
      conv::conv_direct_f32(x, direct_weights_, y, p.batch, p.geometry, pool, epilogue);
      return;
    }
    const auto packed = conv::DirectConvWeights::pack(w.data<float>(), s[0], s[1], s[2], s[3]);
    conv::conv_direct_f32(x, packed, y, p.batch, p.geometry, pool, epilogue);
  }

  std::string description_;
  DataTypeMask types_;
  WindowAttrs attrs_;
  FusedActivation activation_;
  bool constant_f32_w_ = false;
  conv::DirectConvWeights direct_weights_;  // empty unless W is a constant f32 4-D tensor and group is 1
  // W^T for conv_narrow_f32, packed by the first run that takes that path (a constant W has one shape).
  mutable std::once_flag narrow_packed_;
  mutable PackedB<float> narrow_weights_;
  conv::WinogradWeights winograd_weights_;  // also 3x3 with at least 16 input and output channels
};

}  // namespace

const conv::DirectConvWeights* conv::prepacked_direct_weights(const Kernel& conv_kernel) {
  const auto* kernel = dynamic_cast<const ConvKernel*>(&conv_kernel);
  return kernel != nullptr && !kernel->direct_weights().empty() ? &kernel->direct_weights() : nullptr;
}

namespace {

const Tensor* constant_w(const KernelInfo& info) {
  return info.constant_inputs.size() > 1 ? info.constant_inputs[1] : nullptr;
}

template <DataTypeMask Types>
Expected<std::unique_ptr<Kernel>> create_conv(const KernelInfo& info) {
  TRY_ASSIGN(WindowAttrs attrs, conv::parse_window_attrs(info.node));
  return std::unique_ptr<Kernel>(
      std::make_unique<ConvKernel>(info.node.describe(), Types, std::move(attrs), FusedActivation{},
                                   constant_w(info)));
}

// com.microsoft FusedConv: Conv's attributes plus `activation` (string) and `activation_params` (floats).
template <DataTypeMask Types>
Expected<std::unique_ptr<Kernel>> create_fused_conv(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(WindowAttrs attrs, conv::parse_window_attrs(node));
  TRY_ASSIGN(const std::string name, node.attr_string("activation", ""));
  TRY_ASSIGN(const std::vector<float> params, node.attr_floats("activation_params", {}));
  TRY_ASSIGN(const FusedActivation activation, parse_fused_activation(name, params, node.describe()));
  return std::unique_ptr<Kernel>(
      std::make_unique<ConvKernel>(node.describe(), Types, std::move(attrs), activation, constant_w(info)));
}

using Int8Types = TypeList<int8_t, uint8_t>;
constexpr DataTypeMask kInt8Mask = type_mask(Int8Types{});

// Reads element i of an int8/uint8 tensor (0 when absent).
int32_t int8_at(const Tensor* t, int64_t i) {
  if (t == nullptr) return 0;
  return t->dtype() == DataType::kInt8 ? t->data<int8_t>()[i] : t->data<uint8_t>()[i];
}

// A zero point (or scale) that is a scalar / 1-element tensor, or (per_channel) one value per output channel.
Status check_per_channel(const Tensor* t, int64_t channels, bool per_channel_allowed, const char* name,
                         const std::string& description) {
  if (t == nullptr || t->numel() == 1) return Status::ok();
  if (per_channel_allowed && t->rank() == 1 && t->numel() == channels) return Status::ok();
  return make_error(
      StatusCode::kInvalidArgument, description, ": input ", name, " ", shape_to_string(t->shape()),
      per_channel_allowed ? " must be a scalar or have one value per output channel" : " must be a scalar");
}

// x - x_zero_point and w - w_zero_point (per output channel) as doubles.
void centered_operands(const Tensor& x, const Tensor* x_zero, const Tensor& w, const Tensor* w_zero,
                       std::vector<double>& xs, std::vector<double>& ws) {
  const int32_t xz = int8_at(x_zero, 0);
  xs.resize(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) xs[static_cast<size_t>(i)] = int8_at(&x, i) - xz;
  const int64_t channels = w.shape()[0];
  const int64_t per_channel = channels == 0 ? 0 : w.numel() / channels;
  ws.resize(static_cast<size_t>(w.numel()));
  for (int64_t m = 0; m < channels; ++m) {
    const int32_t wz = int8_at(w_zero, w_zero != nullptr && w_zero->numel() > 1 ? m : 0);
    for (int64_t j = 0; j < per_channel; ++j) {
      const int64_t i = m * per_channel + j;
      ws[static_cast<size_t>(i)] = int8_at(&w, i) - wz;
    }
  }
}

// ConvInteger (inputs x, w, x_zero_point, w_zero_point -> int32) and QLinearConv (x, x_scale, x_zero_point,
// w, w_scale, w_zero_point, y_scale, y_zero_point, B -> int8/uint8 like y_zero_point).
template <bool Quantized>
class IntegerConvKernel final : public Kernel {
 public:
  IntegerConvKernel(std::string description, WindowAttrs attrs)
      : description_(std::move(description)), attrs_(std::move(attrs)) {}

  static constexpr size_t kW = Quantized ? 3 : 1;
  static constexpr size_t kXZero = 2;
  static constexpr size_t kWZero = Quantized ? 5 : 3;

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, Quantized ? 8 : 2, description_));
    const Tensor& x = *inputs[0];
    const Tensor& w = *inputs[kW];
    if (!conv::type_in(kInt8Mask, x.dtype()) || !conv::type_in(kInt8Mask, w.dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": X and W must be int8 or uint8, got ",
                        data_type_name(x.dtype()), " and ", data_type_name(w.dtype()));
    }
    TRY_ASSIGN(const ConvProblem p, conv::conv_problem(attrs_, x.shape(), w.shape(), description_));
    const Tensor* x_zero = optional_input(inputs, kXZero);
    const Tensor* w_zero = optional_input(inputs, kWZero);
    TRY(check_zero(x_zero, x.dtype(), 1, false, "x_zero_point"));
    TRY(check_zero(w_zero, w.dtype(), p.out_channels, true, "w_zero_point"));
    DataType y_type = DataType::kInt32;
    if constexpr (Quantized) {
      for (size_t i : {size_t{1}, size_t{4}, size_t{6}}) {
        if (inputs[i]->dtype() != DataType::kFloat32) {
          return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " (scale) must be float");
        }
      }
      TRY(check_per_channel(inputs[1], 1, false, "x_scale", description_));
      TRY(check_per_channel(inputs[4], p.out_channels, true, "w_scale", description_));
      TRY(check_per_channel(inputs[6], 1, false, "y_scale", description_));
      const Tensor& y_zero = *inputs[7];
      if (!conv::type_in(kInt8Mask, y_zero.dtype())) {
        return make_error(StatusCode::kInvalidArgument, description_, ": y_zero_point must be int8 or uint8");
      }
      TRY(check_per_channel(&y_zero, 1, false, "y_zero_point", description_));
      if (const Tensor* b = optional_input(inputs, 8)) {
        if (b->dtype() != DataType::kInt32 || b->rank() != 1 || b->shape()[0] != p.out_channels) {
          return make_error(StatusCode::kInvalidArgument, description_, ": input B ", shape_to_string(b->shape()),
                            " must be 1-D int32 with ", p.out_channels, " values");
        }
      }
      y_type = y_zero.dtype();
    }
    outputs.assign(1, OutputDesc{y_type, p.y_shape});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const Tensor& w = *inputs[kW];
    TRY_ASSIGN(const ConvProblem p, conv::conv_problem(attrs_, x.shape(), w.shape(), description_));
    Tensor& y = outputs[0];
    if (y.numel() == 0) return Status::ok();
    const Tensor* w_zero = optional_input(inputs, kWZero);
    std::vector<double> xs;
    std::vector<double> ws;
    centered_operands(x, optional_input(inputs, kXZero), w, w_zero, xs, ws);
    std::vector<double> acc(static_cast<size_t>(y.numel()));
    conv::conv_forward<double>(xs.data(), ws.data(), acc.data(), p.batch, p.in_channels, p.out_channels,
                               attrs_.group, p.geometry, pool);
    const int64_t plane = p.geometry.out_size();
    if constexpr (!Quantized) {
      auto* out = y.data<int32_t>();
      for (int64_t i = 0; i < y.numel(); ++i) out[i] = static_cast<int32_t>(acc[static_cast<size_t>(i)]);
    } else {
      const float x_scale = inputs[1]->data<float>()[0];
      const float y_scale = inputs[6]->data<float>()[0];
      const Tensor& w_scale = *inputs[4];
      const int32_t y_zero = int8_at(inputs[7], 0);
      const Tensor* b = optional_input(inputs, 8);
      const bool is_signed = y.dtype() == DataType::kInt8;
      const double lo = is_signed ? -128.0 : 0.0;
      const double hi = is_signed ? 127.0 : 255.0;
      for (int64_t i = 0; i < y.numel(); ++i) {
        const int64_t m = (i / plane) % p.out_channels;
        const float ws_m = w_scale.data<float>()[w_scale.numel() > 1 ? m : 0];
        const float scale = x_scale * ws_m / y_scale;
        double v = acc[static_cast<size_t>(i)] + (b ? b->data<int32_t>()[m] : 0);
        v = v * static_cast<double>(scale) + y_zero;
        v = v == v ? std::clamp(v, lo, hi) : static_cast<double>(y_zero);  // NaN scales give the zero point
        const auto q = static_cast<int32_t>(std::nearbyint(v));
        if (is_signed) {
          y.data<int8_t>()[i] = static_cast<int8_t>(q);
        } else {
          y.data<uint8_t>()[i] = static_cast<uint8_t>(q);
        }
      }
    }
    return Status::ok();
  }

 private:
  Status check_zero(const Tensor* zero, DataType operand, int64_t channels, bool per_channel, const char* name) const {
    if (zero == nullptr) return Status::ok();
    if (zero->dtype() != operand) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " type ", data_type_name(zero->dtype()),
                        " must match its operand type ", data_type_name(operand));
    }
    return check_per_channel(zero, channels, per_channel, name, description_);
  }

  std::string description_;
  WindowAttrs attrs_;
};

template <bool Quantized>
Expected<std::unique_ptr<Kernel>> create_integer_conv(const KernelInfo& info) {
  TRY_ASSIGN(WindowAttrs attrs, conv::parse_window_attrs(info.node));
  return std::unique_ptr<Kernel>(
      std::make_unique<IntegerConvKernel<Quantized>>(info.node.describe(), std::move(attrs)));
}

constexpr DataTypeMask kFloatNoBf16 = type_mask(TypeList<float, double, Float16>{});
constexpr DataTypeMask kFloatAll = type_mask(FloatTypes{});
constexpr DataTypeMask kCausalTypes = type_mask(TypeList<float, Float16, BFloat16>{});
constexpr DataTypeMask kFusedTypes = type_mask(TypeList<float, double>{});

const KernelDef kConvKernels[] = {
    {"Conv", graph::kOnnxDomain, 1, 21, kFloatNoBf16, 0, create_conv<kFloatNoBf16>},
    {"Conv", graph::kOnnxDomain, 22, kLatestOpset, kFloatAll, 0, create_conv<kFloatAll>},
    {"ConvTranspose", graph::kOnnxDomain, 1, 21, kFloatNoBf16, 0, conv::create_conv_transpose},
    {"ConvTranspose", graph::kOnnxDomain, 22, kLatestOpset, kFloatAll, 0, conv::create_conv_transpose},
    {"ConvInteger", graph::kOnnxDomain, 10, kLatestOpset, kInt8Mask, 0, create_integer_conv<false>},
    {"QLinearConv", graph::kOnnxDomain, 10, kLatestOpset, kInt8Mask, 0, create_integer_conv<true>},
    {"DeformConv", graph::kOnnxDomain, 19, 21, kFloatNoBf16, 0, conv::create_deform_conv},
    {"DeformConv", graph::kOnnxDomain, 22, kLatestOpset, kFloatAll, 0, conv::create_deform_conv},
    {"CausalConvWithState", graph::kOnnxDomain, 27, kLatestOpset, kCausalTypes, 0, conv::create_causal_conv_with_state},
    {"FusedConv", graph::kMsDomain, 1, kLatestOpset, kFusedTypes, 0, create_fused_conv<kFusedTypes>},
};

}  // namespace

std::span<const KernelDef> conv_kernels() { return kConvKernels; }

}  // namespace nxrt::cpu
