// Per-op policies for the Reduce kernels (reduce.cpp). Each OpT<T> provides:
//   Acc                      accumulator type (float for f16/bf16, uint64 for wrapping integer sums/products,
//                            CompensatedSum for the float sums whose terms can cancel)
//   init()                   identity of the reduction
//   step(acc, x, shift)      folds one element in (shift: the max subtracted by LogSumExp, else unused)
//   merge(a, b)              combines two partial accumulators (lanes, chunks)
//   finish(acc, count, shift) the output element for `count` reduced elements
//   kSupported               false for element types the op never accepts (not instantiated)
//   kShifted                 true when a ShiftOp pass must compute `shift` first
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/half.h"
#include "ep/cpu/microkernels/two_sum.h"

namespace nxrt::cpu {

template <class T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

template <class T>
using FloatAcc = std::conditional_t<std::is_same_v<T, double>, double, float>;

// A compensated float sum: `sum` is the rounded running sum and `lost` the exact errors of its additions
// (two_sum_add), so value() is the sum of the terms to within about one rounding whatever their order, as long as
// the running sum stays finite (max + 1 - max is 1, not 0). Once `sum` is infinite or NaN it stays so and is the
// value (`lost` is then meaningless). The converting constructor lets callers write Acc{0}.
template <class F>
struct CompensatedSum {
  F sum{0};
  F lost{0};
  constexpr CompensatedSum() = default;
  constexpr CompensatedSum(F v) : sum(v) {}  // NOLINT(google-explicit-constructor)
  constexpr CompensatedSum(F s, F l) : sum(s), lost(l) {}
  CompensatedSum plus(F x) const {
    CompensatedSum total = *this;
    two_sum_add(total.sum, total.lost, x);
    return total;
  }
  friend CompensatedSum operator+(const CompensatedSum& a, const CompensatedSum& b) {
    const CompensatedSum total = a.plus(b.sum);
    return {total.sum, total.lost + b.lost};
  }
  friend CompensatedSum operator+(const CompensatedSum& a, F x) { return a.plus(x); }
  F value() const { return std::isfinite(sum) ? sum + lost : sum; }
};

template <class Acc>
inline constexpr bool kCompensated = false;
template <class F>
inline constexpr bool kCompensated<CompensatedSum<F>> = true;

// The value of an accumulator: plain ones are their value, compensated ones add what they lost.
template <class Acc>
auto acc_value(const Acc& a) {
  if constexpr (std::is_arithmetic_v<Acc>) {
    return a;
  } else {
    return a.value();
  }
}

// Integer reductions accumulate modulo 2^64; converting back to T keeps the low bits (numpy's wrap-around).
template <class T>
using SumAcc = std::conditional_t<std::is_integral_v<T>, uint64_t, FloatAcc<T>>;

// Sums whose terms can have both signs (Sum, Mean, LogSum) compensate float additions; sums of non-negative
// terms (L1, L2, SumSquare, LogSumExp) cannot cancel and add plainly.
template <class T>
using SignedSumAcc = std::conditional_t<std::is_integral_v<T>, uint64_t, CompensatedSum<FloatAcc<T>>>;

template <class T>
T saturate_from_double(double v) {
  if (std::isnan(v)) return T{0};
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Float accumulator -> output element (integers saturate).
template <class T, class Acc>
T from_float_acc(Acc a) {
  if constexpr (kIsHalf<T>) {
    return T(static_cast<float>(a));
  } else if constexpr (std::is_integral_v<T>) {
    return saturate_from_double<T>(static_cast<double>(a));
  } else {
    return static_cast<T>(a);
  }
}

template <class T>
SumAcc<T> widen(T x) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(x);
  } else if constexpr (kIsHalf<T>) {
    return static_cast<float>(x);
  } else {
    return x;
  }
}

// The numeric value of x in a floating accumulator.
template <class Acc, class T>
Acc value_as(T x) {
  if constexpr (kIsHalf<T>) return static_cast<Acc>(static_cast<float>(x));
  return static_cast<Acc>(x);
}

