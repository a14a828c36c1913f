// AVX2 + FMA GEMM tile kernels: f32 6x16 and f64 6x8 (gemm_tile_kernel.h over ymm registers), taking A and B
// with any strides (packed or in place) and updating C in place with the whole epilogue in registers (alpha, beta,
// biases, residual, Relu / LeakyRelu / Clip). A full tile uses 12 accumulators, two B vectors and one broadcast:
// 15 of the 16 ymm registers. Built with -mavx2 -mfma on x86-64 only (see CMakeLists.txt).
#include "ep/cpu/microkernels/gemm_microkernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "ep/cpu/microkernels/avx2/vector_lanes_avx2.h"
#include "ep/cpu/microkernels/avx2/vector_math_avx2.h"
#include "ep/cpu/microkernels/gemm_tile_kernel.h"

namespace nxrt::cpu {

namespace {

template <class T>
struct Vec;

template <>
struct Vec<float> {
  using Reg = __m256;
  using Mask = __m256i;
  static constexpr int kLanes = 8;
  static constexpr int kDualSetRows = 3;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg set1(float x) { return _mm256_set1_ps(x); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg load(Mask m, const float* p) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static void store(Mask m, float* p, Reg v) { _mm256_maskstore_ps(p, m, v); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm256_max_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm256_min_ps(a, b); }
  static Reg scale_negative(Reg v, Reg slope) {
    return _mm256_blendv_ps(v, _mm256_mul_ps(v, slope), _mm256_cmp_ps(v, zero(), _CMP_LT_OQ));
  }
  // Lanes below n set (n may be <= 0 or >= kLanes).
  static Mask lanes(int64_t n) { return avx2_lanes::first_lanes(n); }
};

template <>
struct Vec<double> {
  using Reg = __m256d;
  using Mask = __m256i;
  static constexpr int kLanes = 4;
  static constexpr int kDualSetRows = 3;
  static Reg zero() { return _mm256_setzero_pd(); }
  static Reg set1(double x) { return _mm256_set1_pd(x); }
  static Reg load(const double* p) { return _mm256_loadu_pd(p); }
  static Reg load(Mask m, const double* p) { return _mm256_maskload_pd(p, m); }
  static void store(double* p, Reg v) { _mm256_storeu_pd(p, v); }
  static void store(Mask m, double* p, Reg v) { _mm256_maskstore_pd(p, m, v); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_pd(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm256_add_pd(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm256_mul_pd(a, b); }
  static Reg max(Reg a, Reg b) { return _mm256_max_pd(a, b); }
  static Reg min(Reg a, Reg b) { return _mm256_min_pd(a, b); }
  static Reg scale_negative(Reg v, Reg slope) {
    return _mm256_blendv_pd(v, _mm256_mul_pd(v, slope), _mm256_cmp_pd(v, zero(), _CMP_LT_OQ));
  }
  static Mask lanes(int64_t n) {
    const int64_t count = n <= 0 ? 0 : n >= kLanes ? kLanes : n;
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(count), _mm256_setr_epi64x(0, 1, 2, 3));
  }
};

// C(r, c) = f(C(r, c)) over the tile, which its kernel has just stored (in L1).
template <class F>
void apply_to_tile(const GemmTile<float>& t, F f) {
  for (int64_t r = 0; r < t.rows; ++r) avx2_math::map(t.c + r * t.ldc, t.c + r * t.ldc, t.cols, f);
}

// The tile's Gelu form, which the tile kernels leave to their entry points.
void apply_tile_gelu(const GemmTile<float>& t) {
  if (t.activation == TileActivation::kGeluErf) {
    apply_to_tile(t, avx2_math::gelu_erf);
  } else if (t.activation == TileActivation::kGeluTanh) {
    apply_to_tile(t, avx2_math::gelu_tanh);
  }
}

}  // namespace

void f32_gemm_6x16__avx2(const GemmTile<float>& tile) {
  gemm_tile::run_tile<Vec<float>, kAvx2F32TileM>(tile);
  apply_tile_gelu(tile);
}

void f32_gemm_row_strips__avx2(const GemmTile<float>& tile, int64_t strip_stride) {
  gemm_tile::row_strips_kernel<Vec<float>, float, kAvx2F32RowStrips>(tile, strip_stride);
  apply_tile_gelu(tile);
}

void f32_pack_a_6__avx2(const float* a, int64_t lda, int64_t rows, int64_t kc, float* dst) {
  constexpr int kTileM = kAvx2F32TileM;
  static_assert(kTileM == 6);
  for (int64_t pb = 0; pb < kc; pb += 8) {
    const int64_t depth = kc - pb < 8 ? kc - pb : 8;
    const __m256i depth_lanes = avx2_lanes::first_lanes(depth);
    __m256 block[8];
    for (int r = 0; r < 8; ++r) {
      const float* row = a + r * lda + pb;
      block[r] = r >= rows || r >= kTileM ? _mm256_setzero_ps()
                 : depth == 8            ? _mm256_loadu_ps(row)
                                         : _mm256_maskload_ps(row, depth_lanes);
    }
    avx2_lanes::transpose_8x8(block);
    // Column c's six rows: lanes 0-3, then 4-5 (plain stores; masked ones are microcoded on AMD).
    for (int64_t c = 0; c < depth; ++c) {
      float* out = dst + (pb + c) * kTileM;
      _mm_storeu_ps(out, _mm256_castps256_ps128(block[c]));
      _mm_storel_pi(reinterpret_cast<__m64*>(out + 4), _mm256_extractf128_ps(block[c], 1));
    }
  }
}

void f64_gemm_6x8__avx2(const GemmTile<double>& tile) { gemm_tile::run_tile<Vec<double>, kAvx2F64TileM>(tile); }

void f32_dot_rows__avx2(const float* a, const float* b, int64_t ldb, int64_t n, int64_t k, float* c) {
  const int64_t full = k / 8 * 8;
  // The products past the last full vector of k, added to a row's lane sum.
  const auto tail = [&](const float* r) {
    float total = 0.0f;
    for (int64_t p = full; p < k; ++p) total += a[p] * r[p];
    return total;
  };
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {  // four rows of B share each load of A
    const float* r = b + j * ldb;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    for (int64_t p = 0; p < full; p += 8) {
      const __m256 x = _mm256_loadu_ps(a + p);
      s0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r + p), s0);
      s1 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r + ldb + p), s1);
      s2 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r + 2 * ldb + p), s2);
      s3 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r + 3 * ldb + p), s3);
    }
    // [sum s0, sum s1, sum s2, sum s3]: pairwise horizontal adds, then the two 128-bit halves.
    const __m256 pairs = _mm256_hadd_ps(_mm256_hadd_ps(s0, s1), _mm256_hadd_ps(s2, s3));
    __m128 sums = _mm_add_ps(_mm256_castps256_ps128(pairs), _mm256_extractf128_ps(pairs, 1));
    if (full < k) sums = _mm_add_ps(sums, _mm_setr_ps(tail(r), tail(r + ldb), tail(r + 2 * ldb), tail(r + 3 * ldb)));
    _mm_storeu_ps(c + j, sums);
  }
  for (; j < n; ++j) {
    const float* r = b + j * ldb;
    __m256 s0 = _mm256_setzero_ps();
    for (int64_t p = 0; p < full; p += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + p), _mm256_loadu_ps(r + p), s0);
    c[j] = avx2_lanes::sum_lanes(s0) + tail(r);
  }
}

}  // namespace nxrt::cpu

#endif
