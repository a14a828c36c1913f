// AVX2 + FMA GEMM micro-kernels: the accumulators live in 12 ymm registers, B is read two vectors per k step
// and each A element is broadcast once. Built with -mavx2 -mfma on x86-64 only (see CMakeLists.txt).
#include "ep/cpu/microkernels/gemm_microkernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace nxrt::cpu {

void f32_gemm_6x16__avx2(int64_t kc, const float* a, const float* b, float* acc) {
  __m256 c0l = _mm256_setzero_ps(), c0h = _mm256_setzero_ps(), c1l = _mm256_setzero_ps(), c1h = _mm256_setzero_ps();
  __m256 c2l = _mm256_setzero_ps(), c2h = _mm256_setzero_ps(), c3l = _mm256_setzero_ps(), c3h = _mm256_setzero_ps();
  __m256 c4l = _mm256_setzero_ps(), c4h = _mm256_setzero_ps(), c5l = _mm256_setzero_ps(), c5h = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 bl = _mm256_loadu_ps(b);
    const __m256 bh = _mm256_loadu_ps(b + 8);
    __m256 x = _mm256_broadcast_ss(a);
    c0l = _mm256_fmadd_ps(x, bl, c0l);
    c0h = _mm256_fmadd_ps(x, bh, c0h);
    x = _mm256_broadcast_ss(a + 1);
    c1l = _mm256_fmadd_ps(x, bl, c1l);
    c1h = _mm256_fmadd_ps(x, bh, c1h);
    x = _mm256_broadcast_ss(a + 2);
    c2l = _mm256_fmadd_ps(x, bl, c2l);
    c2h = _mm256_fmadd_ps(x, bh, c2h);
    x = _mm256_broadcast_ss(a + 3);
    c3l = _mm256_fmadd_ps(x, bl, c3l);
    c3h = _mm256_fmadd_ps(x, bh, c3h);
    x = _mm256_broadcast_ss(a + 4);
    c4l = _mm256_fmadd_ps(x, bl, c4l);
    c4h = _mm256_fmadd_ps(x, bh, c4h);
    x = _mm256_broadcast_ss(a + 5);
    c5l = _mm256_fmadd_ps(x, bl, c5l);
    c5h = _mm256_fmadd_ps(x, bh, c5h);
    a += 6;
    b += 16;
  }
  _mm256_storeu_ps(acc + 0, c0l), _mm256_storeu_ps(acc + 8, c0h);
  _mm256_storeu_ps(acc + 16, c1l), _mm256_storeu_ps(acc + 24, c1h);
  _mm256_storeu_ps(acc + 32, c2l), _mm256_storeu_ps(acc + 40, c2h);
  _mm256_storeu_ps(acc + 48, c3l), _mm256_storeu_ps(acc + 56, c3h);
  _mm256_storeu_ps(acc + 64, c4l), _mm256_storeu_ps(acc + 72, c4h);
  _mm256_storeu_ps(acc + 80, c5l), _mm256_storeu_ps(acc + 88, c5h);
}

void f64_gemm_6x8__avx2(int64_t kc, const double* a, const double* b, double* acc) {
  __m256d c0l = _mm256_setzero_pd(), c0h = _mm256_setzero_pd(), c1l = _mm256_setzero_pd(), c1h = _mm256_setzero_pd();
  __m256d c2l = _mm256_setzero_pd(), c2h = _mm256_setzero_pd(), c3l = _mm256_setzero_pd(), c3h = _mm256_setzero_pd();
  __m256d c4l = _mm256_setzero_pd(), c4h = _mm256_setzero_pd(), c5l = _mm256_setzero_pd(), c5h = _mm256_setzero_pd();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256d bl = _mm256_loadu_pd(b);
    const __m256d bh = _mm256_loadu_pd(b + 4);
    __m256d x = _mm256_broadcast_sd(a);
    c0l = _mm256_fmadd_pd(x, bl, c0l);
    c0h = _mm256_fmadd_pd(x, bh, c0h);
    x = _mm256_broadcast_sd(a + 1);
    c1l = _mm256_fmadd_pd(x, bl, c1l);
    c1h = _mm256_fmadd_pd(x, bh, c1h);
    x = _mm256_broadcast_sd(a + 2);
    c2l = _mm256_fmadd_pd(x, bl, c2l);
    c2h = _mm256_fmadd_pd(x, bh, c2h);
    x = _mm256_broadcast_sd(a + 3);
    c3l = _mm256_fmadd_pd(x, bl, c3l);
    c3h = _mm256_fmadd_pd(x, bh, c3h);
    x = _mm256_broadcast_sd(a + 4);
    c4l = _mm256_fmadd_pd(x, bl, c4l);
    c4h = _mm256_fmadd_pd(x, bh, c4h);
    x = _mm256_broadcast_sd(a + 5);
    c5l = _mm256_fmadd_pd(x, bl, c5l);
    c5h = _mm256_fmadd_pd(x, bh, c5h);
    a += 6;
    b += 8;
  }
  _mm256_storeu_pd(acc + 0, c0l), _mm256_storeu_pd(acc + 4, c0h);
  _mm256_storeu_pd(acc + 8, c1l), _mm256_storeu_pd(acc + 12, c1h);
  _mm256_storeu_pd(acc + 16, c2l), _mm256_storeu_pd(acc + 20, c2h);
  _mm256_storeu_pd(acc + 24, c3l), _mm256_storeu_pd(acc + 28, c3h);
  _mm256_storeu_pd(acc + 32, c4l), _mm256_storeu_pd(acc + 36, c4h);
  _mm256_storeu_pd(acc + 40, c5l), _mm256_storeu_pd(acc + 44, c5h);
}

}  // namespace nxrt::cpu

#endif
