// Elementwise kernels: Add, Sub, Mul, Div with numpy broadcasting; Relu, Sigmoid, Tanh.
// Integer arithmetic wraps (computed in unsigned) so overflow is defined; integer Div truncates toward zero,
// rejects a zero divisor with INVALID_ARGUMENT, and INT_MIN / -1 wraps to INT_MIN.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

constexpr int64_t kGrain = 16384;

enum class BinaryOp { kAdd, kSub, kMul, kDiv };

// Unsigned type wide enough that arithmetic on it never promotes to a signed int.
template <class T>
using WrapType = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;

template <class T>
struct Compute {
  using type = T;
};
template <>
struct Compute<Float16> {
  using type = float;
};
template <>
struct Compute<BFloat16> {
  using type = float;
};

template <BinaryOp Op, class T>
inline T apply(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using W = WrapType<T>;
    const W x = static_cast<W>(a);
    const W y = static_cast<W>(b);
    if constexpr (Op == BinaryOp::kAdd) return static_cast<T>(x + y);
    if constexpr (Op == BinaryOp::kSub) return static_cast<T>(x - y);
    if constexpr (Op == BinaryOp::kMul) return static_cast<T>(x * y);
    if constexpr (Op == BinaryOp::kDiv) {
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return static_cast<T>(W{0} - x);
      }
      return b == 0 ? T{0} : static_cast<T>(a / b);
    }
  } else {
    using C = typename Compute<T>::type;
    const C x = static_cast<C>(a);
    const C y = static_cast<C>(b);
    C r{};
    if constexpr (Op == BinaryOp::kAdd) r = x + y;
    if constexpr (Op == BinaryOp::kSub) r = x - y;
    if constexpr (Op == BinaryOp::kMul) r = x * y;
    if constexpr (Op == BinaryOp::kDiv) r = x / y;
    if constexpr (std::is_same_v<C, T>) {
      return r;
    } else {
      return T(static_cast<float>(r));
    }
  }
}

// Broadcast iteration plan: dims coalesced where both inputs broadcast the same way; strides are 0 on
// broadcast dims. The innermost dim is iterated by the hot loop.
struct BroadcastPlan {
  Shape dims;
  std::vector<int64_t> a_strides;
  std::vector<int64_t> b_strides;
};

BroadcastPlan make_plan(const Shape& a, const Shape& b, const Shape& out) {
  const size_t rank = out.size();
  BroadcastPlan plan;
  auto dim_of = [rank](const Shape& s, size_t i) { return i < rank - s.size() ? int64_t{1} : s[i - (rank - s.size())]; };
  for (size_t i = 0; i < rank; ++i) {
    if (out[i] == 1) continue;
    const bool a_used = dim_of(a, i) != 1;
    const bool b_used = dim_of(b, i) != 1;
    if (!plan.dims.empty()) {
      const bool prev_a = plan.a_strides.back() != 0;
      const bool prev_b = plan.b_strides.back() != 0;
      if (prev_a == a_used && prev_b == b_used) {
        plan.dims.back() *= out[i];
        continue;
      }
    }
    plan.dims.push_back(out[i]);
    plan.a_strides.push_back(a_used ? 1 : 0);
    plan.b_strides.push_back(b_used ? 1 : 0);
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    plan.a_strides.push_back(1);
    plan.b_strides.push_back(1);
  }
  int64_t a_stride = 1;
  int64_t b_stride = 1;
  for (size_t i = plan.dims.size(); i-- > 0;) {
    const bool a_used = plan.a_strides[i] != 0;
    const bool b_used = plan.b_strides[i] != 0;
    plan.a_strides[i] = a_used ? a_stride : 0;
    plan.b_strides[i] = b_used ? b_stride : 0;
    if (a_used) a_stride *= plan.dims[i];
    if (b_used) b_stride *= plan.dims[i];
  }
  return plan;
}

template <BinaryOp Op, class T>
void binary_flat(const T* a, const T* b, T* out, int64_t n, int a_step, int b_step) {
  if (a_step && b_step) {
    for (int64_t i = 0; i < n; ++i) out[i] = apply<Op>(a[i], b[i]);
  } else if (a_step) {
    const T y = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = apply<Op>(a[i], y);
  } else if (b_step) {
    const T x = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = apply<Op>(x, b[i]);
  } else {
    const T r = apply<Op>(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = r;
  }
}

template <BinaryOp Op, class T>
void binary_run(const Tensor& ta, const Tensor& tb, Tensor& tout, ThreadPool& pool) {
  const T* a = ta.data<T>();
  const T* b = tb.data<T>();
  T* out = tout.data<T>();
  const int64_t n = tout.numel();
  if (n == 0) return;
  const bool same = ta.shape() == tb.shape();
  if (same || ta.numel() == 1 || tb.numel() == 1) {
    const int a_step = ta.numel() == 1 && !same ? 0 : 1;
    const int b_step = tb.numel() == 1 && !same ? 0 : 1;
    pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
      binary_flat<Op>(a + (a_step ? begin : 0), b + (b_step ? begin : 0), out + begin, end - begin, a_step, b_step);
    });
    return;
  }
  const BroadcastPlan plan = make_plan(ta.shape(), tb.shape(), tout.shape());
  const size_t rank = plan.dims.size();
  const int64_t inner = plan.dims.back();
  const int a_step = plan.a_strides.back() != 0 ? 1 : 0;
  const int b_step = plan.b_strides.back() != 0 ? 1 : 0;
  const int64_t rows = n / inner;
  const int64_t grain = std::max<int64_t>(1, kGrain / inner);
  pool.parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t a_offset = 0;
      int64_t b_offset = 0;
      int64_t rest = row;
      for (size_t d = rank - 1; d-- > 0;) {
        const int64_t index = rest % plan.dims[d];
        rest /= plan.dims[d];
        a_offset += index * plan.a_strides[d];
        b_offset += index * plan.b_strides[d];
      }
      binary_flat<Op>(a + a_offset, b + b_offset, out + row * inner, inner, a_step, b_step);
    }
  });
}

