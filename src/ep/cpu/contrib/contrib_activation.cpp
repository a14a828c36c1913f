// com.microsoft activations, as ONNX Runtime's contrib schemas define them:
//   Gelu(X)               0.5 x (1 + erf(x / sqrt 2))
//   FastGelu(X, bias?)    0.5 x (1 + tanh(0.7978845608 (x + 0.044715 x^3))), x = X + bias
//   BiasGelu(A, B)        Gelu(A + B)
//   QuickGelu(X) alpha    x * sigmoid(alpha x), alpha 1.702 by default
//   BiasAdd(X, bias, skip) (X + bias) + skip, X and skip [N, S, C], bias [C]
//   BiasSoftmax(data, bias) axis, is_inner_broadcast: softmax(data + bias) over the dims from `axis` on.
// A bias is 1-D with X's last dim and cycles along each row. Half types compute in float, f64 in double.
// ONNX Runtime's CPU provider has no BiasAdd or BiasSoftmax kernel (CUDA only); nxrt runs them on the CPU with
// the schema's meaning. BiasSoftmax's bias broadcasts to data as numpy does (both is_inner_broadcast forms are such
// broadcasts); the attribute is read and validated only.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "ep/cpu/elementwise/fused_activation.h"
#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu {

namespace {

// Elements per pass of the bias / residual add and the activation: they stay in L1 between the two.
constexpr int64_t kChunk = 2048;
constexpr int64_t kGrain = 16384;

template <class T>
using ComputeOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
ComputeOf<T> load_value(T x) {
  return static_cast<ComputeOf<T>>(unary_compute_t<T>(x));
}

// The activation in place over float64 values, to float64's relative accuracy: Gelu as 0.5 x erfc(-x / sqrt 2) and
// GeluTanh as x / (1 + exp(-2 u)), u = sqrt(2 / pi) (x + 0.044715 x^3) (the same functions as 0.5 x (1 + erf) and
// 0.5 x (1 + tanh u), whose 1 + ... cancels every digit below x = -8: Gelu(-10) would be -0, not -7.6e-23).
// Infinities give what the spec's formulas give: Gelu(+inf) = +inf, Gelu(-inf) = -inf * 0 = NaN.
void apply_activation_accurately(const FusedActivation& activation, double* data, int64_t count) {
  constexpr double kInverseSqrt2 = 0.70710678118654752440;
  constexpr double kSqrt2OverPi = 0.79788456080286535588;
  switch (activation.kind) {
    case ActivationKind::kGelu:
      for (int64_t i = 0; i < count; ++i) data[i] = 0.5 * data[i] * std::erfc(-data[i] * kInverseSqrt2);
      return;
    case ActivationKind::kGeluTanh:
      for (int64_t i = 0; i < count; ++i) {
        const double x = data[i];
        const double u = kSqrt2OverPi * (x + 0.044715 * x * x * x);
        data[i] = x / (1.0 + std::exp(-2.0 * u));
      }
      return;
    default: apply_activation(activation, data, count); return;
  }
}

template <class C>
void apply_contrib_activation(const FusedActivation& activation, C* data, int64_t count) {
  if constexpr (std::is_same_v<C, double>) {
    apply_activation_accurately(activation, data, count);
  } else {
    apply_activation(activation, data, count);
  }
}

// Where an op's operands are: input slots are -1 when the op has none.
struct BiasActivationForm {
  int bias_input = -1;
  int skip_input = -1;
  bool bias_optional = false;  // FastGelu: the bias may be omitted
  bool three_d = false;        // BiasAdd: X is [N, S, C]
};

// Y = activation(X [+ bias] [+ skip]).
class BiasActivationKernel final : public Kernel {
 public:
  BiasActivationKernel(std::string description, DataTypeMask types, FusedActivation activation,
                       BiasActivationForm form)
      : description_(std::move(description)), types_(types), activation_(activation), bias_input_(form.bias_input),
        skip_input_(form.skip_input), bias_optional_(form.bias_optional), three_d_(form.three_d) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_input_type(inputs, 0, types_, description_));
    const Tensor& x = *inputs[0];
    if (three_d_ && x.rank() != 3) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X must be 3-D [N, S, C], got ",
                        shape_to_string(x.shape()));
    }
    if (const Tensor* bias = bias_of(inputs)) {
      const int64_t width = x.rank() == 0 ? 1 : x.shape().back();
      if (bias->dtype() != x.dtype() || bias->rank() != 1 || bias->shape()[0] != width) {
        return make_error(StatusCode::kInvalidArgument, description_, ": bias ", data_type_name(bias->dtype()), " ",
                          shape_to_string(bias->shape()), " must be 1-D of X's type and last dim (", width, ")");
      }
    } else if (bias_input_ >= 0 && !bias_optional_) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input ", bias_input_, " (bias)");
    }
    if (skip_input_ >= 0) {
      const Tensor* skip = optional_input(inputs, static_cast<size_t>(skip_input_));
      if (skip == nullptr || skip->dtype() != x.dtype() || skip->shape() != x.shape()) {
        return make_error(StatusCode::kInvalidArgument, description_, ": skip must be present with X's type and shape ",
                          shape_to_string(x.shape()));
      }
    }
    outputs.assign(1, OutputDesc{x.dtype(), x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const int64_t n = x.numel();
    if (n == 0) return Status::ok();
    const Tensor* bias = bias_of(inputs);
    const Tensor* skip = skip_input_ >= 0 ? inputs[static_cast<size_t>(skip_input_)] : nullptr;
    const int64_t width = bias != nullptr ? std::max<int64_t>(1, bias->numel()) : n;
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      const T* px = x.data<T>();
      const T* pb = bias != nullptr ? bias->data<T>() : nullptr;
      const T* ps = skip != nullptr ? skip->data<T>() : nullptr;
      T* py = outputs[0].data<T>();
      pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; p += kChunk) {
          apply_chunk(px, pb, ps, py, p, std::min(kChunk, end - p), width);
        }
      });
    });
    return Status::ok();
  }

 private:
  const Tensor* bias_of(KernelInputs inputs) const {
    return bias_input_ >= 0 ? optional_input(inputs, static_cast<size_t>(bias_input_)) : nullptr;
  }

  // Elements [p, p + count) of the output; `width` is the bias length (the row width it cycles over).
  template <class T>
  void apply_chunk(const T* x, const T* bias, const T* skip, T* y, int64_t p, int64_t count, int64_t width) const {
    using C = ComputeOf<T>;
    C local[std::is_same_v<T, C> ? 1 : kChunk];
    C* work = nullptr;
    if constexpr (std::is_same_v<T, C>) {
      work = y + p;
      std::copy_n(x + p, count, work);
    } else {
      work = local;
      for (int64_t i = 0; i < count; ++i) work[i] = load_value(x[p + i]);
    }
    if (bias != nullptr) {
      int64_t column = p % width;
      for (int64_t i = 0; i < count;) {
        const int64_t run = std::min(count - i, width - column);
        for (int64_t j = 0; j < run; ++j) work[i + j] += load_value(bias[column + j]);
        i += run;
        column = 0;
      }
    }
    if (skip != nullptr) {
      for (int64_t i = 0; i < count; ++i) work[i] += load_value(skip[p + i]);
    }
    apply_contrib_activation(activation_, work, count);
    if constexpr (!std::is_same_v<T, C>) {
      for (int64_t i = 0; i < count; ++i) y[p + i] = T(static_cast<float>(work[i]));
    }
  }

  std::string description_;
  DataTypeMask types_;
  FusedActivation activation_;
  int bias_input_;
  int skip_input_;
  bool bias_optional_;
  bool three_d_;
};

