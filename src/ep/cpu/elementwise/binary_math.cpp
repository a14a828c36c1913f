// Binary and variadic math kernels with numpy broadcasting: Pow (base T, exponent T1), Mod (fmod 0/1),
// BitShift, BitwiseAnd/Or/Xor, and the variadic Max, Min, Sum, Mean.
// Integer semantics never hit UB: Mod by zero (and by -1) gives 0; integer Pow wraps and a negative exponent
// gives the truncated quotient (1, -1 or 0); float->int conversions saturate (NaN -> 0); shifts by a negative
// amount or >= the bit width give the sign fill (-1 for a right shift of a negative value, else 0).
// Max/Min propagate NaN like numpy.maximum/minimum.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "core/scratch_space.h"
#include "ep/cpu/elementwise/broadcast.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

template <class T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// Unsigned type wide enough that arithmetic on it never promotes to a signed int.
template <class T>
using WrapType = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;

template <class T>
using ComputeType = std::conditional_t<kIsHalf<T>, float, T>;

template <class T, class C>
inline T from_compute(C value) {
  if constexpr (kIsHalf<T>) {
    return T(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

// Saturating, NaN -> 0.
template <class T>
inline T int_from_double(double value) {
  if (std::isnan(value)) return T{0};
  constexpr double kLow = static_cast<double>(std::numeric_limits<T>::min());
  // 2^(bits-1) for signed T, 2^bits for unsigned T: the first value past max.
  constexpr double kHigh = (static_cast<double>(std::numeric_limits<T>::max() / 2) + 1.0) * 2.0;
  if (value <= kLow) return std::numeric_limits<T>::min();
  if (value >= kHigh) return std::numeric_limits<T>::max();
  return static_cast<T>(value);
}

// ---- Pow ----

template <class T, class E>
inline T int_pow(T base, E exponent) {
  if constexpr (std::is_signed_v<E>) {
    if (exponent < 0) {
      if (base == 1) return T{1};
      if (base == -1) return (exponent & 1) ? T{-1} : T{1};
      return T{0};
    }
  }
  using W = WrapType<T>;
  using UE = std::make_unsigned_t<E>;
  W result = 1;
  W factor = static_cast<W>(base);
  UE e = static_cast<UE>(exponent);
  while (e != 0) {
    if (e & 1u) result *= factor;
    factor *= factor;
    e = static_cast<UE>(e >> 1);
  }
  return static_cast<T>(result);
}

template <class T, class E>
inline T pow_value(T base, E exponent) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
    return int_pow(base, exponent);
  } else if constexpr (std::is_integral_v<T>) {
    double e;
    if constexpr (kIsHalf<E>) {
      e = static_cast<double>(static_cast<float>(exponent));
    } else {
      e = static_cast<double>(exponent);
    }
    return int_from_double<T>(std::pow(static_cast<double>(base), e));
  } else {
    constexpr bool kWide =
        std::is_same_v<T, double> || std::is_same_v<E, double> || (std::is_integral_v<E> && sizeof(E) >= 4);
    using C = std::conditional_t<kWide, double, float>;
    C e;
    if constexpr (kIsHalf<E>) {
      e = static_cast<C>(static_cast<float>(exponent));
    } else {
      e = static_cast<C>(exponent);
    }
    return from_compute<T>(std::pow(static_cast<C>(static_cast<ComputeType<T>>(base)), e));
  }
}

using PowBaseTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t>;
using PowExponentTypes = NumericTypes;

class PowKernel final : public Kernel {
 public:
  PowKernel(std::string description, std::optional<LegacyBroadcast> legacy, bool same_types)
      : description_(std::move(description)), legacy_(legacy), same_types_(same_types) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() != 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": expects 2 inputs");
    }
    const DataType base = inputs[0]->dtype();
    const DataType exponent = inputs[1]->dtype();
    if (!type_list_contains(PowBaseTypes{}, base)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input 0 type ",
                        data_type_name(base));
    }
    if (!type_list_contains(PowExponentTypes{}, exponent) || (same_types_ && exponent != base)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input 1 type ",
                        data_type_name(exponent), " for input 0 type ", data_type_name(base));
    }
    TRY_ASSIGN(BinaryShapes shapes, binary_broadcast_shapes(legacy_ ? &*legacy_ : nullptr, inputs[0]->shape(),
                                                            inputs[1]->shape(), description_));
    outputs.assign(1, OutputDesc{base, std::move(shapes.out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    Shape b_shape = inputs[1]->shape();
    if (legacy_) {
      TRY_ASSIGN(BinaryShapes shapes, binary_broadcast_shapes(&*legacy_, inputs[0]->shape(), b_shape, description_));
      b_shape = std::move(shapes.b);
    }
    visit_dtype<PowBaseTypes>(inputs[0]->dtype(), [&]<class T>() {
      visit_dtype<PowExponentTypes>(inputs[1]->dtype(), [&]<class E>() {
        if constexpr (!std::is_integral_v<T>) {
          const bool scalar = inputs[1]->numel() == 1;
          if (scalar && static_cast<double>(static_cast<ComputeType<E>>(inputs[1]->data<E>()[0])) == 2.0) {
            auto square = [](T x, E) {
              const ComputeType<T> c = static_cast<ComputeType<T>>(x);
              return from_compute<T>(c * c);
            };
            broadcast_binary(inputs[0]->data<T>(), inputs[0]->shape(), inputs[1]->data<E>(), b_shape,
                             outputs[0].data<T>(), outputs[0].shape(), pool, square);
            return;
          }
        }
        auto op = [](T x, E y) { return pow_value<T, E>(x, y); };
        broadcast_binary(inputs[0]->data<T>(), inputs[0]->shape(), inputs[1]->data<E>(), b_shape, outputs[0].data<T>(),
                         outputs[0].shape(), pool, op, kElementwiseGrain / 4);
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  std::optional<LegacyBroadcast> legacy_;
  bool same_types_;
};

// ---- Same-type binary ops: Mod, BitShift, Bitwise* ----

enum class MathOp { kMod, kFmod, kShiftLeft, kShiftRight, kBitAnd, kBitOr, kBitXor, kMax, kMin, kSum };

template <MathOp Op, class T>
inline T math_value(T a, T b) {
  if constexpr (Op == MathOp::kMod || Op == MathOp::kFmod) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return T{0};
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return T{0};
        T r = static_cast<T>(a % b);
        if (Op == MathOp::kMod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
      } else {
        return static_cast<T>(a % b);
      }
    } else {
      using C = ComputeType<T>;
      const C x = static_cast<C>(a);
      const C y = static_cast<C>(b);
      C r = std::fmod(x, y);
      if constexpr (Op == MathOp::kMod) {
        if (r != C{0}) {
          if ((r < C{0}) != (y < C{0})) r += y;
        } else {
          r = std::copysign(C{0}, y);
        }
      }
      return from_compute<T>(r);
    }
  } else if constexpr (Op == MathOp::kShiftLeft || Op == MathOp::kShiftRight) {
    constexpr int kBits = static_cast<int>(sizeof(T) * 8);
    bool out_of_range = b >= static_cast<T>(kBits);
    if constexpr (std::is_signed_v<T>) out_of_range = out_of_range || b < 0;
    if constexpr (Op == MathOp::kShiftRight) {
      if (out_of_range) {
        if constexpr (std::is_signed_v<T>) return a < 0 ? static_cast<T>(-1) : T{0};
        return T{0};
      }
      return static_cast<T>(a >> static_cast<int>(b));
    } else {
      if (out_of_range) return T{0};
      using W = WrapType<T>;
      return static_cast<T>(static_cast<W>(static_cast<std::make_unsigned_t<T>>(a)) << static_cast<int>(b));
    }
  } else if constexpr (Op == MathOp::kBitAnd) {
    return static_cast<T>(a & b);
  } else if constexpr (Op == MathOp::kBitOr) {
    return static_cast<T>(a | b);
  } else if constexpr (Op == MathOp::kBitXor) {
    return static_cast<T>(a ^ b);
  } else if constexpr (Op == MathOp::kMax || Op == MathOp::kMin) {
    if constexpr (std::is_integral_v<T>) {
      return Op == MathOp::kMax ? (a < b ? b : a) : (b < a ? b : a);
    } else {
      if constexpr (kIsHalf<T>) {
        const float x = static_cast<float>(a);
        const float y = static_cast<float>(b);
        const bool take_b = Op == MathOp::kMax ? (x < y || y != y) : (y < x || y != y);
        return take_b ? b : a;
      } else {
        // Shaped so the compiler emits max/min plus a NaN blend.
        const T r = Op == MathOp::kMax ? (a < b ? b : a) : (b < a ? b : a);
        return b != b ? b : r;
      }
    }
  } else {
    return from_compute<T>(static_cast<ComputeType<T>>(a) + static_cast<ComputeType<T>>(b));
  }
}

template <MathOp Op, class Types>
class SameTypeBinaryKernel final : public Kernel {
 public:
  explicit SameTypeBinaryKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() != 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": expects 2 inputs");
    }
    const DataType dtype = inputs[0]->dtype();
    if (!type_list_contains(Types{}, dtype)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input 0 type ",
                        data_type_name(dtype));
    }
    if (inputs[1]->dtype() != dtype) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 type ",
                        data_type_name(inputs[1]->dtype()), " differs from input 0 type ", data_type_name(dtype));
    }
    TRY_ASSIGN(BinaryShapes shapes,
               binary_broadcast_shapes(nullptr, inputs[0]->shape(), inputs[1]->shape(), description_));
    outputs.assign(1, OutputDesc{dtype, std::move(shapes.out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    visit_dtype<Types>(inputs[0]->dtype(), [&]<class T>() {
      auto op = [](T x, T y) { return math_value<Op, T>(x, y); };
      broadcast_binary(inputs[0]->data<T>(), inputs[0]->shape(), inputs[1]->data<T>(), inputs[1]->shape(),
                       outputs[0].data<T>(), outputs[0].shape(), pool, op);
    });
    return Status::ok();
  }

 private:
  std::string description_;
};

// ---- Variadic: Max, Min, Sum, Mean (Mean = Sum, then divide) ----

template <MathOp Op, class Types>
class VariadicKernel final : public Kernel {
 public:
  VariadicKernel(std::string description, bool broadcast, bool mean)
      : description_(std::move(description)), broadcast_(broadcast), mean_(mean) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty()) return make_error(StatusCode::kInvalidArgument, description_, ": expects at least 1 input");
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] == nullptr) return make_error(StatusCode::kInvalidArgument, description_, ": missing input ", i);
    }
    const DataType dtype = inputs[0]->dtype();
    if (!type_list_contains(Types{}, dtype)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input 0 type ",
                        data_type_name(dtype));
    }
    for (size_t i = 1; i < inputs.size(); ++i) {
      if (inputs[i]->dtype() != dtype) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " type ",
                          data_type_name(inputs[i]->dtype()), " differs from input 0 type ", data_type_name(dtype));
      }
    }
    TRY_ASSIGN(Shape shape, broadcast_input_shapes(inputs, broadcast_, description_));
    outputs.assign(1, OutputDesc{dtype, std::move(shape)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    visit_dtype<Types>(inputs[0]->dtype(), [&]<class T>() { run_typed<T>(inputs, outputs[0], pool); });
    return Status::ok();
  }

 private:
  template <class T>
  void run_typed(KernelInputs inputs, Tensor& out, ThreadPool& pool) const {
    T* y = out.data<T>();
    const int64_t n = out.numel();
    if constexpr (Op == MathOp::kSum && (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)) {
      if (inputs.size() > 1) {
        sum_in_float<T>(inputs, out, pool);
        return;
      }
    }
    auto op = [](T x, T z) { return math_value<Op, T>(x, z); };
    if (inputs.size() == 1) {
      const T* x = inputs[0]->data<T>();
      pool.parallel_for(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = x[i];
      });
    } else {
      broadcast_binary(inputs[0]->data<T>(), inputs[0]->shape(), inputs[1]->data<T>(), inputs[1]->shape(), y,
                       out.shape(), pool, op);
      for (size_t k = 2; k < inputs.size(); ++k) {
        broadcast_binary(static_cast<const T*>(y), out.shape(), inputs[k]->data<T>(), inputs[k]->shape(), y,
                         out.shape(), pool, op);
      }
    }
    if constexpr (Op == MathOp::kSum && !std::is_integral_v<T>) {
      if (mean_ && inputs.size() > 1) {
        using C = ComputeType<T>;
        const C count = static_cast<C>(inputs.size());
        pool.parallel_for(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) y[i] = from_compute<T>(static_cast<C>(y[i]) / count);
        });
      }
    }
  }

  // Sum / Mean of half types: every input added in float, the sum (or mean) rounded once, so that partial sums
  // past the half type's range (65504 + 65504 - inf in float16) do not overflow on the way.
  template <class T>
  void sum_in_float(KernelInputs inputs, Tensor& out, ThreadPool& pool) const {
    const int64_t n = out.numel();
    float* sums = static_cast<float*>(scratch_buffer(ScratchUse::kVariadicSum, static_cast<size_t>(n) * sizeof(float)));
    broadcast_binary(inputs[0]->data<T>(), inputs[0]->shape(), inputs[1]->data<T>(), inputs[1]->shape(), sums,
                     out.shape(), pool, [](T a, T b) { return static_cast<float>(a) + static_cast<float>(b); });
    for (size_t k = 2; k < inputs.size(); ++k) {
      broadcast_binary(static_cast<const float*>(sums), out.shape(), inputs[k]->data<T>(), inputs[k]->shape(), sums,
                       out.shape(), pool, [](float a, T b) { return a + static_cast<float>(b); });
    }
    const float count = mean_ ? static_cast<float>(inputs.size()) : 1.0f;
    T* y = out.data<T>();
    pool.parallel_for(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = T(sums[i] / count);
    });
  }

  std::string description_;
  bool broadcast_;
  bool mean_;
};

