// GEMM micro-kernels per ISA, chosen once at start by CPU features (see gemm.cpp).
//
// Packed-strip kernels (portable): compute one MR x NR tile, acc[r * NR + c] = sum over p < kc of
// a[p * MR + r] * b[p * NR + c], where `a` and `b` are zero-padded k-major strips; `acc` is overwritten.
//
// Tile kernels (AVX2, AVX-512) take a GemmTile and update C in place, so no tile is staged through memory:
//   acc(r, c) = sum over p < kc of A(r, p) * B(p, c) for r < rows, c < cols, with
//   A(r, p) = a[r * a_row_stride + p * a_k_stride] (either stride may be anything; a_row_stride == 1 or
//   a_k_stride == 1 is required), B(p, c) = b[p * b_k_stride + c] (columns >= cols are never read);
//   then C(r, c) = alpha * acc + (beta == 0 ? 0 : beta * C(r, c)) (C is not read when beta == 0), then
//   + col_bias[c], + row_bias[r] and + residual[r * ld_residual + c] where non-null, then the vector activation.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

inline constexpr int kAvx2F32TileM = 6;
inline constexpr int kAvx2F32TileN = 16;
inline constexpr int kAvx2F64TileM = 6;
inline constexpr int kAvx2F64TileN = 8;

inline constexpr int kAvx512F32TileM = 14;
inline constexpr int kAvx512F32TileN = 32;
inline constexpr int kAvx512F64TileM = 14;
inline constexpr int kAvx512F64TileN = 16;

// Activations applied inside a tile kernel; others are applied by the caller afterwards. The Gelu forms are
// only given to the f32 AVX2 and AVX-512 tile kernels, which apply them to their stored tile while it is in L1.
enum class TileActivation : int32_t { kNone, kRelu, kLeakyRelu, kClip, kGeluErf, kGeluTanh };

template <class T>
struct GemmTile {
  int64_t kc = 0;
  int64_t rows = 0;  // 1 .. MR
  int64_t cols = 0;  // 1 .. NR
  const T* a = nullptr;
  int64_t a_row_stride = 0;
  int64_t a_k_stride = 0;
  const T* b = nullptr;
  int64_t b_k_stride = 0;
  T* c = nullptr;
  int64_t ldc = 0;
  T alpha = 1;
  T beta = 0;
  const T* col_bias = nullptr;
  const T* row_bias = nullptr;
  const T* residual = nullptr;
  int64_t ld_residual = 0;
  TileActivation activation = TileActivation::kNone;
  float activation_alpha = 0.0f;  // LeakyRelu slope, Clip min
  float activation_beta = 0.0f;   // Clip max
  // The B strip is read for the first time in this call (likely from memory): the kernel prefetches it ahead along
  // the depth. Leave false when an earlier tile has just read the same strip (it is in L2).
  bool prefetch_b = false;
};

// Defined only on x86-64 (kernels/avx2/, compiled with -mavx2 -mfma); never called below the avx2 tier
// (ep/cpu/microkernels/cpu_features.h). Tile kernels: any rows <= 6, any cols <= NR; Gelu forms for f32 only.
void f32_gemm_6x16__avx2(const GemmTile<float>& tile);
// One row of A against the 3 (avx2) / 4 (avx512) packed B strips of NR columns starting at tile.b, strip_stride
// floats apart (B's padding columns read as zeros); tile.rows == 1, tile.cols <= strips * NR columns stored. The
// results equal those of the one-strip tile kernel bit for bit; Gelu forms as the tile kernel of the family.
inline constexpr int kAvx2F32RowStrips = 3;
inline constexpr int kAvx512F32RowStrips = 4;
void f32_gemm_row_strips__avx2(const GemmTile<float>& tile, int64_t strip_stride);
// Packs rows (<= 6) x kc of a row-major A (row stride lda) into one 6-row strip, k-major (dst[p * 6 + r]), rows >=
// `rows` zero.
void f32_pack_a_6__avx2(const float* a, int64_t lda, int64_t rows, int64_t kc, float* dst);
void f32_gemm_row_strips__avx512(const GemmTile<float>& tile, int64_t strip_stride);
void f64_gemm_6x8__avx2(const GemmTile<double>& tile);

// Defined only on x86-64 (kernels/avx512/); never called below the avx512 tier.
void f32_gemm_14x32__avx512(const GemmTile<float>& tile);
void f64_gemm_14x16__avx512(const GemmTile<double>& tile);
// Packs rows (<= 14) x kc of a row-major A (row stride lda) into one 14-row strip, k-major
// (dst[p * 14 + r]), rows >= `rows` zero.
void f32_pack_a_14__avx512(const float* a, int64_t lda, int64_t rows, int64_t kc, float* dst);
void f64_pack_a_14__avx512(const double* a, int64_t lda, int64_t rows, int64_t kc, double* dst);

// c[j] = sum_p a[p] b[j * ldb + p] for j < n: one row of A against rows of a row-major B (a transposed op(B) read
// in place, as attention's Q K^T at decode). Defined only on x86-64, for the avx2 / avx512 tiers.
void f32_dot_rows__avx2(const float* a, const float* b, int64_t ldb, int64_t n, int64_t k, float* c);
void f32_dot_rows__avx512(const float* a, const float* b, int64_t ldb, int64_t n, int64_t k, float* c);

}  // namespace nxrt::cpu
