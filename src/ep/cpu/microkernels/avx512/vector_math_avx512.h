// Float math on 16-lane AVX-512 registers; include only from AVX-512 translation units (kernels/avx512/).
// Shared by the vector math kernels (vector_math_avx512.cpp) and the GEMM tile epilogue (gemm_avx512.cpp).
// Accuracy matches vector_math.h: exp 1 ulp, erf 3 ulp; the Gelu forms are within 4 ulp or 2e-7 absolute.
// Polynomials are evaluated in Estrin form: the dependency chains, not the operation count, bound these loops.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ep/cpu/microkernels/avx512/vector_lanes_avx512.h"
#include "ep/cpu/microkernels/vector_math_coefficients.h"

namespace nxrt::cpu::avx512_math {

using vector_coefficients::kErfLarge;
using vector_coefficients::kErfSmall;
using vector_coefficients::kExp;
using vector_coefficients::kGeluLog2Odds;
using vector_coefficients::kGeluRange;
using vector_coefficients::kTanh;

inline __m512 splat(float v) { return _mm512_set1_ps(v); }

// c0 + c1 x + ... + c5 x^5, x2 = x * x.
inline __m512 poly5(__m512 x, __m512 x2, const float* c) {
  const __m512 p01 = _mm512_fmadd_ps(splat(c[1]), x, splat(c[0]));
  const __m512 p23 = _mm512_fmadd_ps(splat(c[3]), x, splat(c[2]));
  const __m512 p45 = _mm512_fmadd_ps(splat(c[5]), x, splat(c[4]));
  return _mm512_fmadd_ps(_mm512_fmadd_ps(p45, x2, p23), x2, p01);
}

// c0 + c1 x + c2 x^2 + c3 x^3, x2 = x * x (poly5 with c4 = c5 = 0, operation for operation).
inline __m512 poly3(__m512 x, __m512 x2, const float* c) {
  const auto p01 = _mm512_fmadd_ps(splat(c[1]), x, splat(c[0]));
  return _mm512_fmadd_ps(_mm512_fmadd_ps(splat(c[3]), x, splat(c[2])), x2, p01);
}

// exp(x) for x in [-104, 89] or NaN: x = n ln2 + r, |r| <= ln2 / 2 (ln2 split so that n * kLn2Hi is exact),
// 1 + r + r^2 P(r), and 2^n by scalef, which rounds once: subnormal results and overflow to inf come out right.
inline __m512 exp_in_range(__m512 x) {
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, splat(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, splat(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, splat(-2.12194440e-4f), r);
  const __m512 r2 = _mm512_mul_ps(r, r);
  const __m512 p = _mm512_fmadd_ps(poly5(r, r2, kExp), r2, _mm512_add_ps(r, splat(1.0f)));
  return _mm512_scalef_ps(p, n);
}

// exp(x) for any x; NaN propagates (max and min return their second operand when it is NaN).
inline __m512 exp(__m512 x) { return exp_in_range(_mm512_min_ps(splat(89.0f), _mm512_max_ps(splat(-104.0f), x))); }

// 1 / d for finite nonzero d: the 14-bit estimate and one Newton step.
inline __m512 reciprocal(__m512 d) {
  const __m512 r = _mm512_rcp14_ps(d);
  return _mm512_fmadd_ps(r, _mm512_fnmadd_ps(d, r, splat(1.0f)), r);
}

inline __m512 copy_sign(__m512 magnitude, __m512 sign_of) {
  const __m512i sign_bit = _mm512_set1_epi32(static_cast<int32_t>(0x80000000u));
  return _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_castps_si512(magnitude), _mm512_and_si512(_mm512_castps_si512(sign_of), sign_bit)));
}

// tanh, as the portable tanh_one computes it: |x| < 0.625: x + x z P(z), z = x^2; beyond,
// 1 - 2 / (exp(2|x|) + 1) with x's sign. NaN stays NaN in the second form.
inline __m512 tanh(__m512 x) {
  const __m512 ax = _mm512_abs_ps(x);
  const __m512 z = _mm512_mul_ps(x, x);
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(x, z), poly5(z, _mm512_mul_ps(z, z), kTanh), x);
  const __m512 large = _mm512_sub_ps(
      splat(1.0f), _mm512_div_ps(splat(2.0f), _mm512_add_ps(exp(_mm512_add_ps(ax, ax)), splat(1.0f))));
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, splat(0.625f), _CMP_LT_OQ), copy_sign(large, x), small);
}

// 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, e = exp(-|x|) <= 1: for large negative x the result is about
// e itself, and dividing into e keeps exp's error instead of inverting 1 + exp(-x).
inline __m512 sigmoid(__m512 x) {
  const __m512 e = exp(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(x)));
  const __m512 numerator =
      _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), splat(1.0f), e);
  return _mm512_div_ps(numerator, _mm512_add_ps(splat(1.0f), e));
}