// An accumulator converted back to T: integers keep the low bits (wrap-around), floats as from_float_acc.
template <class T, class Acc>
T from_acc(Acc a) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(a);
  return from_float_acc<T>(acc_value(a));
}

// The ops that add their elements into an Acc from 0 (Sum and its relatives): all but finish. step adds the
// element itself, integers converted to A (wrapping uint64, a wide integer or double), floats widened; the ops
// that add a function of it (|x|, x^2) replace step.
template <class T, class A>
struct AddingOp {
  static constexpr bool kSupported = !std::is_same_v<T, bool>;
  static constexpr bool kShifted = false;
  using Acc = A;
  static Acc init() { return Acc{0}; }
  static Acc merge(Acc a, Acc b) { return a + b; }
  static Acc step(Acc a, T x, Acc) {
    if constexpr (std::is_integral_v<T>) return a + static_cast<Acc>(x);
    return a + widen(x);
  }
};

// The result is A's value converted back to T.
template <class T, class A>
struct SummingOp : AddingOp<T, A> {
  static T finish(A a, int64_t, A) { return from_acc<T>(a); }
};

template <class T>
struct SumOp : SummingOp<T, SignedSumAcc<T>> {};

// Integer means are exact: the sum in 128 bits (no element count can overflow it), divided toward zero, so the
// mean of {INT64_MAX, INT64_MAX} is INT64_MAX (a wrapped sum would give -1). The mean of nothing is 0.
template <class T>
using MeanAcc = std::conditional_t<std::is_integral_v<T>, __int128, CompensatedSum<FloatAcc<T>>>;

template <class T>
struct MeanOp : AddingOp<T, MeanAcc<T>> {
  using Acc = MeanAcc<T>;
  static T finish(Acc a, int64_t count, Acc) {
    if constexpr (std::is_integral_v<T>) {
      return count == 0 ? T{0} : static_cast<T>(a / static_cast<Acc>(count));
    } else {
      return from_float_acc<T>(a.value() / static_cast<FloatAcc<T>>(count));
    }
  }
};

template <class T>
struct ProdOp {
  static constexpr bool kSupported = !std::is_same_v<T, bool>;
  static constexpr bool kShifted = false;
  using Acc = SumAcc<T>;
  static Acc init() { return Acc{1}; }
  static Acc step(Acc a, T x, Acc) { return a * widen(x); }
  static Acc merge(Acc a, Acc b) { return a * b; }
  static T finish(Acc a, int64_t, Acc) { return from_acc<T>(a); }
};

template <class T>
struct L1Op : SummingOp<T, SumAcc<T>> {
  using Acc = SumAcc<T>;
  static Acc step(Acc a, T x, Acc) {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      return a + (x < 0 ? uint64_t{0} - widen(x) : widen(x));
    } else if constexpr (std::is_integral_v<T>) {
      return a + widen(x);
    } else {
      return a + std::abs(widen(x));
    }
  }
};

// Integer squares wrap in T first (numpy's np.square keeps the dtype), then accumulate.
template <class T>
SumAcc<T> square_of(T x) {
  if constexpr (std::is_integral_v<T>) {
    return widen(static_cast<T>(widen(x) * widen(x)));
  } else {
    const auto v = widen(x);
    return v * v;
  }
}

template <class T>
struct SumSquareOp : SummingOp<T, SumAcc<T>> {
  using Acc = SumAcc<T>;
  static Acc step(Acc a, T x, Acc) { return a + square_of(x); }
};

// Integer L2 and LogSum compute the spec's sqrt(sum(x^2)) and log(sum(x)) in double (squares and sums exact
// below 2^53), not from wrapped integer sums: ReduceL2 of int32 46341 is 46341, where its wrapped square is
// negative.
template <class T>
using RealAcc = std::conditional_t<std::is_integral_v<T>, double, SumAcc<T>>;

