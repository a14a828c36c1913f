// The AVX-512 block traits of the blocked-channel kernels (nchwc_conv_kernel.h): one 16-lane block is one zmm
// register; a tile is up to 2 output blocks x 12 pixels (24 accumulators, 2 weight vectors, broadcasts folded into
// the FMAs). Include only from AVX-512 translation units (microkernels/avx512/).
#pragma once

#include <immintrin.h>

#include "ep/cpu/microkernels/avx512/activation_avx512.h"

namespace nxrt::cpu::nchwc {

struct BlockAvx512 {
  using Reg = __m512;
  using Lane = __m512;
  static constexpr int kTilePixels = 12;
  static constexpr int kMaxBlockGroup = 2;
  static constexpr int kDepthwisePixels = 8;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg load_broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Lane broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Reg fma(Reg w, Lane x, Reg acc) { return _mm512_fmadd_ps(w, x, acc); }
  static Reg fmadd(Reg a, Reg b, Reg acc) { return _mm512_fmadd_ps(a, b, acc); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm512_sub_ps(a, b); }
  static Reg div(Reg a, Reg b) { return _mm512_div_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm512_max_ps(a, b); }
  static Reg activate(const FusedActivation& activation, Reg v) {
    if (activation.kind == ActivationKind::kHardSigmoid) {
      const Reg linear = _mm512_fmadd_ps(v, _mm512_set1_ps(activation.alpha), _mm512_set1_ps(activation.beta));
      return _mm512_min_ps(_mm512_set1_ps(1.0f), _mm512_max_ps(_mm512_setzero_ps(), linear));
    }
    if (activation.kind == ActivationKind::kHardSwish) {
      // x * max(0, min(1, x / 6 + 1 / 2)), divided as the scalar form is.
      const Reg gate = _mm512_add_ps(_mm512_div_ps(v, _mm512_set1_ps(6.0f)), _mm512_set1_ps(0.5f));
      return _mm512_mul_ps(v, _mm512_min_ps(_mm512_set1_ps(1.0f), _mm512_max_ps(_mm512_setzero_ps(), gate)));
    }
    return cpu::activate(activation, v);
  }
  static Reg take_larger(Reg best, Reg tap) {
    const __mmask16 take = _mm512_cmp_ps_mask(tap, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(best, best, _CMP_UNORD_Q);
    return _mm512_mask_mov_ps(best, take, tap);
  }
  static bool any_equal(Reg a, Reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ) != 0; }
};

}  // namespace nxrt::cpu::nchwc