template <class T>
bool has_zero(const T* values, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (values[i] == T{0}) return true;
  }
  return false;
}

template <BinaryOp Op>
class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() != 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": expects 2 inputs");
    }
    const Tensor& a = *inputs[0];
    const Tensor& b = *inputs[1];
    if (a.dtype() != b.dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 type ", data_type_name(b.dtype()),
                        " differs from input 0 type ", data_type_name(a.dtype()));
    }
    if (!type_list_contains(NumericTypes{}, a.dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input type ",
                        data_type_name(a.dtype()));
    }
    auto shape = broadcast_shapes(a.shape(), b.shape());
    if (!shape) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 shape ", shape_to_string(b.shape()),
                        " cannot broadcast with ", shape_to_string(a.shape()));
    }
    outputs.assign(1, OutputDesc{a.dtype(), std::move(*shape)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    Status status;
    visit_dtype<NumericTypes>(inputs[0]->dtype(), [&]<class T>() {
      if constexpr (Op == BinaryOp::kDiv && std::is_integral_v<T>) {
        if (outputs[0].numel() > 0 && has_zero(inputs[1]->data<T>(), inputs[1]->numel())) {
          status = make_error(StatusCode::kInvalidArgument, description_, ": integer division by zero (input 1)");
          return;
        }
      }
      binary_run<Op, T>(*inputs[0], *inputs[1], outputs[0], pool);
    });
    return status;
  }

 private:
  std::string description_;
};

enum class UnaryOp { kRelu, kSigmoid, kTanh };

template <UnaryOp Op, class C>
inline C apply_unary(C x) {
  if constexpr (Op == UnaryOp::kRelu) {
    return x > C{0} ? x : C{0};
  } else if constexpr (Op == UnaryOp::kSigmoid) {
    if (x >= C{0}) return C{1} / (C{1} + std::exp(-x));
    const C e = std::exp(x);
    return e / (C{1} + e);
  } else {
    return std::tanh(x);
  }
}

template <UnaryOp Op>
class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(std::string description, bool allow_int) : description_(std::move(description)), allow_int_(allow_int) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    }
    const DataType dtype = inputs[0]->dtype();
    const bool ok = type_list_contains(FloatTypes{}, dtype) || (allow_int_ && type_list_contains(SignedIntTypes{}, dtype));
    if (!ok) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input 0 type ",
                        data_type_name(dtype));
    }
    outputs.assign(1, OutputDesc{dtype, inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    visit_dtype<SignedNumericTypes>(inputs[0]->dtype(), [&]<class T>() {
      const T* x = inputs[0]->data<T>();
      T* y = outputs[0].data<T>();
      pool.parallel_for(outputs[0].numel(), kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
            y[i] = T(apply_unary<Op, float>(static_cast<float>(x[i])));
          } else {
            y[i] = apply_unary<Op, T>(x[i]);
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  bool allow_int_;
};

template <BinaryOp Op>
Expected<std::unique_ptr<Kernel>> create_binary(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<BinaryKernel<Op>>(info.node.describe()));
}

template <UnaryOp Op>
Expected<std::unique_ptr<Kernel>> create_unary(const KernelInfo& info) {
  const bool allow_int = Op == UnaryOp::kRelu && info.opset() >= 14;
  return std::unique_ptr<Kernel>(std::make_unique<UnaryKernel<Op>>(info.node.describe(), allow_int));
}

constexpr DataTypeMask kNumeric = type_mask(NumericTypes{});
constexpr DataTypeMask kFloat = type_mask(FloatTypes{});
constexpr DataTypeMask kFloatAndSigned = type_mask(SignedNumericTypes{});

const KernelDef kElementwiseKernels[] = {
    {"Add", graph::kOnnxDomain, 7, kLatestOpset, kNumeric, 0, create_binary<BinaryOp::kAdd>},
    {"Sub", graph::kOnnxDomain, 7, kLatestOpset, kNumeric, 0, create_binary<BinaryOp::kSub>},
    {"Mul", graph::kOnnxDomain, 7, kLatestOpset, kNumeric, 0, create_binary<BinaryOp::kMul>},
    {"Div", graph::kOnnxDomain, 7, kLatestOpset, kNumeric, 0, create_binary<BinaryOp::kDiv>},
    {"Relu", graph::kOnnxDomain, 6, 13, kFloat, 0, create_unary<UnaryOp::kRelu>},
    {"Relu", graph::kOnnxDomain, 14, kLatestOpset, kFloatAndSigned, 0, create_unary<UnaryOp::kRelu>},
    {"Sigmoid", graph::kOnnxDomain, 6, kLatestOpset, kFloat, 0, create_unary<UnaryOp::kSigmoid>},
    {"Tanh", graph::kOnnxDomain, 6, kLatestOpset, kFloat, 0, create_unary<UnaryOp::kTanh>},
};

}  // namespace

std::span<const KernelDef> elementwise_kernels() { return kElementwiseKernels; }

}  // namespace nxrt::cpu
