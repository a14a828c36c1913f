// Vector math compiled for AVX-512 (F, DQ, BW, VL) with 512-bit vectors: the portable loops of
// vector_math_loops.h, with the transcendental functions, Swish, the softmax pieces and the LayerNormalization row
// functions replaced by the register functions of vector_math_avx512.h (scalef, a reciprocal estimate and Estrin
// polynomials: 1.5-2x the vectorised loops).
#define NXRT_VECTOR_MATH_ISA avx512
#include "ep/cpu/microkernels/avx512/vector_math_avx512.h"

#include "ep/cpu/microkernels/vector_math_loops.h"

namespace nxrt::cpu {

namespace {

namespace math = avx512_math;

void exp_avx512(const float* in, float* out, int64_t n) { math::map(in, out, n, math::exp); }
void erf_avx512(const float* in, float* out, int64_t n) { math::map(in, out, n, math::erf); }
void tanh_avx512(const float* in, float* out, int64_t n) { math::map(in, out, n, math::tanh); }
void sigmoid_avx512(const float* in, float* out, int64_t n) { math::map(in, out, n, math::sigmoid); }
void gelu_erf_avx512(const float* in, float* out, int64_t n) { math::map(in, out, n, math::gelu_erf); }
void gelu_tanh_avx512(const float* in, float* out, int64_t n) { math::map(in, out, n, math::gelu_tanh); }
void swish_avx512(const float* in, float* out, int64_t n, float alpha) {
  const __m512 a = _mm512_set1_ps(alpha);
  math::map(in, out, n, [a](__m512 x) { return _mm512_mul_ps(x, math::sigmoid(_mm512_mul_ps(a, x))); });
}

float exp_shifted_sum_avx512(const float* in, float* out, int64_t n, float shift) {
  const __m512 minus_shift = _mm512_set1_ps(-shift);
  __m512 sum0 = _mm512_setzero_ps();
  __m512 sum1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 e0 = math::exp(_mm512_add_ps(_mm512_loadu_ps(in + i), minus_shift));
    const __m512 e1 = math::exp(_mm512_add_ps(_mm512_loadu_ps(in + i + 16), minus_shift));
    _mm512_storeu_ps(out + i, e0);
    _mm512_storeu_ps(out + i + 16, e1);
    sum0 = _mm512_add_ps(sum0, e0);
    sum1 = _mm512_add_ps(sum1, e1);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = first_lanes(n - i);
    const __m512 e = math::exp(_mm512_add_ps(_mm512_maskz_loadu_ps(m, in + i), minus_shift));
    _mm512_mask_storeu_ps(out + i, m, e);
    sum0 = _mm512_mask_add_ps(sum0, m, sum0, e);
  }
  return sum_lanes(_mm512_add_ps(sum0, sum1));
}

// Max over x[0 .. n) skipping NaN (-inf when every value is NaN): _mm512_max_ps returns its second operand, the
// running max, when the first is NaN.
float row_max_avx512(const float* x, int64_t n) {
  const __m512 minus_inf = _mm512_set1_ps(-__builtin_inff());
  __m512 m0 = minus_inf;
  __m512 m1 = minus_inf;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm512_max_ps(_mm512_loadu_ps(x + i), m0);
    m1 = _mm512_max_ps(_mm512_loadu_ps(x + i + 16), m1);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = first_lanes(n - i);
    m0 = _mm512_mask_max_ps(m0, m, _mm512_maskz_loadu_ps(m, x + i), m0);
  }
  return max_lanes(_mm512_max_ps(m0, m1));
}

void softmax_row_avx512(const float* in, float* out, int64_t n) {
  const __m512 inverse = _mm512_set1_ps(1.0f / exp_shifted_sum_avx512(in, out, n, row_max_avx512(in, n)));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = first_lanes(n - i);
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, out + i), inverse));
  }
}

// Sums of (x - shift) and (x - shift)^2 over x[0 .. n), in float lanes flushed into doubles every 1024 values.
void shifted_sums_avx512(const float* x, int64_t n, float shift, double* sum, double* squares) {
  constexpr int64_t kBlock = 1024;
  const __m512 minus_shift = _mm512_set1_ps(-shift);
  *sum = 0;
  *squares = 0;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = start + kBlock < n ? start + kBlock : n;
    __m512 s0 = _mm512_setzero_ps();
    __m512 s1 = _mm512_setzero_ps();
    __m512 q0 = _mm512_setzero_ps();
    __m512 q1 = _mm512_setzero_ps();
    int64_t i = start;
    for (; i + 32 <= end; i += 32) {
      const __m512 d0 = _mm512_add_ps(_mm512_loadu_ps(x + i), minus_shift);
      const __m512 d1 = _mm512_add_ps(_mm512_loadu_ps(x + i + 16), minus_shift);
      s0 = _mm512_add_ps(s0, d0);
      s1 = _mm512_add_ps(s1, d1);
      q0 = _mm512_fmadd_ps(d0, d0, q0);
      q1 = _mm512_fmadd_ps(d1, d1, q1);
    }
    for (; i < end; i += 16) {
      const __mmask16 m = first_lanes(end - i);
      const __m512 d = _mm512_maskz_add_ps(m, _mm512_maskz_loadu_ps(m, x + i), minus_shift);
      s0 = _mm512_add_ps(s0, d);
      q0 = _mm512_fmadd_ps(d, d, q0);
    }
    *sum += static_cast<double>(sum_lanes(_mm512_add_ps(s0, s1)));
    *squares += static_cast<double>(sum_lanes(_mm512_add_ps(q0, q1)));
  }
}

void normalize_row_avx512(const float* x, float mean, float inv_std, const float* scale, const float* bias, float* y,
                          int64_t n) {
  const __m512 m = _mm512_set1_ps(mean);
  const __m512 r = _mm512_set1_ps(inv_std);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = first_lanes(n - i);
    const __m512 centred = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, x + i), m), r);
    const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(lanes, bias + i) : _mm512_setzero_ps();
    _mm512_mask_storeu_ps(y + i, lanes, _mm512_fmadd_ps(centred, _mm512_maskz_loadu_ps(lanes, scale + i), b));
  }
}

}  // namespace

VectorMathKernels vector_math_kernels_avx512() {
  VectorMathKernels kernels = avx512::make_kernels();
  kernels.exp = exp_avx512;
  kernels.erf = erf_avx512;
  kernels.tanh = tanh_avx512;
  kernels.sigmoid = sigmoid_avx512;
  kernels.gelu_erf = gelu_erf_avx512;
  kernels.gelu_tanh = gelu_tanh_avx512;
  kernels.swish = swish_avx512;
  kernels.exp_shifted_sum = exp_shifted_sum_avx512;
  kernels.softmax_row = softmax_row_avx512;
  kernels.exp_rows = avx512::exp_rows_with<exp_shifted_sum_avx512, row_max_avx512>;
  kernels.row_moments = avx512::row_moments_with<shifted_sums_avx512>;
  kernels.row_mean_square = avx512::row_mean_square_with<shifted_sums_avx512>;
  kernels.normalize_row = normalize_row_avx512;
  return kernels;
}

}  // namespace nxrt::cpu