Expected<std::unique_ptr<Kernel>> make_bias_activation(const KernelInfo& info, ActivationKind kind, float alpha,
                                                       BiasActivationForm form) {
  FusedActivation activation;
  activation.kind = kind;
  activation.alpha = alpha;
  return std::unique_ptr<Kernel>(std::make_unique<BiasActivationKernel>(
      info.node.describe(), registered_types(info, type_mask(FloatTypes{})), activation, form));
}

Expected<std::unique_ptr<Kernel>> create_ms_gelu(const KernelInfo& info) {
  return make_bias_activation(info, ActivationKind::kGelu, 0.0f, {});
}

Expected<std::unique_ptr<Kernel>> create_fast_gelu(const KernelInfo& info) {
  return make_bias_activation(info, ActivationKind::kGeluTanh, 0.0f, {.bias_input = 1, .bias_optional = true});
}

Expected<std::unique_ptr<Kernel>> create_bias_gelu(const KernelInfo& info) {
  return make_bias_activation(info, ActivationKind::kGelu, 0.0f, {.bias_input = 1});
}

Expected<std::unique_ptr<Kernel>> create_quick_gelu(const KernelInfo& info) {
  TRY_ASSIGN(const float alpha, info.node.attr_float("alpha", 1.702f));
  if (!std::isfinite(alpha)) {
    return make_error(StatusCode::kInvalidArgument, info.node.describe(), ": attribute alpha must be finite, got ",
                      alpha);
  }
  return make_bias_activation(info, ActivationKind::kSwish, alpha, {});
}

Expected<std::unique_ptr<Kernel>> create_bias_add(const KernelInfo& info) {
  return make_bias_activation(info, ActivationKind::kNone, 0.0f, {.bias_input = 1, .skip_input = 2, .three_d = true});
}

