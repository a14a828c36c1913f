// AVX2 + FMA GEMM tile kernels: f32 6x16 and f64 6x8, taking A and B with any strides (packed or in place) and
// updating C in place with the whole epilogue in registers (alpha, beta, biases, residual, Relu / LeakyRelu /
// Clip). The accumulators are 2 * rows ymm registers (12 for a full tile); each k step loads two B vectors and
// broadcasts one A element per row, so a full tile uses 15 of the 16 ymm registers. Tiles with fewer rows run a
// kernel instantiated for that row count; with <= 3 rows the k loop keeps two accumulator sets to hide FMA
// latency (the GEMV case). Partial columns use masked loads and stores, so callers never pad C or B.
// Built with -mavx2 -mfma on x86-64 only (see CMakeLists.txt).
#include "ep/cpu/microkernels/gemm_microkernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <utility>

namespace nxrt::cpu {

namespace {

template <class T>
struct Vec;

template <>
struct Vec<float> {
  using Reg = __m256;
  using Mask = __m256i;
  static constexpr int kLanes = 8;
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
  static Mask lanes(int64_t n) {
    const int count = n <= 0 ? 0 : n >= kLanes ? kLanes : static_cast<int>(n);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
};

template <>
struct Vec<double> {
  using Reg = __m256d;
  using Mask = __m256i;
  static constexpr int kLanes = 4;
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

// max(bound, v) / min(bound, v) return v when v is NaN, matching the scalar forms of the portable tile.
template <class T>
typename Vec<T>::Reg activate(const GemmTile<T>& t, typename Vec<T>::Reg v) {
  using V = Vec<T>;
  switch (t.activation) {
    case TileActivation::kNone: return v;
    case TileActivation::kRelu: return V::max(V::zero(), v);
    case TileActivation::kLeakyRelu: return V::scale_negative(v, V::set1(static_cast<T>(t.activation_alpha)));
    case TileActivation::kClip:
      return V::min(V::set1(static_cast<T>(t.activation_beta)),
                    V::max(V::set1(static_cast<T>(t.activation_alpha)), v));
    default: return v;  // the Gelu forms are never planned for this kernel set (tile_gelu is false)
  }
}

// kMasked: the tile has fewer than two vectors of columns, so B, C, the bias and the residual are read and
// written through lane masks. kOneVector: at most one vector of columns, so the second accumulator column is
// neither computed nor stored.
template <class T, int kRows, bool kUnitRowStride, bool kMasked, bool kOneVector>
void tile_kernel(const GemmTile<T>& t) {
  using V = Vec<T>;
  using Reg = typename V::Reg;
  constexpr int L = V::kLanes;
  constexpr int kSets = kRows <= 3 ? 2 : 1;
  const typename V::Mask m0 = V::lanes(t.cols);
  const typename V::Mask m1 = V::lanes(t.cols - L);
  const auto load0 = [&](const T* p) { return kMasked ? V::load(m0, p) : V::load(p); };
  const auto load1 = [&](const T* p) { return kOneVector ? V::zero() : kMasked ? V::load(m1, p) : V::load(p); };
  Reg c0[kSets][kRows];
  Reg c1[kSets][kRows];
#pragma GCC unroll 8
  for (int s = 0; s < kSets; ++s) {
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) c0[s][r] = c1[s][r] = V::zero();
  }
  // C is read (beta != 0) and written only after the k loop: start bringing its lines in now.
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) _mm_prefetch(reinterpret_cast<const char*>(t.c + r * t.ldc), _MM_HINT_T0);
  const T* a = t.a;
  const T* b = t.b;
  const int64_t rs = kUnitRowStride ? 1 : t.a_row_stride;
  const int64_t ks = t.a_k_stride;
  const int64_t bs = t.b_k_stride;
  int64_t p = 0;
  for (; p + kSets <= t.kc; p += kSets) {
#pragma GCC unroll 2
    for (int s = 0; s < kSets; ++s) {
      const T* bp = b + s * bs;
      const T* ap = a + s * ks;
      const Reg b0 = load0(bp);
      const Reg b1 = load1(bp + L);
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        const Reg x = V::set1(ap[r * rs]);
        c0[s][r] = V::fma(x, b0, c0[s][r]);
        if constexpr (!kOneVector) c1[s][r] = V::fma(x, b1, c1[s][r]);
      }
    }
    a += kSets * ks;
    b += kSets * bs;
  }
  if constexpr (kSets > 1) {
    if (p < t.kc) {
      const Reg b0 = load0(b);
      const Reg b1 = load1(b + L);
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        const Reg x = V::set1(a[r * rs]);
        c0[0][r] = V::fma(x, b0, c0[0][r]);
        if constexpr (!kOneVector) c1[0][r] = V::fma(x, b1, c1[0][r]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      c0[0][r] = V::add(c0[0][r], c0[1][r]);
      c1[0][r] = V::add(c1[0][r], c1[1][r]);
    }
  }
  const bool scale = t.alpha != T{1};
  const Reg alpha = V::set1(t.alpha);
  const Reg beta = V::set1(t.beta);
  Reg bias0 = V::zero();
  Reg bias1 = V::zero();
  if (t.col_bias != nullptr) {
    bias0 = load0(t.col_bias);
    bias1 = load1(t.col_bias + L);
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    T* c = t.c + r * t.ldc;
    Reg v0 = c0[0][r];
    Reg v1 = c1[0][r];
    if (scale) {
      v0 = V::mul(v0, alpha);
      v1 = V::mul(v1, alpha);
    }
    if (t.beta == T{1}) {
      v0 = V::add(v0, load0(c));
      v1 = V::add(v1, load1(c + L));
    } else if (t.beta != T{0}) {
      v0 = V::fma(load0(c), beta, v0);
      v1 = V::fma(load1(c + L), beta, v1);
    }
    v0 = V::add(v0, bias0);
    v1 = V::add(v1, bias1);
    if (t.row_bias != nullptr) {
      const Reg rb = V::set1(t.row_bias[r]);
      v0 = V::add(v0, rb);
      v1 = V::add(v1, rb);
    }
    if (t.residual != nullptr) {
      const T* z = t.residual + r * t.ld_residual;
      v0 = V::add(v0, load0(z));
      v1 = V::add(v1, load1(z + L));
    }
    if (t.activation != TileActivation::kNone) {
      v0 = activate(t, v0);
      v1 = activate(t, v1);
    }
    if constexpr (kMasked) {
      V::store(m0, c, v0);
      if constexpr (!kOneVector) V::store(m1, c + L, v1);
    } else {
      V::store(c, v0);
      V::store(c + L, v1);
    }
  }
}

template <class T, int kRows>
void dispatch_layout(const GemmTile<T>& t) {
  constexpr int kTileN = 2 * Vec<T>::kLanes;
  const bool masked = t.cols < kTileN;
  const bool one_vector = t.cols <= Vec<T>::kLanes;
  if (t.a_row_stride == 1) {
    if (one_vector) return tile_kernel<T, kRows, true, true, true>(t);
    masked ? tile_kernel<T, kRows, true, true, false>(t) : tile_kernel<T, kRows, true, false, false>(t);
  } else {
    if (one_vector) return tile_kernel<T, kRows, false, true, true>(t);
    masked ? tile_kernel<T, kRows, false, true, false>(t) : tile_kernel<T, kRows, false, false, false>(t);
  }
}

template <class T, int... kRows>
void dispatch_rows(const GemmTile<T>& t, std::integer_sequence<int, kRows...>) {
  (void)((t.rows == kRows + 1 ? (dispatch_layout<T, kRows + 1>(t), true) : false) || ...);
}

}  // namespace

void f32_gemm_6x16__avx2(const GemmTile<float>& tile) {
  dispatch_rows(tile, std::make_integer_sequence<int, kAvx2F32TileM>{});
}

void f64_gemm_6x8__avx2(const GemmTile<double>& tile) {
  dispatch_rows(tile, std::make_integer_sequence<int, kAvx2F64TileM>{});
}

}  // namespace nxrt::cpu

#endif
