// AVX-512 GEMM tile kernels: f32 14x32 and f64 14x16 (gemm_tile_kernel.h over zmm registers; 28 accumulators
// for a full tile, two accumulator sets up to 4 rows), and the A-strip packers. The f32 kernel applies the Gelu
// forms to its stored tile, read back from L1.
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma on x86-64 only (see CMakeLists.txt).
#include "ep/cpu/microkernels/gemm_microkernels.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>

#include <utility>

#include "ep/cpu/microkernels/avx512/vector_lanes_avx512.h"
#include "ep/cpu/microkernels/avx512/vector_math_avx512.h"
#include "ep/cpu/microkernels/gemm_tile_kernel.h"

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
  static constexpr int kDualSetRows = 4;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg set1(float x) { return _mm512_set1_ps(x); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
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
  static constexpr int kDualSetRows = 4;
  static Reg zero() { return _mm512_setzero_pd(); }
  static Reg set1(double x) { return _mm512_set1_pd(x); }
  static Reg load(const double* p) { return _mm512_loadu_pd(p); }
  static Reg load(Mask m, const double* p) { return _mm512_maskz_loadu_pd(m, p); }
  static void store(double* p, Reg v) { _mm512_storeu_pd(p, v); }
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

// C(r, c) = f(C(r, c)) over the tile, which its kernel has just stored (in L1).
template <class F>
void apply_to_tile(const GemmTile<float>& t, F f) {
  for (int64_t r = 0; r < t.rows; ++r) avx512_math::map(t.c + r * t.ldc, t.c + r * t.ldc, t.cols, f);
}

// The tile's Gelu form, which the tile kernels leave to their entry points.
void apply_tile_gelu(const GemmTile<float>& t) {
  if (t.activation == TileActivation::kGeluErf) {
    apply_to_tile(t, avx512_math::gelu_erf);
  } else if (t.activation == TileActivation::kGeluTanh) {
    apply_to_tile(t, avx512_math::gelu_tanh);
  }
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
  gemm_tile::run_tile<Vec<float>, kAvx512F32TileM>(tile);
  apply_tile_gelu(tile);
}

void f32_gemm_row_strips__avx512(const GemmTile<float>& tile, int64_t strip_stride) {
  gemm_tile::row_strips_kernel<Vec<float>, float, kAvx512F32RowStrips>(tile, strip_stride);
  apply_tile_gelu(tile);
}

void f64_gemm_14x16__avx512(const GemmTile<double>& tile) { gemm_tile::run_tile<Vec<double>, kAvx512F64TileM>(tile); }

namespace {

// The lane sums of four vectors: [sum s0, sum s1, sum s2, sum s3] (quarters folded pairwise, then lanes).
inline __m128 sum_lanes_of_four(__m512 s0, __m512 s1, __m512 s2, __m512 s3) {
  const __m512 halves01 = _mm512_add_ps(_mm512_shuffle_f32x4(s0, s1, _MM_SHUFFLE(1, 0, 1, 0)),
                                        _mm512_shuffle_f32x4(s0, s1, _MM_SHUFFLE(3, 2, 3, 2)));
  const __m512 halves23 = _mm512_add_ps(_mm512_shuffle_f32x4(s2, s3, _MM_SHUFFLE(1, 0, 1, 0)),
                                        _mm512_shuffle_f32x4(s2, s3, _MM_SHUFFLE(3, 2, 3, 2)));
  // Quarter i holds four partial sums of s_i.
  const __m512 quarters = _mm512_add_ps(_mm512_shuffle_f32x4(halves01, halves23, _MM_SHUFFLE(2, 0, 2, 0)),
                                        _mm512_shuffle_f32x4(halves01, halves23, _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512 pairs = _mm512_add_ps(quarters, _mm512_permute_ps(quarters, _MM_SHUFFLE(1, 0, 3, 2)));
  const __m512 totals = _mm512_add_ps(pairs, _mm512_permute_ps(pairs, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_castps512_ps128(
      _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12), totals));
}

}  // namespace

void f32_dot_rows__avx512(const float* a, const float* b, int64_t ldb, int64_t n, int64_t k, float* c) {
  const int64_t full = k / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (k - full)) - 1u);
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {  // four rows of B share each load of A
    const float* r = b + j * ldb;
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    for (int64_t p = 0; p < full; p += 16) {
      const __m512 x = _mm512_loadu_ps(a + p);
      s0 = _mm512_fmadd_ps(x, _mm512_loadu_ps(r + p), s0);
      s1 = _mm512_fmadd_ps(x, _mm512_loadu_ps(r + ldb + p), s1);
      s2 = _mm512_fmadd_ps(x, _mm512_loadu_ps(r + 2 * ldb + p), s2);
      s3 = _mm512_fmadd_ps(x, _mm512_loadu_ps(r + 3 * ldb + p), s3);
    }
    if (tail != 0) {
      const __m512 x = _mm512_maskz_loadu_ps(tail, a + full);
      s0 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(tail, r + full), s0);
      s1 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(tail, r + ldb + full), s1);
      s2 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(tail, r + 2 * ldb + full), s2);
      s3 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(tail, r + 3 * ldb + full), s3);
    }
    _mm_storeu_ps(c + j, sum_lanes_of_four(s0, s1, s2, s3));
  }
  for (; j < n; ++j) {
    const float* r = b + j * ldb;
    __m512 s0 = _mm512_setzero_ps();
    for (int64_t p = 0; p < full; p += 16) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + p), _mm512_loadu_ps(r + p), s0);
    if (tail != 0) {
      s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, a + full), _mm512_maskz_loadu_ps(tail, r + full), s0);
    }
    c[j] = _mm512_reduce_add_ps(s0);
  }
}

}  // namespace nxrt::cpu

#endif
