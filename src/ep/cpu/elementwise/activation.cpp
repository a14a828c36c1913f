// Activations: LeakyRelu, PRelu, Elu, Selu, Celu, Gelu, Mish, Softplus, Softsign, HardSigmoid, HardSwish,
// ThresholdedRelu, Swish, Clip, Shrink. (Relu, Sigmoid and Tanh live in elementwise.cpp.)
// Float attributes are read once at create; f16/bf16 compute in float. NaN inputs give NaN outputs, except
// in ThresholdedRelu and Shrink, whose NaN falls in the zero branch (as in the ONNX reference).
// PRelu's slope broadcasts unidirectionally to X; integer PRelu multiplies with two's-complement wrap.
// Clip reads min/max attributes before opset 11 and optional one-element inputs from opset 11 on; min > max
// gives max everywhere and a NaN bound NaN (as numpy.clip). Shrink on integers computes as numpy promotes them with
// float32 (float32 up to 16 bits, double above) and saturates back.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "ep/cpu/elementwise/unary_common.h"

namespace nxrt::cpu {

namespace {

struct LeakyReluOp {
  float alpha = 0.01f;
  template <class C>
  C operator()(C x) const {
    return x < C{0} ? static_cast<C>(alpha) * x : x;
  }
};

struct EluOp {
  float alpha = 1.0f;
  template <class C>
  C operator()(C x) const {
    return x > C{0} ? x : static_cast<C>(alpha) * std::expm1(x);
  }
};

struct SeluOp {
  float alpha = 1.67326319217681884765625f;
  float gamma = 1.05070102214813232421875f;
  template <class C>
  C operator()(C x) const {
    const C g = static_cast<C>(gamma);
    return x > C{0} ? g * x : g * static_cast<C>(alpha) * std::expm1(x);
  }
};

struct CeluOp {
  float alpha = 1.0f;
  template <class C>
  C operator()(C x) const {
    const C a = static_cast<C>(alpha);
    return x > C{0} ? x : a * std::expm1(x / a);
  }
};

template <class C>
inline C softplus(C x) {
  return x > C{0} ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

struct SoftplusOp {
  template <class C>
  C operator()(C x) const {
    return softplus(x);
  }
};

struct MishOp {
  template <class C>
  C operator()(C x) const {
    return x * std::tanh(softplus(x));
  }
};

struct SoftsignOp {
  template <class C>
  C operator()(C x) const {
    return x / (C{1} + std::fabs(x));
  }
};

template <class C>
inline C clamp01(C v) {
  return v < C{0} ? C{0} : (v > C{1} ? C{1} : v);
}

struct HardSigmoidOp {
  float alpha = 0.2f;
  float beta = 0.5f;
  template <class C>
  C operator()(C x) const {
    return clamp01(static_cast<C>(alpha) * x + static_cast<C>(beta));
  }
};

struct HardSwishOp {
  template <class C>
  C operator()(C x) const {
    return x * clamp01(x / C{6} + C{0.5});
  }
};

struct ThresholdedReluOp {
  float alpha = 1.0f;
  template <class C>
  C operator()(C x) const {
    return x > static_cast<C>(alpha) ? x : C{0};
  }
};

struct GeluOp {
  bool tanh_approximation = false;
  template <class C>
  C operator()(C x) const {
    if (tanh_approximation) {
      const C k = static_cast<C>(0.7978845608028654);  // sqrt(2 / pi)
      return C{0.5} * x * (C{1} + std::tanh(k * (x + static_cast<C>(0.044715) * x * x * x)));
    }
    return C{0.5} * x * (C{1} + std::erf(x * static_cast<C>(0.7071067811865476)));
  }
  void apply_f32(const float* in, float* out, int64_t count) const {
    if (tanh_approximation) {
      vector_gelu_tanh(in, out, count);
    } else {
      vector_gelu_erf(in, out, count);
    }
  }
};

struct SwishOp {
  float alpha = 1.0f;
  template <class C>
  C operator()(C x) const {
    return x / (C{1} + std::exp(-static_cast<C>(alpha) * x));
  }
};

struct ShrinkOp {
  float lambd = 0.5f;
  float bias = 0.0f;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      // As the reference's numpy promotion of x with the float32 attributes: float32 for 8- and 16-bit integers
      // (127 - 6e-8 is 127), float64 for wider ones.
      using F = std::conditional_t<(sizeof(C) <= 2), float, double>;
      const F v = static_cast<F>(x), l = static_cast<F>(lambd), b = static_cast<F>(bias);
      const F r = v < -l ? v + b : (v > l ? v - b : F{0});
      return saturate_to_int<C>(static_cast<double>(r));
    } else {
      const C l = static_cast<C>(lambd);
      const C b = static_cast<C>(bias);
      return x < -l ? x + b : (x > l ? x - b : C{0});
    }
  }
};

template <class Op>
Expected<std::unique_ptr<Kernel>> create_alpha_op(const KernelInfo& info) {
  Op op;
  TRY_ASSIGN(op.alpha, info.node.attr_float("alpha", op.alpha));
  return make_unary_kernel<FloatTypes>(info, op);
}

Expected<std::unique_ptr<Kernel>> create_selu(const KernelInfo& info) {
  SeluOp op;
  if (info.opset() < 6) {  // opset 1 defaults were rounded to 4 decimals
    op.alpha = 1.6732f;
    op.gamma = 1.0507f;
  }
  TRY_ASSIGN(op.alpha, info.node.attr_float("alpha", op.alpha));
  TRY_ASSIGN(op.gamma, info.node.attr_float("gamma", op.gamma));
  return make_unary_kernel<FloatTypes>(info, op);
}

Expected<std::unique_ptr<Kernel>> create_celu(const KernelInfo& info) {
  CeluOp op;
  TRY_ASSIGN(op.alpha, info.node.attr_float("alpha", op.alpha));
  if (op.alpha == 0.0f || !std::isfinite(op.alpha)) {
    return make_error(StatusCode::kInvalidArgument, info.node.describe(), ": attribute alpha must be finite and "
                      "non-zero, got ", op.alpha);
  }
  return make_unary_kernel<FloatTypes>(info, op);
}

Expected<std::unique_ptr<Kernel>> create_hard_sigmoid(const KernelInfo& info) {
  HardSigmoidOp op;
  TRY_ASSIGN(op.alpha, info.node.attr_float("alpha", op.alpha));
  TRY_ASSIGN(op.beta, info.node.attr_float("beta", op.beta));
  return make_unary_kernel<FloatTypes>(info, op);
}

Expected<std::unique_ptr<Kernel>> create_gelu(const KernelInfo& info) {
  auto attribute = info.node.attr_string("approximate", "none");
  if (!attribute) return attribute.status();
  const std::string_view approximate = *attribute;
  if (approximate != "none" && approximate != "tanh") {
    return make_error(StatusCode::kInvalidArgument, info.node.describe(),
                      ": attribute approximate must be 'none' or 'tanh', got '", approximate, "'");
  }
  return make_unary_kernel<FloatTypes>(info, GeluOp{approximate == "tanh"});
}

Expected<std::unique_ptr<Kernel>> create_shrink(const KernelInfo& info) {
  ShrinkOp op;
  TRY_ASSIGN(op.lambd, info.node.attr_float("lambd", op.lambd));
  TRY_ASSIGN(op.bias, info.node.attr_float("bias", op.bias));
  return make_unary_kernel<NumericTypes>(info, op);
}

// ---- Clip ----

template <class C>
struct ClipOp {
  C lo;
  C hi;
  // A NaN bound gives NaN everywhere (numpy.clip, the reference); a NaN input stays NaN.
  C operator()(C x) const {
    const C m = x < lo || lo != lo ? lo : x;
    return m > hi || hi != hi ? hi : m;
  }
};

class ClipKernel final : public Kernel {
 public:
  // Before opset 11 the bounds are attributes (`lo`/`hi`); from 11 on they are optional inputs 1 and 2.
  ClipKernel(std::string description, DataTypeMask types, bool bounds_from_inputs, double lo, double hi)
      : description_(std::move(description)), types_(types), bounds_from_inputs_(bounds_from_inputs), lo_(lo), hi_(hi) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_input_type(inputs, 0, types_, description_));
    const DataType type = inputs[0]->dtype();
    for (size_t i = 1; bounds_from_inputs_ && i < inputs.size() && i < 3; ++i) {
      if (inputs[i] == nullptr) continue;
      const char* name = i == 1 ? "min" : "max";
      if (inputs[i]->dtype() != type) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " (", name, ") type ",
                          data_type_name(inputs[i]->dtype()), " differs from input 0 type ", data_type_name(type));
      }
      if (inputs[i]->numel() != 1) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " (", name,
                          ") must be a scalar, got shape ", shape_to_string(inputs[i]->shape()));
      }
    }
    outputs.assign(1, OutputDesc{type, inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    visit_dtype<NumericTypes>(x.dtype(), [&]<class T>() {
      using C = unary_compute_t<T>;
      ClipOp<C> op{lowest<C>(), highest<C>()};
      if (bounds_from_inputs_) {
        if (inputs.size() > 1 && inputs[1] != nullptr) op.lo = static_cast<C>(inputs[1]->data<T>()[0]);
        if (inputs.size() > 2 && inputs[2] != nullptr) op.hi = static_cast<C>(inputs[2]->data<T>()[0]);
      } else if constexpr (std::is_floating_point_v<C>) {
        op.lo = static_cast<C>(lo_);
        op.hi = static_cast<C>(hi_);
      }
      unary_map(x.data<T>(), outputs[0].data<T>(), x.numel(), pool, op);
    });
    return Status::ok();
  }

 private:
  template <class C>
  static C lowest() {
    if constexpr (std::is_floating_point_v<C>) return -std::numeric_limits<C>::infinity();
    return std::numeric_limits<C>::lowest();
  }
  template <class C>
  static C highest() {
    if constexpr (std::is_floating_point_v<C>) return std::numeric_limits<C>::infinity();
    return std::numeric_limits<C>::max();
  }

  std::string description_;
  DataTypeMask types_;
  bool bounds_from_inputs_;
  double lo_;
  double hi_;
};

