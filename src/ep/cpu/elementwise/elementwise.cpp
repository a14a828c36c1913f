// Elementwise kernels: Add, Sub, Mul, Div with numpy broadcasting (opset < 7: the `broadcast` attribute rule);
// Relu, Sigmoid, Tanh.
// Integer arithmetic wraps (computed in unsigned) so overflow is defined; integer Div truncates toward zero,
// rejects a zero divisor with INVALID_ARGUMENT, and INT_MIN / -1 wraps to INT_MIN.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>

#include "ep/cpu/elementwise/broadcast.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu {

namespace {

constexpr int64_t kGrain = kElementwiseGrain;
// Minimum bytes of output per parallel chunk of the f32/f64 arithmetic fast path (so smaller outputs run on one
// thread). Measured on the 2-core dev machine under load: one Add of 128K floats took 15 us on one thread and
// 21 us on two (the wake-up of a sleeping worker costs 10-30 us), 256K floats 33 us vs 21 us.
constexpr int64_t kArithmeticChunkBytes = 512 * 1024;
// Sigmoid and Tanh (vectorised, ~1 ns per element on one thread): outputs up to this many elements run serially.
constexpr int64_t kActivationGrain = 65536;

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

// f32/f64 runs go to the per-ISA array loops of vector_math.h; other types use the generic broadcast loop.
template <BinaryOp Op, class T>
void binary_run(const Tensor& ta, const Tensor& tb, const Shape& b_shape, Tensor& tout, ThreadPool& pool) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    const auto array_fn = [](int shape) {
      if constexpr (std::is_same_v<T, float>) {
        return binary_array_f32(static_cast<int>(Op), shape);
      } else {
        return binary_array_f64(static_cast<int>(Op), shape);
      }
    };
    const BinaryArrayFn<T> both = array_fn(0);
    const BinaryArrayFn<T> a_scalar = array_fn(1);
    const BinaryArrayFn<T> b_scalar = array_fn(2);
    const T* a = ta.data<T>();
    const T* b = tb.data<T>();
    T* out = tout.data<T>();
    const BroadcastPlan<2> plan = make_broadcast_plan<2>({ta.shape(), b_shape}, tout.shape());
    const auto job = [&](int64_t o, const std::array<int64_t, 2>& in, int64_t n) {
      if (plan.step[0] && plan.step[1]) {
        both(a + in[0], b + in[1], out + o, n);
      } else if (plan.step[0]) {
        b_scalar(a + in[0], b + in[1], out + o, n);
      } else if (plan.step[1]) {
        a_scalar(a + in[0], b + in[1], out + o, n);
      } else {
        const T r = apply<Op>(a[in[0]], b[in[1]]);
        for (int64_t i = 0; i < n; ++i) out[o + i] = r;
      }
    };
    for_each_broadcast_run(plan, pool, job, kArithmeticChunkBytes / static_cast<int64_t>(sizeof(T)));
    return;
  }
  auto op = [](T x, T y) { return apply<Op>(x, y); };
  broadcast_binary(ta.data<T>(), ta.shape(), tb.data<T>(), b_shape, tout.data<T>(), tout.shape(), pool, op);
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
  BinaryKernel(std::string description, std::optional<LegacyBroadcast> legacy)
      : description_(std::move(description)), legacy_(legacy) {}

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
    TRY_ASSIGN(BinaryShapes shapes, binary_broadcast_shapes(legacy_ ? &*legacy_ : nullptr, a.shape(), b.shape(),
                                                            description_));
    outputs.assign(1, OutputDesc{a.dtype(), std::move(shapes.out)});
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
      if (legacy_) {
        auto shapes = binary_broadcast_shapes(&*legacy_, inputs[0]->shape(), inputs[1]->shape(), description_);
        if (!shapes) {
          status = shapes.status();
          return;
        }
        binary_run<Op, T>(*inputs[0], *inputs[1], shapes->b, outputs[0], pool);
      } else {
        binary_run<Op, T>(*inputs[0], *inputs[1], inputs[1]->shape(), outputs[0], pool);
      }
    });
    return status;
  }

  // Every output element reads the same index of an input that has the output's element count (numpy
  // broadcasting can only add leading 1s to it); the legacy rule broadcasts B along an axis, so only A there.
  SlotMask in_place_inputs() const override { return legacy_ ? 0b01 : 0b11; }

 private:
  std::string description_;
  std::optional<LegacyBroadcast> legacy_;
};

