// The fused activations that AVX-512 epilogues apply in registers; include only from AVX-512 translation
// units (kernels/avx512/). Other activations are applied after the store with apply_activation.
#pragma once

#include <immintrin.h>

#include "ep/cpu/elementwise/fused_activation.h"

namespace nxrt::cpu {

inline __m512 activate(const FusedActivation& act, __m512 v) {
  switch (act.kind) {
    case ActivationKind::kRelu:
      return _mm512_max_ps(_mm512_setzero_ps(), v);  // NaN stays NaN: max returns the second operand then
    case ActivationKind::kLeakyRelu: {
      const __mmask16 negative = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
      return _mm512_mask_mul_ps(v, negative, v, _mm512_set1_ps(act.alpha));
    }
    case ActivationKind::kClip:
      return _mm512_min_ps(_mm512_set1_ps(act.beta), _mm512_max_ps(_mm512_set1_ps(act.alpha), v));
    default:
      return v;
  }
}

// True when `activate` applies `kind` in registers.
inline bool vectorised(ActivationKind kind) { return activation_in_avx512_registers(kind); }

}  // namespace nxrt::cpu
