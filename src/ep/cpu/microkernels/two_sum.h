// Error-free addition for compensated sums (reductions, vector_math_loops.h).
#pragma once

namespace nxrt::cpu {
// Internal linkage on purpose: vector_math_loops.h is compiled once per ISA, and an inline function with external
// linkage would let the linker keep one ISA's copy for all.
namespace {

// sum + x rounded into `sum`, and the exact rounding error of that addition added to `lost` (Knuth's TwoSum: no
// comparison, so loops over lanes vectorise; exact in IEEE arithmetic, which the build never relaxes with
// fast-math). F is a float type or a vector of one.
template <class F>
inline void two_sum_add(F& sum, F& lost, F x) {
  const F t = sum + x;
  const F x_part = t - sum;
  lost += (sum - (t - x_part)) + (x - x_part);
  sum = t;
}

}  // namespace
}  // namespace nxrt::cpu