enum class UnaryOp { kRelu, kSigmoid, kTanh };

template <UnaryOp Op, class C>
inline C apply_unary(C x) {
  if constexpr (Op == UnaryOp::kRelu) {
    return x < C{0} ? C{0} : x;  // NaN stays NaN (the spec's max(0, x) on IEEE values, as the reference)
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
      const int64_t grain = std::is_same_v<T, float> && Op != UnaryOp::kRelu ? kActivationGrain : kGrain;
      pool.parallel_for(outputs[0].numel(), grain, [&](int64_t begin, int64_t end) {
        if constexpr (std::is_same_v<T, float> && Op != UnaryOp::kRelu) {
          if constexpr (Op == UnaryOp::kSigmoid) {
            vector_sigmoid(x + begin, y + begin, end - begin);
          } else {
            vector_tanh(x + begin, y + begin, end - begin);
          }
          return;
        }
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

  SlotMask in_place_inputs() const override { return 0b1; }

 private:
  std::string description_;
  bool allow_int_;
};

template <BinaryOp Op>
Expected<std::unique_ptr<Kernel>> create_binary(const KernelInfo& info) {
  std::optional<LegacyBroadcast> legacy;
  if (info.opset() < 7) {
    TRY_ASSIGN(legacy, read_legacy_broadcast(info.node));
  }
  return std::unique_ptr<Kernel>(std::make_unique<BinaryKernel<Op>>(info.node.describe(), legacy));
}

template <UnaryOp Op>
Expected<std::unique_ptr<Kernel>> create_unary(const KernelInfo& info) {
  const bool allow_int = Op == UnaryOp::kRelu && info.opset() >= 14;
  return std::unique_ptr<Kernel>(std::make_unique<UnaryKernel<Op>>(info.node.describe(), allow_int));
}

constexpr DataTypeMask kNumeric = type_mask(NumericTypes{});
constexpr DataTypeMask kLegacy1 = type_mask(TypeList<float, double, Float16>{});
constexpr DataTypeMask kLegacy6 = type_mask(TypeList<float, double, Float16, int32_t, int64_t, uint32_t, uint64_t>{});
constexpr DataTypeMask kFloat = type_mask(FloatTypes{});
constexpr DataTypeMask kFloatAndSigned = type_mask(SignedNumericTypes{});

const KernelDef kElementwiseKernels[] = {
    {"Add", graph::kOnnxDomain, 1, 5, kLegacy1, 0, create_binary<BinaryOp::kAdd>},
    {"Add", graph::kOnnxDomain, 6, 6, kLegacy6, 0, create_binary<BinaryOp::kAdd>},
    {"Sub", graph::kOnnxDomain, 1, 5, kLegacy1, 0, create_binary<BinaryOp::kSub>},
    {"Sub", graph::kOnnxDomain, 6, 6, kLegacy6, 0, create_binary<BinaryOp::kSub>},
    {"Mul", graph::kOnnxDomain, 1, 5, kLegacy1, 0, create_binary<BinaryOp::kMul>},
    {"Mul", graph::kOnnxDomain, 6, 6, kLegacy6, 0, create_binary<BinaryOp::kMul>},
    {"Div", graph::kOnnxDomain, 1, 5, kLegacy1, 0, create_binary<BinaryOp::kDiv>},
    {"Div", graph::kOnnxDomain, 6, 6, kLegacy6, 0, create_binary<BinaryOp::kDiv>},
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
