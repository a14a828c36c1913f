// Float math on 8-lane AVX2 + FMA registers; include only from AVX2 translation units (microkernels/avx2/).
// Shared by the vector math kernels (vector_math_avx2.cpp) and the GEMM tile epilogue (gemm_avx2.cpp).
// The same polynomials as the AVX-512 copy (avx512/vector_math_avx512.h), so the same accuracy: exp 1 ulp, erf
// 3 ulp; the Gelu forms within 4 ulp or 2e-7 absolute. AVX2 has no scalef: 2^n is applied as two exact powers of
// two, as the portable exp_one does, so subnormal results and overflow to inf still come out right.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ep/cpu/microkernels/avx2/vector_lanes_avx2.h"
#include "ep/cpu/microkernels/vector_math_coefficients.h"

namespace nxrt::cpu::avx2_math {

using avx2_lanes::first_lanes;
using avx2_lanes::max_lanes;
using avx2_lanes::sum_lanes;
using vector_coefficients::kErfLarge;
using vector_coefficients::kErfSmall;
using vector_coefficients::kExp;
using vector_coefficients::kGeluLog2Odds;
using vector_coefficients::kGeluRange;
using vector_coefficients::kTanh;

inline __m256 splat(float v) { return _mm256_set1_ps(v); }

// c0 + c1 x + ... + c5 x^5, x2 = x * x (Estrin form: the dependency chains, not the operation count, bound these
// loops).
inline __m256 poly5(__m256 x, __m256 x2, const float* c) {
  const __m256 p01 = _mm256_fmadd_ps(splat(c[1]), x, splat(c[0]));
  const __m256 p23 = _mm256_fmadd_ps(splat(c[3]), x, splat(c[2]));
  const __m256 p45 = _mm256_fmadd_ps(splat(c[5]), x, splat(c[4]));
  return _mm256_fmadd_ps(_mm256_fmadd_ps(p45, x2, p23), x2, p01);
}

// c0 + c1 x + c2 x^2 + c3 x^3, x2 = x * x (poly5 with c4 = c5 = 0, operation for operation).
inline __m256 poly3(__m256 x, __m256 x2, const float* c) {
  const auto p01 = _mm256_fmadd_ps(splat(c[1]), x, splat(c[0]));
  return _mm256_fmadd_ps(_mm256_fmadd_ps(splat(c[3]), x, splat(c[2])), x2, p01);
}

// 2^k for integer lanes k in [-126, 127].
inline __m256 pow2(__m256i k) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

// exp(x) for x in [-104, 89] or NaN: x = n ln2 + r, |r| <= ln2 / 2 (ln2 split so that n * kLn2Hi is exact),
// 1 + r + r^2 P(r), times 2^(n/2) and 2^(n - n/2): both halves are normal numbers, and only the second product
// rounds, so subnormal results and overflow to inf are right. A NaN lane stays NaN through p.
inline __m256 exp_in_range(__m256 x) {
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, splat(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, splat(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, splat(-2.12194440e-4f), r);
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 p = _mm256_fmadd_ps(poly5(r, r2, kExp), r2, _mm256_add_ps(r, splat(1.0f)));
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i half = _mm256_srai_epi32(ni, 1);
  return _mm256_mul_ps(_mm256_mul_ps(p, pow2(half)), pow2(_mm256_sub_epi32(ni, half)));
}

// exp(x) for x in [-87, 88], where the result and 2^n are normal numbers (NaN propagates through p): the same
// polynomial as exp_in_range, with n rounded by adding 1.5 * 2^23 + 127, whose low mantissa bits are then n + 127,
// the exponent field of 2^n. Fewer instructions than exp_in_range, for erf's and Gelu's bounded arguments.
inline __m256 exp_normal(__m256 x) {
  const __m256 magic = splat(12582912.0f + 127.0f);
  const __m256 shifted = _mm256_fmadd_ps(x, splat(1.44269504088896341f), magic);
  const __m256 n = _mm256_sub_ps(shifted, magic);
  __m256 r = _mm256_fnmadd_ps(n, splat(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, splat(-2.12194440e-4f), r);
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 p = _mm256_fmadd_ps(poly5(r, r2, kExp), r2, _mm256_add_ps(r, splat(1.0f)));
  return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(shifted), 23)));
}

