// Dense GEMM for the CPU EP: C = alpha * op(A) * op(B) + beta * C, row-major with leading dimensions.
// op(A) is M x K, op(B) is K x N. When beta == 0, C is write-only (NaN in C does not propagate).
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace nxrt::cpu {

struct GemmArgs {
  bool trans_a = false;
  bool trans_b = false;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t lda = 0;
  int64_t ldb = 0;
  int64_t ldc = 0;
};

// Micro-kernel families: portable C++ (f32 4x16, f64 4x8 tiles) or AVX2+FMA (6x16 / 6x8).
enum class GemmIsa { kGeneric, kAvx2 };
// The fastest family this CPU runs (decided once).
GemmIsa best_gemm_isa();

// Register-blocked, cache-tiled GEMM, parallel over output blocks. `isa` picks the micro-kernels (tests run
// each); a family the CPU lacks falls back to the portable one.
void gemm_f32(const GemmArgs& args, float alpha, const float* a, const float* b, float beta, float* c,
              ThreadPool& pool, GemmIsa isa = best_gemm_isa());
void gemm_f64(const GemmArgs& args, double alpha, const double* a, const double* b, double beta, double* c,
              ThreadPool& pool, GemmIsa isa = best_gemm_isa());

// Portable micro-tile sizes, exposed so tests can probe tile-1 / tile / tile+1 shapes (the AVX2 tiles are in
// kernels/gemm_microkernels.h).
inline constexpr int64_t kGemmF32TileM = 4;
inline constexpr int64_t kGemmF32TileN = 16;
inline constexpr int64_t kGemmF64TileN = 8;
inline constexpr int64_t kGemmBlockK = 256;
inline constexpr int64_t kGemmBlockM = 64;
inline constexpr int64_t kGemmBlockN = 256;

// Plain triple loop, the reference the optimised kernels are tested against. Accumulates in T.
template <class T>
void gemm_reference(const GemmArgs& args, T alpha, const T* a, const T* b, T beta, T* c) {
  for (int64_t i = 0; i < args.m; ++i) {
    for (int64_t j = 0; j < args.n; ++j) {
      T sum{0};
      for (int64_t p = 0; p < args.k; ++p) {
        const T x = args.trans_a ? a[p * args.lda + i] : a[i * args.lda + p];
        const T y = args.trans_b ? b[j * args.ldb + p] : b[p * args.ldb + j];
        sum += x * y;
      }
      T& out = c[i * args.ldc + j];
      out = beta == T{0} ? alpha * sum : alpha * sum + beta * out;
    }
  }
}

}  // namespace nxrt::cpu
