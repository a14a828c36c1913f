// Elementwise unary math: Abs, Neg, Sign, Exp, Log, Sqrt, Reciprocal, Floor, Ceil, Round, Erf, trigonometric
// and hyperbolic functions and their inverses, IsNaN, IsInf, Not, BitwiseNot.
// Integer Abs/Neg wrap as two's complement (Abs(INT_MIN) == INT_MIN). Round is half to even. Erf on integers
// (opset 9-12) truncates erf(x) back to the integer type. IsNaN/IsInf also read the float8 formats (opset 20).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ep/cpu/elementwise/unary_common.h"

namespace nxrt::cpu {

namespace {

struct AbsOp {
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C> && std::is_signed_v<C>) {
      using W = unary_wrap_t<C>;
      return x < 0 ? static_cast<C>(W{0} - static_cast<W>(x)) : x;
    } else if constexpr (std::is_integral_v<C>) {
      return x;
    } else {
      return std::fabs(x);
    }
  }
};

struct NegOp {
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      using W = unary_wrap_t<C>;
      return static_cast<C>(W{0} - static_cast<W>(x));
    } else {
      return -x;
    }
  }
};

struct SignOp {
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x > 0 ? C{1} : C{0};
    } else if constexpr (std::is_integral_v<C>) {
      return x > 0 ? C{1} : (x < 0 ? C{-1} : C{0});
    } else {
      return x > C{0} ? C{1} : (x < C{0} ? C{-1} : (x == C{0} ? C{0} : x));  // NaN stays NaN
    }
  }
};

#define NXRT_FLOAT_UNARY(Name, expression) \
  struct Name {                            \
    template <class C>                     \
    C operator()(C x) const {              \
      return expression;                   \
    }                                      \
  };

struct ExpOp {
  template <class C>
  C operator()(C x) const {
    return std::exp(x);
  }
  void apply_f32(const float* in, float* out, int64_t count) const { vector_exp(in, out, count); }
};
NXRT_FLOAT_UNARY(LogOp, std::log(x))
NXRT_FLOAT_UNARY(SqrtOp, std::sqrt(x))
NXRT_FLOAT_UNARY(ReciprocalOp, C{1} / x)
NXRT_FLOAT_UNARY(FloorOp, std::floor(x))
NXRT_FLOAT_UNARY(CeilOp, std::ceil(x))
NXRT_FLOAT_UNARY(SinOp, std::sin(x))
NXRT_FLOAT_UNARY(CosOp, std::cos(x))
NXRT_FLOAT_UNARY(TanOp, std::tan(x))
NXRT_FLOAT_UNARY(AsinOp, std::asin(x))
NXRT_FLOAT_UNARY(AcosOp, std::acos(x))
NXRT_FLOAT_UNARY(AtanOp, std::atan(x))
NXRT_FLOAT_UNARY(SinhOp, std::sinh(x))
NXRT_FLOAT_UNARY(CoshOp, std::cosh(x))
NXRT_FLOAT_UNARY(AsinhOp, std::asinh(x))
NXRT_FLOAT_UNARY(AcoshOp, std::acosh(x))
NXRT_FLOAT_UNARY(AtanhOp, std::atanh(x))
#undef NXRT_FLOAT_UNARY

// Half to even regardless of the thread's floating-point rounding mode.
struct RoundOp {
  template <class C>
  C operator()(C x) const {
    const C r = std::round(x);  // half away from zero
    const C diff = std::fabs(r - x);
    if (diff == C{0.5} && std::fmod(r, C{2}) != C{0}) return r - std::copysign(C{1}, x);
    return r;
  }
};

struct ErfOp {
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(std::erf(static_cast<double>(x)));  // |erf| <= 1: truncation is always in range
    } else {
      return std::erf(x);
    }
  }
  void apply_f32(const float* in, float* out, int64_t count) const { vector_erf(in, out, count); }
};

struct IsNaNOp {
  template <class C>
  bool operator()(C x) const {
    return x != x;
  }
};

struct IsInfOp {
  bool negative = true;
  bool positive = true;
  template <class C>
  bool operator()(C x) const {
    return (positive && x == std::numeric_limits<C>::infinity()) ||
           (negative && x == -std::numeric_limits<C>::infinity());
  }
};

struct NotOp {
  bool operator()(bool x) const { return !x; }
};

struct BitwiseNotOp {
  template <class C>
  C operator()(C x) const {
    return static_cast<C>(~x);
  }
};

constexpr DataTypeMask bit(DataType type) { return DataTypeMask{1} << static_cast<int>(type); }

constexpr DataTypeMask kFloat8Mask = bit(DataType::kFloat8E4M3FN) | bit(DataType::kFloat8E4M3FNUZ) |
                                     bit(DataType::kFloat8E5M2) | bit(DataType::kFloat8E5M2FNUZ);

