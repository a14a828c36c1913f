// Dense GEMM for the CPU EP: C = alpha * op(A) * op(B) + beta * C, row-major with leading dimensions.
// op(A) is M x K, op(B) is K x N. When beta == 0, C is write-only (NaN in C does not propagate).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/packed_memory.h"
#include "core/thread_pool.h"
#include "ep/cpu/elementwise/fused_activation.h"

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

// Micro-kernel families: portable C++ (f32 4x16, f64 4x8 tiles), AVX2+FMA (6x16 / 6x8) or AVX-512
// (14x32 / 14x16).
enum class GemmIsa { kGeneric, kAvx2, kAvx512 };
// The fastest family this CPU runs (decided once).
GemmIsa best_gemm_isa();

// Applied to every element of C after C = alpha * op(A) * op(B) + beta * C: first the bias (bias[j] per column
// or bias[i] per row; none when null), then residual[i * ld_residual + j] (an m x n matrix that must not overlap
// C; none when null), then the activation.
template <class T>
struct GemmEpilogue {
  const T* bias = nullptr;
  bool bias_per_row = false;
  const T* residual = nullptr;
  int64_t ld_residual = 0;
  FusedActivation activation;

  bool is_identity() const { return bias == nullptr && residual == nullptr && activation.is_none(); }
};

// A constant op(B) (K x N) packed once, at kernel creation, into the layout the micro-kernels of `isa` read
// (K cut into the family's depth blocks; each block holds NR-column strips, k-major, zero-padded to NR);
// reused by every run and by concurrent runs (immutable after packing).
template <class T>
class PackedB {
 public:
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  GemmIsa isa() const { return isa_; }
  const T* data() const { return data_.data(); }
  size_t size() const { return data_.size(); }

  // Packs op(B) as described by args.k, args.n, args.trans_b and args.ldb (args.m is ignored). A family the
  // CPU lacks falls back to the portable one.
  static PackedB pack(const GemmArgs& args, const T* b, GemmIsa isa = best_gemm_isa());

 private:
  int64_t k_ = 0;
  int64_t n_ = 0;
  GemmIsa isa_ = GemmIsa::kGeneric;
  PackedArray<T> data_;  // huge pages: a decode step streams it in full
};

// Register-blocked, cache-tiled GEMM (BLIS-style: op(B) packed per call in panels or in bounded chunks, at
// most a few MiB of buffer per calling thread; op(A) packed per M block), parallel over M blocks x N chunks;
// with AVX2 or AVX-512, m <= kGemmDirectMaxRows (and at most one tile's rows) and a B that is prepacked or not transposed, neither operand is packed
// (B read once, parallel over N). The epilogue is applied per tile while it is in cache.
// `isa` picks the micro-kernels (tests run each); a family the CPU lacks falls back to the portable one.
void gemm_f32(const GemmArgs& args, float alpha, const float* a, const float* b, float beta, float* c,
              ThreadPool& pool, GemmIsa isa = best_gemm_isa(), const GemmEpilogue<float>& epilogue = {});
void gemm_f64(const GemmArgs& args, double alpha, const double* a, const double* b, double beta, double* c,
              ThreadPool& pool, GemmIsa isa = best_gemm_isa(), const GemmEpilogue<double>& epilogue = {});

// The same with a prepacked B; args.k / args.n must equal b.k() / b.n() (trans_b and ldb are ignored).
void gemm_f32_packed(const GemmArgs& args, float alpha, const float* a, const PackedB<float>& b, float beta, float* c,
                     ThreadPool& pool, const GemmEpilogue<float>& epilogue = {});
void gemm_f64_packed(const GemmArgs& args, double alpha, const double* a, const PackedB<double>& b, double beta,
                     double* c, ThreadPool& pool, const GemmEpilogue<double>& epilogue = {});

// Portable micro-tile sizes and the depth block of the portable and AVX2 families, exposed so tests can probe
// tile-1 / tile / tile+1 shapes (the AVX2 and AVX-512 tiles are in kernels/gemm_microkernels.h; AVX-512 uses
// depth blocks of at most 1024). Every family cuts k into equal depth blocks of at most its limit.
inline constexpr int64_t kGemmF32TileM = 4;
inline constexpr int64_t kGemmF32TileN = 16;
inline constexpr int64_t kGemmF64TileM = 4;
inline constexpr int64_t kGemmF64TileN = 8;
inline constexpr int64_t kGemmBlockK = 256;
// Largest m that the AVX-512 path runs without packing (GEMV-like shapes).
inline constexpr int64_t kGemmDirectMaxRows = 8;

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