// ---- Registration ----

using BitwiseTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using ModTypes = NumericTypes;

Expected<std::unique_ptr<Kernel>> create_pow(const KernelInfo& info) {
  std::optional<LegacyBroadcast> legacy;
  if (info.opset() < 7) {
    TRY_ASSIGN(legacy, read_legacy_broadcast(info.node));
  }
  return std::unique_ptr<Kernel>(std::make_unique<PowKernel>(info.node.describe(), legacy, info.opset() < 12));
}

Expected<std::unique_ptr<Kernel>> create_mod(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t fmod, info.node.attr_int("fmod", 0));
  if (fmod != 0 && fmod != 1) {
    return make_error(StatusCode::kInvalidArgument, info.node.describe(), ": attribute fmod must be 0 or 1, got ",
                      fmod);
  }
  if (fmod == 1)
    return std::unique_ptr<Kernel>(
        std::make_unique<SameTypeBinaryKernel<MathOp::kFmod, ModTypes>>(info.node.describe()));
  return std::unique_ptr<Kernel>(std::make_unique<SameTypeBinaryKernel<MathOp::kMod, ModTypes>>(info.node.describe()));
}

Expected<std::unique_ptr<Kernel>> create_bitshift(const KernelInfo& info) {
  TRY_ASSIGN(const std::string direction, info.node.attr_string("direction", ""));
  if (direction == "LEFT") {
    return std::unique_ptr<Kernel>(
        std::make_unique<SameTypeBinaryKernel<MathOp::kShiftLeft, BitwiseTypes>>(info.node.describe()));
  }
  if (direction == "RIGHT") {
    return std::unique_ptr<Kernel>(
        std::make_unique<SameTypeBinaryKernel<MathOp::kShiftRight, BitwiseTypes>>(info.node.describe()));
  }
  return make_error(StatusCode::kInvalidArgument, info.node.describe(),
                    ": attribute direction must be \"LEFT\" or \"RIGHT\", got \"", direction, "\"");
}

