// AVX-512 GEMM tile kernels: f32 14x32 and f64 14x16. The accumulators are 2 * rows zmm registers (28 for a
// full tile); each k step loads two B vectors and broadcasts one A element per row. Tiles with fewer rows run a
// kernel instantiated for that row count, and partial columns use masked loads and stores, so callers never
// pad C. With <= 4 rows the k loop keeps two accumulator sets to hide FMA latency (the GEMV case). The f32 kernel
// applies the Gelu forms to its stored tile, read back from L1.
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma on x86-64 only (see CMakeLists.txt).
#include "ep/cpu/microkernels/gemm_microkernels.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>

#include <utility>

#include "ep/cpu/microkernels/avx512/vector_lanes_avx512.h"
#include "ep/cpu/microkernels/avx512/vector_math_avx512.h"

// GCC 12 reports the undefined pass-through operand of _mm512_max_pd/_mm512_min_pd as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace nxrt::cpu {

namespace {

template <class T>
struct Vec;

template <>
struct Vec<float> {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg set1(float x) { return _mm512_set1_ps(x); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(Mask m, float* p, Reg v) { _mm512_mask_storeu_ps(p, m, v); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm512_max_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm512_min_ps(a, b); }
  static Reg scale_negative(Reg v, Reg slope) {
    return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero(), _CMP_LT_OQ), v, slope);
  }
  static Mask lanes(int64_t n) {
    return n <= 0 ? Mask{0} : n >= kLanes ? Mask(0xFFFF) : static_cast<Mask>((1u << n) - 1);
  }
};

template <>
struct Vec<double> {
  using Reg = __m512d;
  using Mask = __mmask8;
  static constexpr int kLanes = 8;
  static Reg zero() { return _mm512_setzero_pd(); }
  static Reg set1(double x) { return _mm512_set1_pd(x); }
  static Reg load(const double* p) { return _mm512_loadu_pd(p); }
  static Reg load(Mask m, const double* p) { return _mm512_maskz_loadu_pd(m, p); }
  static void store(Mask m, double* p, Reg v) { _mm512_mask_storeu_pd(p, m, v); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_pd(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_pd(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_pd(a, b); }
  static Reg max(Reg a, Reg b) { return _mm512_max_pd(a, b); }
  static Reg min(Reg a, Reg b) { return _mm512_min_pd(a, b); }
  static Reg scale_negative(Reg v, Reg slope) {
    return _mm512_mask_mul_pd(v, _mm512_cmp_pd_mask(v, zero(), _CMP_LT_OQ), v, slope);
  }
  static Mask lanes(int64_t n) {
    return n <= 0 ? Mask{0} : n >= kLanes ? Mask(0xFF) : static_cast<Mask>((1u << n) - 1);
  }
};

// max(bound, v) / min(bound, v) return v when v is NaN, matching apply_activation's scalar forms.
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
    default: return v;  // the Gelu forms: after the stores (f32_gemm_14x32__avx512)
  }
}

// kOneVector: the tile has at most one vector of columns (a last strip of N), so the second accumulator column is
// neither computed nor stored.
template <class T, int kRows, bool kUnitRowStride, bool kMaskedB, bool kOneVector>
void tile_kernel(const GemmTile<T>& t) {
  using V = Vec<T>;
  using Reg = typename V::Reg;
  constexpr int L = V::kLanes;
  constexpr int kSets = kRows <= 4 ? 2 : 1;
  const typename V::Mask m0 = V::lanes(t.cols);
  const typename V::Mask m1 = V::lanes(t.cols - L);
  Reg c0[kSets][kRows];
  Reg c1[kSets][kRows];
#pragma GCC unroll 16
  for (int s = 0; s < kSets; ++s) {
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) c0[s][r] = c1[s][r] = V::zero();
  }
  // C is read (beta != 0) and written only after the k loop: start bringing its lines in now.
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(t.c + r * t.ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(t.c + r * t.ldc + L), _MM_HINT_T0);
  }
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
      const Reg b0 = kMaskedB ? V::load(m0, bp) : V::load(bp);
      const Reg b1 = kOneVector ? V::zero() : kMaskedB ? V::load(m1, bp + L) : V::load(bp + L);
#pragma GCC unroll 16
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
      const Reg b0 = kMaskedB ? V::load(m0, b) : V::load(b);
      const Reg b1 = kOneVector ? V::zero() : kMaskedB ? V::load(m1, b + L) : V::load(b + L);
#pragma GCC unroll 16
      for (int r = 0; r < kRows; ++r) {
        const Reg x = V::set1(a[r * rs]);
        c0[0][r] = V::fma(x, b0, c0[0][r]);
        if constexpr (!kOneVector) c1[0][r] = V::fma(x, b1, c1[0][r]);
      }
    }