// exp(x) for any x; NaN propagates (max and min return their second operand when it is NaN).
inline __m256 exp(__m256 x) { return exp_in_range(_mm256_min_ps(splat(89.0f), _mm256_max_ps(splat(-104.0f), x))); }

inline __m256 abs(__m256 x) { return _mm256_andnot_ps(splat(-0.0f), x); }

inline __m256 copy_sign(__m256 magnitude, __m256 sign_of) {
  return _mm256_or_ps(magnitude, _mm256_and_ps(sign_of, splat(-0.0f)));
}

// tanh, as the portable tanh_one computes it: |x| < 0.625: x + x z P(z), z = x^2; beyond,
// 1 - 2 / (exp(2|x|) + 1) with x's sign. NaN stays NaN in the second form.
inline __m256 tanh(__m256 x) {
  const __m256 ax = abs(x);
  const __m256 z = _mm256_mul_ps(x, x);
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(x, z), poly5(z, _mm256_mul_ps(z, z), kTanh), x);
  const __m256 large = _mm256_sub_ps(
      splat(1.0f), _mm256_div_ps(splat(2.0f), _mm256_add_ps(exp(_mm256_add_ps(ax, ax)), splat(1.0f))));
  return _mm256_blendv_ps(copy_sign(large, x), small, _mm256_cmp_ps(ax, splat(0.625f), _CMP_LT_OQ));
}

// 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, e = exp(-|x|) <= 1: for large negative x the result is about
// e itself, and dividing into e keeps exp's error instead of inverting 1 + exp(-x).
inline __m256 sigmoid(__m256 x) {
  const __m256 e = exp(_mm256_sub_ps(_mm256_setzero_ps(), abs(x)));
  const __m256 numerator = _mm256_blendv_ps(splat(1.0f), e, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  return _mm256_div_ps(numerator, _mm256_add_ps(splat(1.0f), e));
}

// erf, as the portable erf_one computes it: |x| < 1: x P(x^2); 1 <= |x| < 4: 1 - exp(-x^2) Q(1/|x|); beyond, +-1.
inline __m256 erf(__m256 x) {
  const __m256 ax = abs(x);
  const __m256 z = _mm256_mul_ps(x, x);
  const __m256 z2 = _mm256_mul_ps(z, z);
  const __m256 p = _mm256_fmadd_ps(_mm256_mul_ps(splat(kErfSmall[6]), z2), _mm256_mul_ps(z2, z2),
                                   poly5(z, z2, kErfSmall));
  const __m256 small = _mm256_mul_ps(x, p);
  const __m256 a = _mm256_min_ps(splat(4.0f), _mm256_max_ps(splat(1.0f), ax));  // NaN lanes are replaced below
  const __m256 u = _mm256_div_ps(splat(1.0f), a);
  const __m256 u2 = _mm256_mul_ps(u, u);
  const __m256 q_low = poly5(u, u2, kErfLarge);
  const __m256 q_high =
      _mm256_fmadd_ps(_mm256_fmadd_ps(splat(kErfLarge[8]), u, splat(kErfLarge[7])), u, splat(kErfLarge[6]));
  const __m256 q = _mm256_fmadd_ps(q_high, _mm256_mul_ps(_mm256_mul_ps(u2, u2), u2), q_low);
  const __m256 large =
      _mm256_fnmadd_ps(exp_normal(_mm256_mul_ps(a, _mm256_sub_ps(_mm256_setzero_ps(), a))), q, splat(1.0f));
  const __m256 use_small = _mm256_cmp_ps(ax, splat(1.0f), _CMP_LT_OQ);
  const __m256 is_nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  return _mm256_blendv_ps(copy_sign(large, x), _mm256_blendv_ps(small, x, is_nan), _mm256_or_ps(use_small, is_nan));
}

// 2^y for y in [-126, 127] (NaN propagates through p): y = n + f, |f| <= 1/2, with n rounded by adding
// 1.5 * 2^23 + 127 (whose low mantissa bits are then n + 127, the exponent field of 2^n), and exp(f ln2) by the
// exp polynomial.
inline __m256 exp2_normal(__m256 y) {
  const __m256 magic = splat(12582912.0f + 127.0f);
  const __m256 shifted = _mm256_add_ps(y, magic);
  const __m256 r = _mm256_mul_ps(_mm256_sub_ps(y, _mm256_sub_ps(shifted, magic)), splat(0.69314718055994531f));
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 p = _mm256_fmadd_ps(poly5(r, r2, kExp), r2, _mm256_add_ps(r, splat(1.0f)));
  return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(shifted), 23)));
}