// BiasSoftmax: Y = softmax(data + bias) over the trailing dims from `axis` (flattened, as Softmax before opset 13).
class BiasSoftmaxKernel final : public Kernel {
 public:
  BiasSoftmaxKernel(std::string description, int64_t axis) : description_(std::move(description)), axis_(axis) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_input_type(inputs, 0, type_mask(FloatTypes{}), description_));
    TRY(check_input_type(inputs, 1, type_mask(FloatTypes{}), description_));
    TRY(resolve(inputs).status());
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Layout layout, resolve(inputs));
    const Tensor& data = *inputs[0];
    if (data.numel() == 0) return Status::ok();
    const int64_t row = layout.row;
    const int64_t rows = data.numel() / row;
    visit_dtype<FloatTypes>(data.dtype(), [&]<class T>() {
      using C = ComputeOf<T>;
      const T* x = data.data<T>();
      const T* b = inputs[1]->data<T>();
      T* y = outputs[0].data<T>();
      pool.parallel_for(rows, std::max<int64_t>(1, kGrain / row), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* xr = x + r * row;
          T* yr = y + r * row;
          C peak = -std::numeric_limits<C>::infinity();
          for (int64_t i = 0; i < row; ++i) {
            const C v = load_value(xr[i]) + load_value(b[layout.bias_offset(r * row + i)]);
            if (v > peak) peak = v;
          }
          C sum = 0;
          for (int64_t i = 0; i < row; ++i) {
            const C v = load_value(xr[i]) + load_value(b[layout.bias_offset(r * row + i)]);
            sum += std::exp(v - peak);
          }
          for (int64_t i = 0; i < row; ++i) {
            const C v = load_value(xr[i]) + load_value(b[layout.bias_offset(r * row + i)]);
            const C e = std::exp(v - peak) / sum;
            if constexpr (std::is_same_v<T, C>) {
              yr[i] = e;
            } else {
              yr[i] = T(static_cast<float>(e));
            }
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  // Data split into rows of the dims from axis on; the bias element of each data element through strides that are
  // 0 where the bias broadcasts.
  struct Layout {
    int64_t row = 1;
    Shape dims;
    DimList bias_strides;
    int64_t bias_offset(int64_t flat) const {
      int64_t offset = 0;
      for (size_t d = dims.size(); d-- > 0;) {
        offset += (flat % dims[d]) * bias_strides[d];
        flat /= dims[d];
      }
      return offset;
    }
  };

  Expected<Layout> resolve(KernelInputs inputs) const {
    const Tensor& data = *inputs[0];
    const Tensor& bias = *inputs[1];
    if (bias.dtype() != data.dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": bias type ", data_type_name(bias.dtype()),
                        " differs from data type ", data_type_name(data.dtype()));
    }
    const auto rank = static_cast<int64_t>(data.rank());
    if (rank == 0 || axis_ < -rank || axis_ >= rank) {
      return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis_, " is out of range for data ",
                        shape_to_string(data.shape()));
    }
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    Layout layout;
    layout.dims = data.shape();
    for (int64_t d = axis; d < rank; ++d) layout.row *= data.shape()[static_cast<size_t>(d)];
    const Shape& b = bias.shape();
    bool fits = b.size() <= data.rank();
    layout.bias_strides.assign(data.rank(), 0);
    int64_t stride = 1;
    for (size_t i = 0; fits && i < b.size(); ++i) {
      const size_t bi = b.size() - 1 - i;
      const size_t di = data.rank() - 1 - i;
      fits = b[bi] == 1 || b[bi] == layout.dims[di];
      if (b[bi] != 1) layout.bias_strides[di] = stride;
      stride *= b[bi];
    }
    if (!fits) {
      return make_error(StatusCode::kInvalidArgument, description_, ": bias ", shape_to_string(b),
                        " does not broadcast to data ", shape_to_string(data.shape()));
    }
    if (layout.row == 0) layout.row = 1;
    return layout;
  }

  std::string description_;
  int64_t axis_;
};

Expected<std::unique_ptr<Kernel>> create_bias_softmax(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", 1));
  TRY_ASSIGN(const int64_t inner, info.node.attr_int("is_inner_broadcast", -1));
  if (inner != 0 && inner != 1) {
    return make_error(StatusCode::kInvalidArgument, info.node.describe(),
                      ": attribute is_inner_broadcast (required) must be 0 or 1, got ", inner);
  }
  return std::unique_ptr<Kernel>(std::make_unique<BiasSoftmaxKernel>(info.node.describe(), axis));
}

constexpr DataTypeMask kFloats = type_mask(FloatTypes{});

const KernelDef kContribActivationKernels[] = {
    {"Gelu", graph::kMsDomain, 1, kLatestOpset, kFloats, 0, create_ms_gelu},
    {"FastGelu", graph::kMsDomain, 1, kLatestOpset, kFloats, 0, create_fast_gelu},
    {"BiasGelu", graph::kMsDomain, 1, kLatestOpset, kFloats, 0, create_bias_gelu},
    {"QuickGelu", graph::kMsDomain, 1, kLatestOpset, kFloats, 0, create_quick_gelu},
    {"BiasAdd", graph::kMsDomain, 1, kLatestOpset, kFloats, 0, create_bias_add},
    {"BiasSoftmax", graph::kMsDomain, 1, kLatestOpset, kFloats, 0, create_bias_softmax},
};

}  // namespace

std::span<const KernelDef> contrib_activation_kernels() { return kContribActivationKernels; }

}  // namespace nxrt::cpu
