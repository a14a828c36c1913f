// The AVX2 + FMA block traits of the blocked-channel kernels (nchwc_conv_kernel.h): one 16-lane block is a pair of
// ymm registers; a tile is 1 output block x 6 pixels (12 accumulators, 2 weight vectors and one broadcast: 15 of
// the 16 ymm registers). Include only from AVX2 translation units (microkernels/avx2/).
#pragma once

#include <immintrin.h>

#include "ep/cpu/elementwise/fused_activation.h"

namespace nxrt::cpu::nchwc {

struct BlockAvx2 {
  struct Reg {
    __m256 lo, hi;
  };
  using Lane = __m256;
  static constexpr int kTilePixels = 6;
  static constexpr int kMaxBlockGroup = 1;
  static constexpr int kDepthwisePixels = 4;
  static Reg zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static Reg load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static Reg load_broadcast(const float* p) { return {_mm256_broadcast_ss(p), _mm256_broadcast_ss(p)}; }
  static void store(float* p, Reg v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
  }
  static Lane broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Reg fma(Reg w, Lane x, Reg acc) {
    return {_mm256_fmadd_ps(w.lo, x, acc.lo), _mm256_fmadd_ps(w.hi, x, acc.hi)};
  }
  static Reg fmadd(Reg a, Reg b, Reg acc) {
    return {_mm256_fmadd_ps(a.lo, b.lo, acc.lo), _mm256_fmadd_ps(a.hi, b.hi, acc.hi)};
  }
  static Reg add(Reg a, Reg b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  static Reg sub(Reg a, Reg b) { return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)}; }
  static Reg div(Reg a, Reg b) { return {_mm256_div_ps(a.lo, b.lo), _mm256_div_ps(a.hi, b.hi)}; }
  static Reg max(Reg a, Reg b) { return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)}; }
  static Reg min(Reg a, Reg b) { return {_mm256_min_ps(a.lo, b.lo), _mm256_min_ps(a.hi, b.hi)}; }
  static Reg activate(const FusedActivation& activation, Reg v) {
    switch (activation.kind) {
      case ActivationKind::kRelu: return max(zero(), v);  // NaN stays NaN: max returns the second operand then
      case ActivationKind::kLeakyRelu: {
        const __m256 slope = _mm256_set1_ps(activation.alpha);
        const auto leaky = [&](__m256 x) {
          return _mm256_blendv_ps(x, _mm256_mul_ps(x, slope), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
        };
        return {leaky(v.lo), leaky(v.hi)};
      }
      case ActivationKind::kClip:
        return min(load_broadcast(&activation.beta), max(load_broadcast(&activation.alpha), v));
      case ActivationKind::kHardSigmoid: {
        const __m256 alpha = _mm256_set1_ps(activation.alpha), beta = _mm256_set1_ps(activation.beta);
        const Reg linear{_mm256_fmadd_ps(v.lo, alpha, beta), _mm256_fmadd_ps(v.hi, alpha, beta)};
        const float one = 1.0f;
        return min(load_broadcast(&one), max(zero(), linear));
      }
      case ActivationKind::kHardSwish: {
        // x * max(0, min(1, x / 6 + 1 / 2)), divided as the scalar form is.
        const auto hard_swish = [](__m256 x) {
          const __m256 gate = _mm256_add_ps(_mm256_div_ps(x, _mm256_set1_ps(6.0f)), _mm256_set1_ps(0.5f));
          return _mm256_mul_ps(x, _mm256_min_ps(_mm256_set1_ps(1.0f), _mm256_max_ps(_mm256_setzero_ps(), gate)));
        };
        return {hard_swish(v.lo), hard_swish(v.hi)};
      }
      default: return v;
    }
  }
  static Reg take_larger(Reg best, Reg tap) {
    const auto take = [](__m256 b, __m256 t) {
      const __m256 mask = _mm256_or_ps(_mm256_cmp_ps(t, b, _CMP_GT_OQ), _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
      return _mm256_blendv_ps(b, t, mask);
    };
    return {take(best.lo, tap.lo), take(best.hi, tap.hi)};
  }
  static bool any_equal(Reg a, Reg b) {
    const __m256 equal = _mm256_or_ps(_mm256_cmp_ps(a.lo, b.lo, _CMP_EQ_OQ), _mm256_cmp_ps(a.hi, b.hi, _CMP_EQ_OQ));
    return _mm256_movemask_ps(equal) != 0;
  }
};

}  // namespace nxrt::cpu::nchwc