// Gelu(x) = x / (1 + 2^y), y = x Q(t) (see kGeluLog2Odds). No cancellation for x < 0: 2^y is large there and
// the quotient keeps its relative accuracy. Below -kGeluRange the factor is 0, so x = -inf gives NaN.
inline __m256 gelu_erf(__m256 x) {
  const __m256 clamped = _mm256_min_ps(splat(kGeluRange), _mm256_max_ps(splat(-kGeluRange), x));  // NaN stays NaN
  const __m256 t = _mm256_fmsub_ps(_mm256_mul_ps(clamped, clamped), splat(2.0f / (kGeluRange * kGeluRange)),
                                   splat(1.0f));
  const __m256 t2 = _mm256_mul_ps(t, t);
  const __m256 low = _mm256_fmadd_ps(_mm256_fmadd_ps(splat(kGeluLog2Odds[3]), t, splat(kGeluLog2Odds[2])), t2,
                                     _mm256_fmadd_ps(splat(kGeluLog2Odds[1]), t, splat(kGeluLog2Odds[0])));
  const __m256 high = _mm256_fmadd_ps(splat(kGeluLog2Odds[6]), t2,
                                      _mm256_fmadd_ps(splat(kGeluLog2Odds[5]), t, splat(kGeluLog2Odds[4])));
  const __m256 y = _mm256_mul_ps(clamped, _mm256_fmadd_ps(high, _mm256_mul_ps(t2, t2), low));  // |y| <= 26
  const __m256 factor = _mm256_div_ps(splat(1.0f), _mm256_add_ps(splat(1.0f), exp2_normal(y)));
  const __m256 vanishing = _mm256_cmp_ps(x, splat(-kGeluRange), _CMP_LT_OQ);
  return _mm256_mul_ps(x, _mm256_andnot_ps(vanishing, factor));
}

// 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2 / pi) (x + 0.044715 x^3): no cancellation for x < 0.
inline __m256 gelu_tanh(__m256 x) {
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 minus_two_u = _mm256_mul_ps(_mm256_mul_ps(x, splat(-2.0f * 0.79788456080286536f)),
                                           _mm256_fmadd_ps(x2, splat(0.044715f), splat(1.0f)));
  return _mm256_mul_ps(x, _mm256_div_ps(splat(1.0f), _mm256_add_ps(exp(minus_two_u), splat(1.0f))));
}

// out[i] = f(in[i]) for i < n, two vectors per step (independent chains overlap); the tail is masked.
template <class F>
inline void map(const float* in, float* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(in + i);
    const __m256 b = _mm256_loadu_ps(in + i + 8);
    _mm256_storeu_ps(out + i, f(a));
    _mm256_storeu_ps(out + i + 8, f(b));
  }
  for (; i < n; i += 8) {
    const __m256i m = first_lanes(n - i);
    _mm256_maskstore_ps(out + i, m, f(_mm256_maskload_ps(in + i, m)));
  }
}

}  // namespace nxrt::cpu::avx2_math
