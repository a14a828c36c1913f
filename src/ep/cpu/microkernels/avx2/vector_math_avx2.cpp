// Vector math compiled with -mavx2 -mfma: the portable loops of vector_math_loops.h, with the transcendental
// functions, the softmax pieces and the LayerNormalization row functions replaced by the register functions of
// vector_math_avx2.h (the compiler's vectorisation of the 16-lane portable loops splits every value over two
// registers and spills).
#define NXRT_VECTOR_MATH_ISA avx2
#include "ep/cpu/microkernels/avx2/vector_math_avx2.h"

#include "ep/cpu/microkernels/vector_math_loops.h"

namespace nxrt::cpu {

namespace {

namespace math = avx2_math;

void exp_avx2(const float* in, float* out, int64_t n) { math::map(in, out, n, math::exp); }
void tanh_avx2(const float* in, float* out, int64_t n) { math::map(in, out, n, math::tanh); }
void sigmoid_avx2(const float* in, float* out, int64_t n) { math::map(in, out, n, math::sigmoid); }
void erf_avx2(const float* in, float* out, int64_t n) { math::map(in, out, n, math::erf); }
void gelu_erf_avx2(const float* in, float* out, int64_t n) { math::map(in, out, n, math::gelu_erf); }
void gelu_tanh_avx2(const float* in, float* out, int64_t n) { math::map(in, out, n, math::gelu_tanh); }
void swish_avx2(const float* in, float* out, int64_t n, float alpha) {
  const __m256 a = _mm256_set1_ps(alpha);
  math::map(in, out, n, [a](__m256 x) { return _mm256_mul_ps(x, math::sigmoid(_mm256_mul_ps(a, x))); });
}

float exp_shifted_sum_avx2(const float* in, float* out, int64_t n, float shift) {
  const __m256 minus_shift = _mm256_set1_ps(-shift);
  __m256 sum0 = _mm256_setzero_ps();
  __m256 sum1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 e0 = math::exp(_mm256_add_ps(_mm256_loadu_ps(in + i), minus_shift));
    const __m256 e1 = math::exp(_mm256_add_ps(_mm256_loadu_ps(in + i + 8), minus_shift));
    _mm256_storeu_ps(out + i, e0);
    _mm256_storeu_ps(out + i + 8, e1);
    sum0 = _mm256_add_ps(sum0, e0);
    sum1 = _mm256_add_ps(sum1, e1);
  }
  for (; i < n; i += 8) {
    const __m256i m = math::first_lanes(n - i);
    const __m256 e = math::exp(_mm256_add_ps(_mm256_maskload_ps(in + i, m), minus_shift));
    _mm256_maskstore_ps(out + i, m, e);
    sum0 = _mm256_add_ps(sum0, _mm256_and_ps(e, _mm256_castsi256_ps(m)));
  }
  return math::sum_lanes(_mm256_add_ps(sum0, sum1));
}

// Max over x[0 .. n) skipping NaN (-inf when every value is NaN): _mm256_max_ps returns its second operand, the
// running max, when the first is NaN.
float row_max_avx2(const float* x, int64_t n) {
  const __m256 minus_inf = _mm256_set1_ps(-__builtin_inff());
  __m256 m0 = minus_inf;
  __m256 m1 = minus_inf;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
    m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
  }
  for (; i < n; i += 8) {
    const __m256i m = math::first_lanes(n - i);
    m0 = _mm256_max_ps(_mm256_blendv_ps(minus_inf, _mm256_maskload_ps(x + i, m), _mm256_castsi256_ps(m)), m0);
  }
  return math::max_lanes(_mm256_max_ps(m0, m1));
}

void softmax_row_avx2(const float* in, float* out, int64_t n) {
  const __m256 inverse = _mm256_set1_ps(1.0f / exp_shifted_sum_avx2(in, out, n, row_max_avx2(in, n)));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(out + i), inverse));
  if (i < n) {
    const __m256i m = math::first_lanes(n - i);
    _mm256_maskstore_ps(out + i, m, _mm256_mul_ps(_mm256_maskload_ps(out + i, m), inverse));
  }
}