// Classification of one float8 byte. E4M3FN has NaN (S.1111.111) and no infinity; the FNUZ formats have a
// single NaN (0x80) and no infinity; E5M2 follows IEEE (exponent all ones).
bool float8_is_nan(DataType type, uint8_t b) {
  switch (type) {
    case DataType::kFloat8E4M3FN: return (b & 0x7f) == 0x7f;
    case DataType::kFloat8E5M2: return (b & 0x7f) > 0x7c;
    default: return b == 0x80;
  }
}

int float8_infinity_sign(DataType type, uint8_t b) {
  if (type != DataType::kFloat8E5M2 || (b & 0x7f) != 0x7c) return 0;
  return (b & 0x80) ? -1 : 1;
}

// IsNaN / IsInf: the UnaryKernel path for f16/bf16/f32/f64 plus a byte path for the float8 formats.
template <class Op>
class FloatClassKernel final : public Kernel {
 public:
  FloatClassKernel(std::string description, DataTypeMask types, Op op)
      : description_(std::move(description)), types_(types), op_(op) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_input_type(inputs, 0, types_, description_));
    outputs.assign(1, OutputDesc{DataType::kBool, inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    bool* y = outputs[0].data<bool>();
    const DataType type = x.dtype();
    if (mask_has(kFloat8Mask, type)) {
      const Op op = op_;
      unary_map(x.data<uint8_t>(), y, x.numel(), pool, [=](uint8_t b) {  // IsNaN reads only type
        if constexpr (std::is_same_v<Op, IsNaNOp>) {
          return float8_is_nan(type, b);
        } else {
          const int sign = float8_infinity_sign(type, b);
          return (sign > 0 && op.positive) || (sign < 0 && op.negative);
        }
      });
      return Status::ok();
    }
    visit_dtype<FloatTypes>(type, [&]<class T>() { unary_map(x.data<T>(), y, x.numel(), pool, op_); });
    return Status::ok();
  }

 private:
  std::string description_;
  DataTypeMask types_;
  Op op_;
};

Expected<std::unique_ptr<Kernel>> create_is_nan(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<FloatClassKernel<IsNaNOp>>(
      info.node.describe(), registered_types(info, type_mask(FloatTypes{})), IsNaNOp{}));
}

Expected<std::unique_ptr<Kernel>> create_is_inf(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t negative, info.node.attr_int("detect_negative", 1));
  TRY_ASSIGN(const int64_t positive, info.node.attr_int("detect_positive", 1));
  return std::unique_ptr<Kernel>(std::make_unique<FloatClassKernel<IsInfOp>>(
      info.node.describe(), registered_types(info, type_mask(FloatTypes{})), IsInfOp{negative != 0, positive != 0}));
}

using F32F64F16 = TypeList<float, double, Float16>;
using F32F64 = TypeList<float, double>;
using SignedNoBf16 = TypeList<float, double, Float16, int8_t, int16_t, int32_t, int64_t>;
using NumericNoBf16 = TypeList<float, double, Float16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                               uint64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

constexpr DataTypeMask kHalfFloats = type_mask(F32F64F16{});
constexpr DataTypeMask kFloats = type_mask(FloatTypes{});
constexpr DataTypeMask kBool = type_mask(TypeList<bool>{});

template <class Op>
constexpr KernelCreateFn kFloatOnly = create_plain_unary<Op, FloatTypes>;