Expected<std::unique_ptr<Kernel>> create_clip(const KernelInfo& info) {
  const bool from_inputs = info.opset() >= 11;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  if (!from_inputs) {
    // Opset 1 leaves absent bounds unbounded; opset 6 defaults them to the float range.
    const float fallback = info.opset() >= 6 ? FLT_MAX : std::numeric_limits<float>::infinity();
    TRY_ASSIGN(const float min_value, info.node.attr_float("min", -fallback));
    TRY_ASSIGN(const float max_value, info.node.attr_float("max", fallback));
    lo = min_value;
    hi = max_value;
  }
  return std::unique_ptr<Kernel>(std::make_unique<ClipKernel>(
      info.node.describe(), registered_types(info, type_mask(NumericTypes{})), from_inputs, lo, hi));
}

// ---- PRelu ----

using PReluTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

template <class C>
inline C prelu(C x, C slope) {
  if constexpr (std::is_unsigned_v<C>) {
    return x;
  } else if constexpr (std::is_integral_v<C>) {
    using W = unary_wrap_t<C>;
    return x < 0 ? static_cast<C>(static_cast<W>(x) * static_cast<W>(slope)) : x;
  } else {
    return x < C{0} ? x * slope : x;
  }
}

template <class T>
void prelu_varying(const T* __restrict x, const T* __restrict slope, T* __restrict y, int64_t n) {
  using C = unary_compute_t<T>;
  constexpr int64_t kBlock = 16;  // fixed inner length: vectorises under -O2 (see unary_span)
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) {
      y[i + j] = unary_store<T>(prelu(static_cast<C>(x[i + j]), static_cast<C>(slope[i + j])));
    }
  }
  for (; i < n; ++i) y[i] = unary_store<T>(prelu(static_cast<C>(x[i]), static_cast<C>(slope[i])));
}

