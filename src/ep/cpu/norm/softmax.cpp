// Softmax, LogSoftmax, Hardmax.
// Before opset 13 the input is flattened to 2-D [prod(dims[:axis]), prod(dims[axis:])] and each row is
// normalised; from 13 the op runs along the single `axis`. Both are `outer x n x inner` with inner == 1 for the
// flattened form. Softmax subtracts the row max before exp; LogSoftmax is (x - max) - log(sum), which keeps
// precision for large inputs; f16/bf16 compute in float. Hardmax marks the first maximum (a NaN counts as the
// maximum, as numpy's argmax does).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu {

namespace {

constexpr int64_t kGrain = 16384;
constexpr int64_t kBlock = 256;

enum class Mode { kSoftmax, kLogSoftmax, kHardmax };

template <class T>
using AccOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
AccOf<T> load(T x) {
  if constexpr (std::is_same_v<T, double>) {
    return x;
  } else {
    return static_cast<float>(x);
  }
}

template <class T, class Acc>
T store(Acc v) {
  if constexpr (std::is_same_v<T, Acc>) {
    return v;
  } else {
    return T(static_cast<float>(v));
  }
}

template <class Acc>
bool beats(Acc v, Acc best) {
  return v > best || (v != v && best == best);
}

// Softmax on float16/bfloat16 as the op is defined on its element type: x - max, exp and the quotient each
// round to T; the sum rounds after every addition for bfloat16 and once for float16 (numpy, which produces the
// ONNX reference outputs, accumulates float16 sums in float). `n` elements `stride` apart.
template <class T>
void softmax_half_strided(const T* x, T* y, int64_t n, int64_t stride) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = std::max(m, static_cast<float>(x[i * stride]));
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T shifted(static_cast<float>(x[i * stride]) - m);
    const T e(std::exp(static_cast<float>(shifted)));
    y[i * stride] = e;
    if constexpr (std::is_same_v<T, BFloat16>) {
      sum = static_cast<float>(T(sum + static_cast<float>(e)));
    } else {
      sum += static_cast<float>(e);
    }
  }
  const float total = static_cast<float>(T(sum));
  for (int64_t i = 0; i < n; ++i) y[i * stride] = T(static_cast<float>(y[i * stride]) / total);
}

// Max of a float row in 16 independent lanes (vectorises); same result as a sequential std::max except that a
// NaN may or may not be picked, which the callers' exp(x - max) turns into NaN sums either way.
float row_max_f32(const float* x, int64_t n) {
  constexpr int kLanes = 16;
  float lanes[kLanes];
  for (int l = 0; l < kLanes; ++l) lanes[l] = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] = lanes[l] < x[i + l] ? x[i + l] : lanes[l];
  }
  float m = -std::numeric_limits<float>::infinity();
  for (; i < n; ++i) m = std::max(m, x[i]);
  for (int l = 0; l < kLanes; ++l) m = std::max(m, lanes[l]);
  return m;
}