template <MathOp Op>
Expected<std::unique_ptr<Kernel>> create_bitwise(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<SameTypeBinaryKernel<Op, BitwiseTypes>>(info.node.describe()));
}

template <MathOp Op, class Types, bool kMean = false>
Expected<std::unique_ptr<Kernel>> create_variadic(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(
      std::make_unique<VariadicKernel<Op, Types>>(info.node.describe(), info.opset() >= 8, kMean));
}

constexpr DataTypeMask kF3 = type_mask(TypeList<float, double, Float16>{});
constexpr DataTypeMask kFloats = type_mask(FloatTypes{});
constexpr DataTypeMask kNumeric = type_mask(NumericTypes{});
constexpr DataTypeMask kNumericNoBf16 = kNumeric & ~type_mask(TypeList<BFloat16>{});
constexpr DataTypeMask kPowBase12 = type_mask(TypeList<float, double, Float16, int32_t, int64_t>{});
constexpr DataTypeMask kPowBase13 = type_mask(PowBaseTypes{});
constexpr DataTypeMask kUnsigned = type_mask(UnsignedIntTypes{});
constexpr DataTypeMask kBitwise = type_mask(BitwiseTypes{});

constexpr auto kMax = create_variadic<MathOp::kMax, NumericTypes>;
constexpr auto kMin = create_variadic<MathOp::kMin, NumericTypes>;
constexpr auto kSum = create_variadic<MathOp::kSum, FloatTypes>;
constexpr auto kMean = create_variadic<MathOp::kSum, FloatTypes, true>;