// Sums of (x - shift) and (x - shift)^2 over x[0 .. n), in float lanes flushed into doubles every 1024 values.
void shifted_sums_avx2(const float* x, int64_t n, float shift, double* sum, double* squares) {
  constexpr int64_t kBlock = 1024;
  const __m256 minus_shift = _mm256_set1_ps(-shift);
  *sum = 0;
  *squares = 0;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = start + kBlock < n ? start + kBlock : n;
    __m256 s0 = _mm256_setzero_ps();
    __m256 s1 = _mm256_setzero_ps();
    __m256 q0 = _mm256_setzero_ps();
    __m256 q1 = _mm256_setzero_ps();
    int64_t i = start;
    for (; i + 16 <= end; i += 16) {
      const __m256 d0 = _mm256_add_ps(_mm256_loadu_ps(x + i), minus_shift);
      const __m256 d1 = _mm256_add_ps(_mm256_loadu_ps(x + i + 8), minus_shift);
      s0 = _mm256_add_ps(s0, d0);
      s1 = _mm256_add_ps(s1, d1);
      q0 = _mm256_fmadd_ps(d0, d0, q0);
      q1 = _mm256_fmadd_ps(d1, d1, q1);
    }
    for (; i < end; i += 8) {
      const __m256i m = math::first_lanes(end - i);
      const __m256 d = _mm256_and_ps(_mm256_add_ps(_mm256_maskload_ps(x + i, m), minus_shift), _mm256_castsi256_ps(m));
      s0 = _mm256_add_ps(s0, d);
      q0 = _mm256_fmadd_ps(d, d, q0);
    }
    *sum += static_cast<double>(math::sum_lanes(_mm256_add_ps(s0, s1)));
    *squares += static_cast<double>(math::sum_lanes(_mm256_add_ps(q0, q1)));
  }
}

void normalize_row_avx2(const float* x, float mean, float inv_std, const float* scale, const float* bias, float* y,
                        int64_t n) {
  const __m256 m = _mm256_set1_ps(mean);
  const __m256 r = _mm256_set1_ps(inv_std);
  const auto one = [&](__m256 xv, __m256 sv, __m256 bv) {
    return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_sub_ps(xv, m), r), sv, bv);
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 b = bias != nullptr ? _mm256_loadu_ps(bias + i) : _mm256_setzero_ps();
    _mm256_storeu_ps(y + i, one(_mm256_loadu_ps(x + i), _mm256_loadu_ps(scale + i), b));
  }
  if (i < n) {
    const __m256i lanes = math::first_lanes(n - i);
    const __m256 b = bias != nullptr ? _mm256_maskload_ps(bias + i, lanes) : _mm256_setzero_ps();
    _mm256_maskstore_ps(y + i, lanes, one(_mm256_maskload_ps(x + i, lanes), _mm256_maskload_ps(scale + i, lanes), b));
  }
}

}  // namespace

VectorMathKernels vector_math_kernels_avx2() {
  VectorMathKernels kernels = avx2::make_kernels();
  kernels.exp = exp_avx2;
  kernels.tanh = tanh_avx2;
  kernels.sigmoid = sigmoid_avx2;
  kernels.erf = erf_avx2;
  kernels.gelu_erf = gelu_erf_avx2;
  kernels.gelu_tanh = gelu_tanh_avx2;
  kernels.swish = swish_avx2;
  kernels.exp_shifted_sum = exp_shifted_sum_avx2;
  kernels.softmax_row = softmax_row_avx2;
  kernels.exp_rows = avx2::exp_rows_with<exp_shifted_sum_avx2, row_max_avx2>;
  kernels.row_moments = avx2::row_moments_with<shifted_sums_avx2>;
  kernels.row_mean_square = avx2::row_mean_square_with<shifted_sums_avx2>;
  kernels.normalize_row = normalize_row_avx2;
  return kernels;
}

}  // namespace nxrt::cpu