template <Mode M, class T>
void normalise_row(const T* x, T* y, int64_t n) {
  using Acc = AccOf<T>;
  if constexpr (M == Mode::kSoftmax && std::is_same_v<T, float>) {
    vector_softmax_row(x, y, n);
  } else if constexpr (M == Mode::kLogSoftmax && std::is_same_v<T, float>) {
    const float m = row_max_f32(x, n);
    vector_exp_shifted_sum(x, y, n, m);
    // The sum is 1 + (the rest) and its log is small when the rest is: added in double, log(1 + 3.35e-4) keeps
    // its digits (a float sum rounds the rest to 1.2e-7 absolute, 3.6e-4 of that log).
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(y[i]);
    const float log_sum = static_cast<float>(std::log(sum));
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
  } else if constexpr (M == Mode::kSoftmax && !std::is_same_v<T, Acc>) {
    softmax_half_strided(x, y, n, 1);
  } else if constexpr (M == Mode::kHardmax) {
    Acc best = load(x[0]);
    int64_t at = 0;
    for (int64_t i = 1; i < n; ++i) {
      const Acc v = load(x[i]);
      if (beats(v, best)) {
        best = v;
        at = i;
      }
    }
    for (int64_t i = 0; i < n; ++i) y[i] = store<T>(Acc{0});
    y[at] = store<T>(Acc{1});
  } else {
    Acc m = -std::numeric_limits<Acc>::infinity();
    for (int64_t i = 0; i < n; ++i) m = std::max(m, load(x[i]));
    Acc sum{0};
    if constexpr (M == Mode::kSoftmax && std::is_same_v<T, Acc>) {
      for (int64_t i = 0; i < n; ++i) {
        y[i] = std::exp(x[i] - m);
        sum += y[i];
      }
      const Acc inv = Acc{1} / sum;
      for (int64_t i = 0; i < n; ++i) y[i] *= inv;
    } else if constexpr (M == Mode::kSoftmax) {
      for (int64_t i = 0; i < n; ++i) sum += std::exp(load(x[i]) - m);
      const Acc inv = Acc{1} / sum;
      for (int64_t i = 0; i < n; ++i) y[i] = store<T>(std::exp(load(x[i]) - m) * inv);
    } else {
      double wide_sum = 0;  // log(1 + small) keeps its digits
      for (int64_t i = 0; i < n; ++i) wide_sum += static_cast<double>(std::exp(load(x[i]) - m));
      const Acc log_sum = static_cast<Acc>(std::log(wide_sum));
      for (int64_t i = 0; i < n; ++i) y[i] = store<T>((load(x[i]) - m) - log_sum);
    }
  }
}

// `len` adjacent columns (stride 1) of n rows spaced `inner` apart.
template <Mode M, class T>
void normalise_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t len) {
  using Acc = AccOf<T>;
  // LogSoftmax sums in double: log(1 + small) keeps its digits (see normalise_row).
  using Sum = std::conditional_t<M == Mode::kLogSoftmax, double, Acc>;
  Acc best[kBlock];
  Sum sum[kBlock];
  if constexpr (M == Mode::kHardmax) {
    int64_t at[kBlock];
    for (int64_t j = 0; j < len; ++j) {
      best[j] = load(x[j]);
      at[j] = 0;
    }
    for (int64_t r = 1; r < n; ++r) {
      const T* row = x + r * inner;
      for (int64_t j = 0; j < len; ++j) {
        const Acc v = load(row[j]);
        if (beats(v, best[j])) {
          best[j] = v;
          at[j] = r;
        }
      }
    }
    for (int64_t r = 0; r < n; ++r) {
      T* out = y + r * inner;
      for (int64_t j = 0; j < len; ++j) out[j] = store<T>(at[j] == r ? Acc{1} : Acc{0});
    }
  } else if constexpr (M == Mode::kSoftmax && !std::is_same_v<T, Acc>) {
    for (int64_t j = 0; j < len; ++j) softmax_half_strided(x + j, y + j, n, inner);
  } else {
    for (int64_t j = 0; j < len; ++j) {
      best[j] = -std::numeric_limits<Acc>::infinity();
      sum[j] = Sum{0};
    }
    for (int64_t r = 0; r < n; ++r) {
      const T* row = x + r * inner;
      for (int64_t j = 0; j < len; ++j) best[j] = std::max(best[j], load(row[j]));
    }
    for (int64_t r = 0; r < n; ++r) {
      const T* row = x + r * inner;
      for (int64_t j = 0; j < len; ++j) sum[j] += std::exp(load(row[j]) - best[j]);
    }
    for (int64_t j = 0; j < len; ++j) {
      if constexpr (M == Mode::kSoftmax) {
        sum[j] = Acc{1} / sum[j];
      } else {
        sum[j] = std::log(sum[j]);
      }
    }
    for (int64_t r = 0; r < n; ++r) {
      const T* row = x + r * inner;
      T* out = y + r * inner;
      for (int64_t j = 0; j < len; ++j) {
        if constexpr (M == Mode::kSoftmax) {
          out[j] = store<T>(std::exp(load(row[j]) - best[j]) * sum[j]);
        } else {
          out[j] = store<T>((load(row[j]) - best[j]) - sum[j]);
        }
      }
    }
  }
}