const KernelDef kUnaryMathKernels[] = {
    {"Abs", graph::kOnnxDomain, 1, 5, kHalfFloats, 0, create_plain_unary<AbsOp, NumericTypes>},
    {"Abs", graph::kOnnxDomain, 6, 12, type_mask(NumericNoBf16{}), 0, create_plain_unary<AbsOp, NumericTypes>},
    {"Abs", graph::kOnnxDomain, 13, kLatestOpset, type_mask(NumericTypes{}), 0, create_plain_unary<AbsOp, NumericTypes>},
    {"Neg", graph::kOnnxDomain, 1, 5, kHalfFloats, 0, create_plain_unary<NegOp, SignedNumericTypes>},
    {"Neg", graph::kOnnxDomain, 6, 12, type_mask(SignedNoBf16{}), 0, create_plain_unary<NegOp, SignedNumericTypes>},
    {"Neg", graph::kOnnxDomain, 13, kLatestOpset, type_mask(SignedNumericTypes{}), 0,
     create_plain_unary<NegOp, SignedNumericTypes>},
    {"Sign", graph::kOnnxDomain, 9, 12, type_mask(NumericNoBf16{}), 0, create_plain_unary<SignOp, NumericTypes>},
    {"Sign", graph::kOnnxDomain, 13, kLatestOpset, type_mask(NumericTypes{}), 0, create_plain_unary<SignOp, NumericTypes>},
    {"Exp", graph::kOnnxDomain, 1, 12, kHalfFloats, 0, kFloatOnly<ExpOp>},
    {"Exp", graph::kOnnxDomain, 13, kLatestOpset, kFloats, 0, kFloatOnly<ExpOp>},
    {"Log", graph::kOnnxDomain, 1, 12, kHalfFloats, 0, kFloatOnly<LogOp>},
    {"Log", graph::kOnnxDomain, 13, kLatestOpset, kFloats, 0, kFloatOnly<LogOp>},
    {"Sqrt", graph::kOnnxDomain, 1, 12, kHalfFloats, 0, kFloatOnly<SqrtOp>},
    {"Sqrt", graph::kOnnxDomain, 13, kLatestOpset, kFloats, 0, kFloatOnly<SqrtOp>},
    {"Reciprocal", graph::kOnnxDomain, 1, 12, kHalfFloats, 0, kFloatOnly<ReciprocalOp>},
    {"Reciprocal", graph::kOnnxDomain, 13, kLatestOpset, kFloats, 0, kFloatOnly<ReciprocalOp>},
    {"Floor", graph::kOnnxDomain, 1, 12, kHalfFloats, 0, kFloatOnly<FloorOp>},
    {"Floor", graph::kOnnxDomain, 13, kLatestOpset, kFloats, 0, kFloatOnly<FloorOp>},
    {"Ceil", graph::kOnnxDomain, 1, 12, kHalfFloats, 0, kFloatOnly<CeilOp>},
    {"Ceil", graph::kOnnxDomain, 13, kLatestOpset, kFloats, 0, kFloatOnly<CeilOp>},
    {"Round", graph::kOnnxDomain, 11, 21, kHalfFloats, 0, kFloatOnly<RoundOp>},
    {"Round", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<RoundOp>},
    {"Erf", graph::kOnnxDomain, 9, 12, type_mask(NumericNoBf16{}), 0, create_plain_unary<ErfOp, NumericTypes>},
    {"Erf", graph::kOnnxDomain, 13, kLatestOpset, kFloats, 0, kFloatOnly<ErfOp>},
    {"Sin", graph::kOnnxDomain, 7, 21, kHalfFloats, 0, kFloatOnly<SinOp>},
    {"Sin", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<SinOp>},
    {"Cos", graph::kOnnxDomain, 7, 21, kHalfFloats, 0, kFloatOnly<CosOp>},
    {"Cos", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<CosOp>},
    {"Tan", graph::kOnnxDomain, 7, 21, kHalfFloats, 0, kFloatOnly<TanOp>},
    {"Tan", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<TanOp>},
    {"Asin", graph::kOnnxDomain, 7, 21, kHalfFloats, 0, kFloatOnly<AsinOp>},
    {"Asin", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<AsinOp>},
    {"Acos", graph::kOnnxDomain, 7, 21, kHalfFloats, 0, kFloatOnly<AcosOp>},
    {"Acos", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<AcosOp>},
    {"Atan", graph::kOnnxDomain, 7, 21, kHalfFloats, 0, kFloatOnly<AtanOp>},
    {"Atan", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<AtanOp>},
    {"Sinh", graph::kOnnxDomain, 9, 21, kHalfFloats, 0, kFloatOnly<SinhOp>},
    {"Sinh", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<SinhOp>},
    {"Cosh", graph::kOnnxDomain, 9, 21, kHalfFloats, 0, kFloatOnly<CoshOp>},
    {"Cosh", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<CoshOp>},
    {"Asinh", graph::kOnnxDomain, 9, 21, kHalfFloats, 0, kFloatOnly<AsinhOp>},
    {"Asinh", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<AsinhOp>},
    {"Acosh", graph::kOnnxDomain, 9, 21, kHalfFloats, 0, kFloatOnly<AcoshOp>},
    {"Acosh", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<AcoshOp>},
    {"Atanh", graph::kOnnxDomain, 9, 21, kHalfFloats, 0, kFloatOnly<AtanhOp>},
    {"Atanh", graph::kOnnxDomain, 22, kLatestOpset, kFloats, 0, kFloatOnly<AtanhOp>},
    {"IsNaN", graph::kOnnxDomain, 9, 12, kHalfFloats, 0, create_is_nan},
    {"IsNaN", graph::kOnnxDomain, 13, 19, kFloats, 0, create_is_nan},
    {"IsNaN", graph::kOnnxDomain, 20, kLatestOpset, kFloats | kFloat8Mask, 0, create_is_nan},
    {"IsInf", graph::kOnnxDomain, 10, 19, type_mask(F32F64{}), 0, create_is_inf},
    {"IsInf", graph::kOnnxDomain, 20, kLatestOpset, kFloats | kFloat8Mask, 0, create_is_inf},
    {"Not", graph::kOnnxDomain, 1, kLatestOpset, kBool, 0, create_plain_unary<NotOp, TypeList<bool>>},
    {"BitwiseNot", graph::kOnnxDomain, 18, kLatestOpset, type_mask(IntTypes{}), 0,
     create_plain_unary<BitwiseNotOp, IntTypes>},
};

}  // namespace

std::span<const KernelDef> unary_math_kernels() { return kUnaryMathKernels; }

}  // namespace nxrt::cpu