template <class T>
void prelu_row(const T* x, const T* slope, T* y, int64_t n, bool slope_varies) {
  using C = unary_compute_t<T>;
  if (slope_varies) {
    prelu_varying(x, slope, y, n);
    return;
  }
  const C s = static_cast<C>(slope[0]);
  unary_span(x, y, n, [s](C v) { return prelu(v, s); });
}

// Iteration plan of X with the slope broadcast onto it: X dims of size 1 dropped, neighbouring dims merged
// when the slope broadcasts both or neither; slope_strides are 0 on broadcast dims.
struct SlopePlan {
  std::vector<int64_t> dims;
  std::vector<int64_t> slope_strides;
};

SlopePlan make_slope_plan(const Shape& x, const Shape& slope) {
  SlopePlan plan;
  std::vector<bool> used;
  const size_t offset = x.size() - slope.size();
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == 1) continue;
    const bool slope_used = i >= offset && slope[i - offset] != 1;
    if (!plan.dims.empty() && used.back() == slope_used) {
      plan.dims.back() *= x[i];
      continue;
    }
    plan.dims.push_back(x[i]);
    used.push_back(slope_used);
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    used.push_back(true);
  }
  plan.slope_strides.assign(plan.dims.size(), 0);
  int64_t stride = 1;
  for (size_t i = plan.dims.size(); i-- > 0;) {
    if (!used[i]) continue;
    plan.slope_strides[i] = stride;
    stride *= plan.dims[i];
  }
  return plan;
}