#pragma GCC unroll 16
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
    bias0 = V::load(m0, t.col_bias);
    bias1 = V::load(m1, t.col_bias + L);
  }
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) {
    T* c = t.c + r * t.ldc;
    Reg v0 = c0[0][r];
    Reg v1 = c1[0][r];
    if (scale) {
      v0 = V::mul(v0, alpha);
      v1 = V::mul(v1, alpha);
    }
    if (t.beta == T{1}) {
      v0 = V::add(v0, V::load(m0, c));
      v1 = V::add(v1, V::load(m1, c + L));
    } else if (t.beta != T{0}) {
      v0 = V::fma(V::load(m0, c), beta, v0);
      v1 = V::fma(V::load(m1, c + L), beta, v1);
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
      v0 = V::add(v0, V::load(m0, z));
      if constexpr (!kOneVector) v1 = V::add(v1, V::load(m1, z + L));
    }
    if (t.activation != TileActivation::kNone) {
      v0 = activate(t, v0);
      v1 = activate(t, v1);
    }
    V::store(m0, c, v0);
    if constexpr (!kOneVector) V::store(m1, c + L, v1);
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

// C(r, c) = f(C(r, c)) over the tile, which its kernel has just stored (in L1).
template <class F>
void apply_to_tile(const GemmTile<float>& t, F f) {
  for (int64_t r = 0; r < t.rows; ++r) avx512_math::map(t.c + r * t.ldc, t.c + r * t.ldc, t.cols, f);
}

template <class T, int... kRows>
void dispatch_rows(const GemmTile<T>& t, std::integer_sequence<int, kRows...>) {
  (void)((t.rows == kRows + 1 ? (dispatch_layout<T, kRows + 1>(t), true) : false) || ...);
}

// Transposes an 8 x 8 block held as 8 row vectors; on return rows[c] holds column c.
void transpose_8x8(__m512d rows[8]) {
  __m512d t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm512_unpacklo_pd(rows[2 * i], rows[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_pd(rows[2 * i], rows[2 * i + 1]);
  }
  // t[2i + j], 128-bit lane L: column 2L + j of rows 2i, 2i + 1.
  for (int j = 0; j < 2; ++j) {
    const __m512d lo_even = _mm512_shuffle_f64x2(t[j], t[2 + j], 0x88);  // columns j, 4 + j of rows 0 .. 3
    const __m512d lo_odd = _mm512_shuffle_f64x2(t[j], t[2 + j], 0xDD);   // columns 2 + j, 6 + j
    const __m512d hi_even = _mm512_shuffle_f64x2(t[4 + j], t[6 + j], 0x88);
    const __m512d hi_odd = _mm512_shuffle_f64x2(t[4 + j], t[6 + j], 0xDD);
    rows[j] = _mm512_shuffle_f64x2(lo_even, hi_even, 0x88);
    rows[4 + j] = _mm512_shuffle_f64x2(lo_even, hi_even, 0xDD);
    rows[2 + j] = _mm512_shuffle_f64x2(lo_odd, hi_odd, 0x88);
    rows[6 + j] = _mm512_shuffle_f64x2(lo_odd, hi_odd, 0xDD);
  }
}

}  // namespace

void f64_pack_a_14__avx512(const double* a, int64_t lda, int64_t rows, int64_t kc, double* dst) {
  constexpr int kTileM = kAvx512F64TileM;
  // Rows 0 .. 7 and 8 .. 13 go through separate 8 x 8 transposes; the second stores 6 lanes.
  const __mmask8 high_lanes = static_cast<__mmask8>((1u << (kTileM - 8)) - 1);
  for (int64_t pb = 0; pb < kc; pb += 8) {
    const int64_t depth = kc - pb < 8 ? kc - pb : 8;
    const __mmask8 depth_lanes = depth >= 8 ? __mmask8(0xFF) : static_cast<__mmask8>((1u << depth) - 1);
    for (int half = 0; half < 2; ++half) {
      const int64_t r0 = half * 8;
      __m512d block[8];
      for (int r = 0; r < 8; ++r) {
        block[r] = r0 + r < rows && r0 + r < kTileM ? _mm512_maskz_loadu_pd(depth_lanes, a + (r0 + r) * lda + pb)
                                                    : _mm512_setzero_pd();
      }
      transpose_8x8(block);
      const __mmask8 store_lanes = half == 0 ? __mmask8(0xFF) : high_lanes;
      for (int64_t c = 0; c < depth; ++c) _mm512_mask_storeu_pd(dst + (pb + c) * kTileM + r0, store_lanes, block[c]);
    }
  }
}

void f32_pack_a_14__avx512(const float* a, int64_t lda, int64_t rows, int64_t kc, float* dst) {
  constexpr int kTileM = kAvx512F32TileM;
  const __mmask16 row_lanes = static_cast<__mmask16>((1u << kTileM) - 1);
  for (int64_t pb = 0; pb < kc; pb += 16) {
    const int64_t depth = kc - pb < 16 ? kc - pb : 16;
    const __mmask16 depth_lanes = depth >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << depth) - 1);
    __m512 block[16];
    for (int r = 0; r < 16; ++r) {
      block[r] = r < rows ? _mm512_maskz_loadu_ps(depth_lanes, a + r * lda + pb) : _mm512_setzero_ps();
    }
    transpose_16x16(block);
    for (int64_t c = 0; c < depth; ++c) _mm512_mask_storeu_ps(dst + (pb + c) * kTileM, row_lanes, block[c]);
  }
}

void f32_gemm_14x32__avx512(const GemmTile<float>& tile) {
  dispatch_rows(tile, std::make_integer_sequence<int, kAvx512F32TileM>{});
  if (tile.activation == TileActivation::kGeluErf) {
    apply_to_tile(tile, avx512_math::gelu_erf);
  } else if (tile.activation == TileActivation::kGeluTanh) {
    apply_to_tile(tile, avx512_math::gelu_tanh);
  }
}

void f64_gemm_14x16__avx512(const GemmTile<double>& tile) {
  dispatch_rows(tile, std::make_integer_sequence<int, kAvx512F64TileM>{});
}

}  // namespace nxrt::cpu

#endif