// The integer results convert toward zero, saturating, NaN to 0 (from_float_acc).
template <class T>
struct L2Op : AddingOp<T, RealAcc<T>> {
  using Acc = RealAcc<T>;
  static Acc step(Acc a, T x, Acc) {
    const Acc v = value_as<Acc>(x);
    return a + v * v;
  }
  static T finish(Acc a, int64_t, Acc) { return from_float_acc<T>(std::sqrt(a)); }
};

// Integer LogSum sums exactly in 128 bits (as Mean) and takes the log of that sum in double: a double sum would lose
// small terms behind large ones that cancel ({INT64_MAX, INT64_MIN, 1, ...}).
template <class T>
using LogSumAcc = std::conditional_t<std::is_integral_v<T>, __int128, SignedSumAcc<T>>;

template <class T>
struct LogSumOp : AddingOp<T, LogSumAcc<T>> {
  using Acc = LogSumAcc<T>;
  static T finish(Acc a, int64_t, Acc) {
    if constexpr (std::is_integral_v<T>) {
      return from_float_acc<T>(std::log(static_cast<double>(a)));
    } else {
      return from_float_acc<T>(std::log(acc_value(a)));
    }
  }
};

template <class T>
using ExpAcc = double;

template <class T>
struct LogSumExpOp {
  static constexpr bool kSupported = !std::is_same_v<T, bool>;
  static constexpr bool kShifted = true;
  using Acc = ExpAcc<T>;
  static Acc init() { return Acc{0}; }
  static Acc step(Acc a, T x, Acc shift) { return a + std::exp(value_as<Acc>(x) - shift); }
  static Acc merge(Acc a, Acc b) { return a + b; }
  static T finish(Acc a, int64_t, Acc shift) { return from_float_acc<T>(std::log(a) + shift); }
};

// Max over the finite elements (the shift LogSumExp subtracts); -inf when there are none.
template <class T>
struct ShiftOp {
  using Acc = ExpAcc<T>;
  static Acc init() { return -std::numeric_limits<Acc>::infinity(); }
  static Acc step(Acc a, T x, Acc) {
    const Acc v = value_as<Acc>(x);
    return (std::isfinite(v) && v > a) ? v : a;
  }
  static Acc merge(Acc a, Acc b) { return b > a ? b : a; }
};

template <class T>
using MinMaxAcc = std::conditional_t<kIsHalf<T>, float, T>;

// Max / Min propagate NaN (numpy's maximum.reduce). bool: Max is any, Min is all.
template <class T>
struct MaxOp {
  static constexpr bool kSupported = true;
  static constexpr bool kShifted = false;
  using Acc = MinMaxAcc<T>;
  static Acc init() {
    if constexpr (std::numeric_limits<Acc>::has_infinity) return -std::numeric_limits<Acc>::infinity();
    return std::numeric_limits<Acc>::lowest();
  }
  static Acc merge(Acc a, Acc v) {
    if constexpr (std::is_floating_point_v<Acc>) return (a >= v || a != a) ? a : v;
    return v > a ? v : a;
  }
  static Acc step(Acc a, T x, Acc) { return merge(a, value_as<Acc>(x)); }
  static T finish(Acc a, int64_t, Acc) {
    if constexpr (kIsHalf<T>) {
      return T(a);
    } else {
      return a;
    }
  }
};

template <class T>
struct MinOp {
  static constexpr bool kSupported = true;
  static constexpr bool kShifted = false;
  using Acc = MinMaxAcc<T>;
  static Acc init() {
    if constexpr (std::numeric_limits<Acc>::has_infinity) return std::numeric_limits<Acc>::infinity();
    return std::numeric_limits<Acc>::max();
  }
  static Acc merge(Acc a, Acc v) {
    if constexpr (std::is_floating_point_v<Acc>) return (a <= v || a != a) ? a : v;
    return v < a ? v : a;
  }
  static Acc step(Acc a, T x, Acc) { return merge(a, value_as<Acc>(x)); }
  static T finish(Acc a, int64_t, Acc) {
    if constexpr (kIsHalf<T>) {
      return T(a);
    } else {
      return a;
    }
  }
};

}  // namespace nxrt::cpu