class PReluKernel final : public Kernel {
 public:
  PReluKernel(std::string description, DataTypeMask types) : description_(std::move(description)), types_(types) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_input_type(inputs, 0, types_, description_));
    if (inputs.size() < 2 || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 1 (slope)");
    }
    const Tensor& x = *inputs[0];
    const Tensor& slope = *inputs[1];
    if (slope.dtype() != x.dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (slope) type ",
                        data_type_name(slope.dtype()), " differs from input 0 type ", data_type_name(x.dtype()));
    }
    bool ok = slope.rank() <= x.rank();
    for (size_t i = 0; ok && i < slope.rank(); ++i) {
      const int64_t s = slope.shape()[i];
      ok = s == 1 || s == x.shape()[x.rank() - slope.rank() + i];
    }
    if (!ok) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (slope) shape ",
                        shape_to_string(slope.shape()), " cannot broadcast to input 0 shape ",
                        shape_to_string(x.shape()));
    }
    outputs.assign(1, OutputDesc{x.dtype(), x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& tx = *inputs[0];
    const Tensor& tslope = *inputs[1];
    const int64_t n = tx.numel();
    if (n == 0) return Status::ok();
    visit_dtype<PReluTypes>(tx.dtype(), [&]<class T>() {
      const T* x = tx.data<T>();
      const T* slope = tslope.data<T>();
      T* y = outputs[0].data<T>();
      if (tslope.numel() == 1 || tslope.numel() == n) {
        const bool varies = tslope.numel() == n && n > 1;
        pool.parallel_for(n, kUnaryGrain, [&](int64_t begin, int64_t end) {
          prelu_row(x + begin, slope + (varies ? begin : 0), y + begin, end - begin, varies);
        });
        return;
      }
      const SlopePlan plan = make_slope_plan(tx.shape(), tslope.shape());
      const int64_t inner = plan.dims.back();
      const bool varies = plan.slope_strides.back() != 0;
      const size_t rank = plan.dims.size();
      pool.parallel_for(n / inner, std::max<int64_t>(1, kUnaryGrain / inner), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          int64_t slope_offset = 0;
          int64_t rest = row;
          for (size_t d = rank - 1; d-- > 0;) {
            slope_offset += (rest % plan.dims[d]) * plan.slope_strides[d];
            rest /= plan.dims[d];
          }
          prelu_row(x + row * inner, slope + slope_offset, y + row * inner, inner, varies);
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  DataTypeMask types_;
};

Expected<std::unique_ptr<Kernel>> create_prelu(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(
      std::make_unique<PReluKernel>(info.node.describe(), registered_types(info, type_mask(PReluTypes{}))));
}

using F32F64F16 = TypeList<float, double, Float16>;
using NumericNoBf16 = TypeList<float, double, Float16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                               uint64_t>;
constexpr DataTypeMask kHalfFloats = type_mask(F32F64F16{});
constexpr DataTypeMask kFloats = type_mask(FloatTypes{});
constexpr DataTypeMask kPReluInts = type_mask(TypeList<int32_t, int64_t, uint32_t, uint64_t>{});

template <class Op>
constexpr KernelCreateFn kPlain = create_plain_unary<Op, FloatTypes>;

const KernelDef kActivationKernels[] = {
    {"LeakyRelu", graph::kOnnxDomain, 1, 15, kHalfFloats, 0, create_alpha_op<LeakyReluOp>},
    {"LeakyRelu", graph::kOnnxDomain, 16, kLatestOpset, kFloats, 0, create_alpha_op<LeakyReluOp>},
    {"PRelu", graph::kOnnxDomain, 1, 8, kHalfFloats, 0, create_prelu},
    {"PRelu", graph::kOnnxDomain, 9, 15, kHalfFloats | kPReluInts, 0, create_prelu},
    {"PRelu", graph::kOnnxDomain, 16, kLatestOpset, kFloats | kPReluInts, 0, create_prelu},
    {"Elu", graph::kOnnxDomain, 1, 21, kHalfFloats, 0, create_alpha_op<EluOp>},
    {"Elu", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, create_alpha_op<EluOp>},
    {"Selu", graph::kOnnxDomain, 1, 21, kHalfFloats, 0, create_selu},
    {"Selu", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, create_selu},
    {"Celu", graph::kOnnxDomain, 12, 27, type_mask(TypeList<float>{}), 0, create_celu},
    {"Celu", graph::kOnnxDomain, 28, kLatestOpset, kFloats, 0, create_celu},
    {"Gelu", graph::kOnnxDomain, 20, kLatestOpset, kFloats, 0, create_gelu},
    {"Mish", graph::kOnnxDomain, 18, 21, kHalfFloats, 0, kPlain<MishOp>},
    {"Mish", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kPlain<MishOp>},
    {"Softplus", graph::kOnnxDomain, 1, 21, kHalfFloats, 0, kPlain<SoftplusOp>},
    {"Softplus", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kPlain<SoftplusOp>},
    {"Softsign", graph::kOnnxDomain, 1, 21, kHalfFloats, 0, kPlain<SoftsignOp>},
    {"Softsign", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kPlain<SoftsignOp>},
    {"HardSigmoid", graph::kOnnxDomain, 1, 21, kHalfFloats, 0, create_hard_sigmoid},
    {"HardSigmoid", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, create_hard_sigmoid},
    {"HardSwish", graph::kOnnxDomain, 14, 21, kHalfFloats, 0, kPlain<HardSwishOp>},
    {"HardSwish", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kPlain<HardSwishOp>},
    {"ThresholdedRelu", graph::kOnnxDomain, 10, 21, kHalfFloats, 0, create_alpha_op<ThresholdedReluOp>},
    {"ThresholdedRelu", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, create_alpha_op<ThresholdedReluOp>},
    {"Swish", graph::kOnnxDomain, 24, kLatestOpset, kFloats, 0, create_alpha_op<SwishOp>},
    {"Clip", graph::kOnnxDomain, 1, 11, kHalfFloats, 0, create_clip},
    {"Clip", graph::kOnnxDomain, 12, 12, type_mask(NumericNoBf16{}), 0, create_clip},
    {"Clip", graph::kOnnxDomain, 13, kLatestOpset, type_mask(NumericTypes{}), 0, create_clip},
    {"Shrink", graph::kOnnxDomain, 9, kLatestOpset, type_mask(NumericTypes{}), 0, create_shrink},
};

}  // namespace

std::span<const KernelDef> activation_kernels() { return kActivationKernels; }

}  // namespace nxrt::cpu