// erf, as the portable erf_one (vector_math_loops.h) computes it: |x| < 1: x P(x^2); 1 <= |x| < 4:
// 1 - exp(-x^2) Q(1/|x|); beyond, +-1.
inline __m512 erf(__m512 x) {
  const __m512 ax = _mm512_abs_ps(x);
  const __m512 z = _mm512_mul_ps(x, x);
  const __m512 z2 = _mm512_mul_ps(z, z);
  const __m512 p = _mm512_fmadd_ps(_mm512_mul_ps(splat(kErfSmall[6]), z2), _mm512_mul_ps(z2, z2),
                                   poly5(z, z2, kErfSmall));
  const __m512 small = _mm512_mul_ps(x, p);
  const __m512 a = _mm512_min_ps(splat(4.0f), _mm512_max_ps(splat(1.0f), ax));  // NaN lanes are replaced below
  const __m512 u = reciprocal(a);
  const __m512 u2 = _mm512_mul_ps(u, u);
  const __m512 q_low = poly5(u, u2, kErfLarge);
  const __m512 q_high =
      _mm512_fmadd_ps(_mm512_fmadd_ps(splat(kErfLarge[8]), u, splat(kErfLarge[7])), u, splat(kErfLarge[6]));
  const __m512 q = _mm512_fmadd_ps(q_high, _mm512_mul_ps(_mm512_mul_ps(u2, u2), u2), q_low);
  const __m512 large =
      _mm512_fnmadd_ps(exp_in_range(_mm512_mul_ps(a, _mm512_sub_ps(_mm512_setzero_ps(), a))), q, splat(1.0f));
  const __mmask16 use_small = _mm512_cmp_ps_mask(ax, splat(1.0f), _CMP_LT_OQ);
  const __mmask16 is_nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(use_small | is_nan, copy_sign(large, x), _mm512_mask_blend_ps(is_nan, small, x));
}

// 2^y for y in [-126, 127] or NaN: y = n + f, |f| <= 1/2, exp(f ln2) by the exp polynomial, and 2^n by scalef.
inline __m512 exp2_in_range(__m512 y) {
  const __m512 n = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = _mm512_mul_ps(_mm512_sub_ps(y, n), splat(0.69314718055994531f));
  const __m512 r2 = _mm512_mul_ps(r, r);
  const __m512 p = _mm512_fmadd_ps(poly5(r, r2, kExp), r2, _mm512_add_ps(r, splat(1.0f)));
  return _mm512_scalef_ps(p, n);
}

// Gelu(x) = x / (1 + 2^y), y = x Q(t) (see kGeluLog2Odds). No cancellation for x < 0: 2^y is large there and
// the quotient keeps its relative accuracy. Below -kGeluRange the factor is 0, so x = -inf gives NaN.
inline __m512 gelu_erf(__m512 x) {
  const __m512 clamped = _mm512_min_ps(splat(kGeluRange), _mm512_max_ps(splat(-kGeluRange), x));  // NaN stays NaN
  const __m512 t = _mm512_fmsub_ps(_mm512_mul_ps(clamped, clamped), splat(2.0f / (kGeluRange * kGeluRange)),
                                   splat(1.0f));
  const __m512 t2 = _mm512_mul_ps(t, t);
  const __m512 low = _mm512_fmadd_ps(_mm512_fmadd_ps(splat(kGeluLog2Odds[3]), t, splat(kGeluLog2Odds[2])), t2,
                                     _mm512_fmadd_ps(splat(kGeluLog2Odds[1]), t, splat(kGeluLog2Odds[0])));
  const __m512 high = _mm512_fmadd_ps(splat(kGeluLog2Odds[6]), t2,
                                      _mm512_fmadd_ps(splat(kGeluLog2Odds[5]), t, splat(kGeluLog2Odds[4])));
  const __m512 y = _mm512_mul_ps(clamped, _mm512_fmadd_ps(high, _mm512_mul_ps(t2, t2), low));  // |y| <= 26
  const __m512 factor = _mm512_div_ps(splat(1.0f), _mm512_add_ps(splat(1.0f), exp2_in_range(y)));
  const __mmask16 vanishing = _mm512_cmp_ps_mask(x, splat(-kGeluRange), _CMP_LT_OQ);
  return _mm512_mul_ps(x, _mm512_maskz_mov_ps(static_cast<__mmask16>(~vanishing), factor));
}

// 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2 / pi) (x + 0.044715 x^3): no cancellation for x < 0.
// Where exp(-2u) overflows the factor is 0, so x = -inf gives NaN, as the tanh form does.
inline __m512 gelu_tanh(__m512 x) {
  const __m512 x2 = _mm512_mul_ps(x, x);
  const __m512 minus_two_u = _mm512_mul_ps(_mm512_mul_ps(x, splat(-2.0f * 0.79788456080286536f)),
                                           _mm512_fmadd_ps(x2, splat(0.044715f), splat(1.0f)));
  return _mm512_mul_ps(x, _mm512_div_ps(splat(1.0f), _mm512_add_ps(exp(minus_two_u), splat(1.0f))));
}

// out[i] = f(in[i]) for i < n, two vectors per step (independent chains overlap); the tail is masked.
template <class F>
inline void map(const float* in, float* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = _mm512_loadu_ps(in + i);
    const __m512 b = _mm512_loadu_ps(in + i + 16);
    _mm512_storeu_ps(out + i, f(a));
    _mm512_storeu_ps(out + i + 16, f(b));
  }
  for (; i < n; i += 16) {
    const __mmask16 m = first_lanes(n - i);
    _mm512_mask_storeu_ps(out + i, m, f(_mm512_maskz_loadu_ps(m, in + i)));
  }
}

}  // namespace nxrt::cpu::avx512_math