const KernelDef kBinaryMathKernels[] = {
    {"Pow", graph::kOnnxDomain, 1, 11, kF3, 0, create_pow},
    {"Pow", graph::kOnnxDomain, 12, 12, kPowBase12, 0, create_pow},
    {"Pow", graph::kOnnxDomain, 13, kLatestOpset, kPowBase13, 0, create_pow},
    {"Mod", graph::kOnnxDomain, 10, 12, kNumericNoBf16, 0, create_mod},
    {"Mod", graph::kOnnxDomain, 13, kLatestOpset, kNumeric, 0, create_mod},
    {"BitShift", graph::kOnnxDomain, 11, 27, kUnsigned, 0, create_bitshift},
    {"BitShift", graph::kOnnxDomain, 28, kLatestOpset, kBitwise, 0, create_bitshift},
    {"BitwiseAnd", graph::kOnnxDomain, 18, kLatestOpset, kBitwise, 0, create_bitwise<MathOp::kBitAnd>},
    {"BitwiseOr", graph::kOnnxDomain, 18, kLatestOpset, kBitwise, 0, create_bitwise<MathOp::kBitOr>},
    {"BitwiseXor", graph::kOnnxDomain, 18, kLatestOpset, kBitwise, 0, create_bitwise<MathOp::kBitXor>},
    {"Max", graph::kOnnxDomain, 1, 11, kF3, 0, kMax},
    {"Max", graph::kOnnxDomain, 12, 12, kNumericNoBf16, 0, kMax},
    {"Max", graph::kOnnxDomain, 13, kLatestOpset, kNumeric, 0, kMax},
    {"Min", graph::kOnnxDomain, 1, 11, kF3, 0, kMin},
    {"Min", graph::kOnnxDomain, 12, 12, kNumericNoBf16, 0, kMin},
    {"Min", graph::kOnnxDomain, 13, kLatestOpset, kNumeric, 0, kMin},
    {"Sum", graph::kOnnxDomain, 1, 12, kF3, 0, kSum},
    {"Sum", graph::kOnnxDomain, 13, kLatestOpset, kFloats, 0, kSum},
    {"Mean", graph::kOnnxDomain, 1, 12, kF3, 0, kMean},
    {"Mean", graph::kOnnxDomain, 13, kLatestOpset, kFloats, 0, kMean},
};

}  // namespace

std::span<const KernelDef> binary_math_kernels() { return kBinaryMathKernels; }

}  // namespace nxrt::cpu
