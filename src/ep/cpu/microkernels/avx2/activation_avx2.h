// The fused activations that the AVX2 plain-layout conv epilogues (direct conv, Winograd output transform) apply
// in registers, the same set as activation_avx512.h; include only from AVX2 translation units (microkernels/avx2/).
// Other activations are applied after the store with apply_activation.
#pragma once

#include <immintrin.h>

#include "ep/cpu/elementwise/fused_activation.h"

namespace nxrt::cpu::avx2_activation {

inline __m256 activate(const FusedActivation& act, __m256 v) {
  switch (act.kind) {
    case ActivationKind::kRelu:
      return _mm256_max_ps(_mm256_setzero_ps(), v);  // NaN stays NaN: max returns the second operand then
    case ActivationKind::kLeakyRelu:
      return _mm256_blendv_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(act.alpha)),
                              _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
    case ActivationKind::kClip:
      return _mm256_min_ps(_mm256_set1_ps(act.beta), _mm256_max_ps(_mm256_set1_ps(act.alpha), v));
    default:
      return v;
  }
}

// True when `activate` applies `kind` in registers.
inline bool vectorised(ActivationKind kind) { return activation_in_avx512_registers(kind); }

}  // namespace nxrt::cpu::avx2_activation