template <Mode M, class T>
void softmax_typed(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, ThreadPool& pool) {
  if (inner == 1) {
    pool.parallel_for(outer, std::max<int64_t>(1, kGrain / n), [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) normalise_row<M>(x + o * n, y + o * n, n);
    });
    return;
  }
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const int64_t per_item = n * std::min(inner, kBlock);
  pool.parallel_for(outer * blocks, std::max<int64_t>(1, kGrain / per_item), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks;
      const int64_t col = (item % blocks) * kBlock;
      const int64_t offset = o * n * inner + col;
      normalise_columns<M>(x + offset, y + offset, n, inner, std::min(kBlock, inner - col));
    }
  });
}

template <Mode M>
class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(std::string description, DataTypeMask types, int64_t axis, bool flatten)
      : description_(std::move(description)), types_(types), axis_(axis), flatten_(flatten) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    }
    const Tensor& x = *inputs[0];
    if (((types_ >> static_cast<int>(x.dtype())) & 1u) == 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input 0 type ",
                        data_type_name(x.dtype()));
    }
    TRY_ASSIGN(const int64_t axis, resolved_axis(x.rank()));
    (void)axis;
    outputs.assign(1, OutputDesc{x.dtype(), x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) return Status::ok();
    TRY_ASSIGN(const int64_t axis, resolved_axis(x.rank()));
    const Shape& dims = x.shape();
    const auto split = static_cast<size_t>(axis);
    const int64_t outer = shape_numel(std::span<const int64_t>(dims.data(), split));
    int64_t n = 1;
    int64_t inner = 1;
    if (flatten_) {
      n = x.numel() / outer;
    } else {
      n = dims[split];
      inner = x.numel() / (outer * n);
    }
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      softmax_typed<M>(x.data<T>(), outputs[0].data<T>(), outer, n, inner, pool);
    });
    return Status::ok();
  }

 private:
  Expected<int64_t> resolved_axis(size_t rank_in) const {
    const int64_t rank = static_cast<int64_t>(rank_in);
    // The flattened form allows axis == rank (a single column of everything).
    const int64_t upper = flatten_ ? rank : rank - 1;
    if (axis_ < -rank || axis_ > upper) {
      return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis_,
                        " is out of range for input 0 of rank ", rank);
    }
    return axis_ < 0 ? axis_ + rank : axis_;
  }

  std::string description_;
  DataTypeMask types_;
  int64_t axis_;
  bool flatten_;
};

template <Mode M, DataTypeMask Types>
Expected<std::unique_ptr<Kernel>> create_softmax(const KernelInfo& info) {
  const bool flatten = info.opset() < 13;
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", flatten ? 1 : -1));
  return std::unique_ptr<Kernel>(std::make_unique<SoftmaxKernel<M>>(info.node.describe(), Types, axis, flatten));
}

constexpr DataTypeMask kOld = type_mask(TypeList<float, double, Float16>{});
constexpr DataTypeMask kNew = type_mask(FloatTypes{});

const KernelDef kSoftmaxKernels[] = {
    {"Softmax", graph::kOnnxDomain, 1, 12, kOld, 0, create_softmax<Mode::kSoftmax, kOld>},
    {"Softmax", graph::kOnnxDomain, 13, kLatestOpset, kNew, 0, create_softmax<Mode::kSoftmax, kNew>},
    {"LogSoftmax", graph::kOnnxDomain, 1, 12, kOld, 0, create_softmax<Mode::kLogSoftmax, kOld>},
    {"LogSoftmax", graph::kOnnxDomain, 13, kLatestOpset, kNew, 0, create_softmax<Mode::kLogSoftmax, kNew>},
    {"Hardmax", graph::kOnnxDomain, 1, 12, kOld, 0, create_softmax<Mode::kHardmax, kOld>},
    {"Hardmax", graph::kOnnxDomain, 13, kLatestOpset, kNew, 0, create_softmax<Mode::kHardmax, kNew>},
};

}  // namespace

std::span<const KernelDef> softmax_kernels() { return kSoftmaxKernels; }

void softmax_row_f32(const float* x, float* y, int64_t n) { normalise_row<Mode::kSoftmax>(x, y, n); }

}  // namespace nxrt::cpu
