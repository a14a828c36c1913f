// Blocked GEMM. Layout: the output is cut into kGemmBlockM x kGemmBlockN blocks, one parallel task each. A task
// walks K in kGemmBlockK slices, packs its A slice into MR-row strips (k-major) and its B slice into NR-column
// strips (k-major), zero-padded at the edges, then runs an MR x NR micro-kernel: the AVX2+FMA one
// (kernels/avx2/) where the CPU has it, else the portable one whose loops GCC auto-vectorises. Pack buffers are
// thread-local and grow once.
#include <algorithm>
#include <vector>

#include "ep/cpu/gemm.h"
#include "ep/cpu/kernels/gemm_microkernels.h"

namespace nxrt::cpu {

namespace {

template <class T>
T load_a(const GemmArgs& g, const T* a, int64_t i, int64_t p) {
  return g.trans_a ? a[p * g.lda + i] : a[i * g.lda + p];
}
template <class T>
T load_b(const GemmArgs& g, const T* b, int64_t p, int64_t j) {
  return g.trans_b ? b[j * g.ldb + p] : b[p * g.ldb + j];
}

template <class T, int MR>
void pack_a(const GemmArgs& g, const T* a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, T* packed) {
  for (int64_t strip = 0; strip < mc; strip += MR) {
    const int64_t rows = std::min<int64_t>(MR, mc - strip);
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t r = 0; r < MR; ++r) {
        *packed++ = r < rows ? load_a(g, a, i0 + strip + r, p0 + p) : T{0};
      }
    }
  }
}

template <class T, int NR>
void pack_b(const GemmArgs& g, const T* b, int64_t j0, int64_t nc, int64_t p0, int64_t kc, T* packed) {
  for (int64_t strip = 0; strip < nc; strip += NR) {
    const int64_t cols = std::min<int64_t>(NR, nc - strip);
    if (!g.trans_b && cols == NR) {
      for (int64_t p = 0; p < kc; ++p) {
        const T* row = b + (p0 + p) * g.ldb + j0 + strip;
        for (int64_t c = 0; c < NR; ++c) *packed++ = row[c];
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t c = 0; c < NR; ++c) {
        *packed++ = c < cols ? load_b(g, b, p0 + p, j0 + strip + c) : T{0};
      }
    }
  }
}

template <class T, int MR, int NR>
void micro_kernel_generic(int64_t kc, const T* __restrict a, const T* __restrict b, T* __restrict acc) {
  T tile[MR][NR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    for (int r = 0; r < MR; ++r) {
      const T x = a[r];
      for (int c = 0; c < NR; ++c) tile[r][c] += x * b[c];
    }
    a += MR;
    b += NR;
  }
  for (int r = 0; r < MR; ++r) {
    for (int c = 0; c < NR; ++c) acc[r * NR + c] = tile[r][c];
  }
}

template <class T, int NR>
void store_tile(const T* acc, int64_t rows, int64_t cols, T alpha, T beta, bool first, T* c, int64_t ldc) {
  for (int64_t r = 0; r < rows; ++r) {
    T* out = c + r * ldc;
    const T* tile = acc + r * NR;
    if (!first) {
      for (int64_t j = 0; j < cols; ++j) out[j] += alpha * tile[j];
    } else if (beta == T{0}) {
      for (int64_t j = 0; j < cols; ++j) out[j] = alpha * tile[j];
    } else {
      for (int64_t j = 0; j < cols; ++j) out[j] = alpha * tile[j] + beta * out[j];
    }
  }
}

template <class T>
using MicroKernel = void (*)(int64_t kc, const T* a, const T* b, T* acc);

template <class T, int MR, int NR, MicroKernel<T> Micro>
void gemm_block(const GemmArgs& g, T alpha, const T* a, const T* b, T beta, T* c, int64_t i0, int64_t j0,
                std::vector<T>& a_pack, std::vector<T>& b_pack) {
  const int64_t mc = std::min(kGemmBlockM, g.m - i0);
  const int64_t nc = std::min(kGemmBlockN, g.n - j0);
  if (g.k == 0) {
    const T acc[MR * NR] = {};
    for (int64_t i = 0; i < mc; i += MR) {
      for (int64_t j = 0; j < nc; j += NR) {
        store_tile<T, NR>(acc, std::min<int64_t>(MR, mc - i), std::min<int64_t>(NR, nc - j), alpha, beta, true,
                              c + (i0 + i) * g.ldc + j0 + j, g.ldc);
      }
    }
    return;
  }
  const int64_t mc_padded = (mc + MR - 1) / MR * MR;
  const int64_t nc_padded = (nc + NR - 1) / NR * NR;
  for (int64_t p0 = 0; p0 < g.k; p0 += kGemmBlockK) {
    const int64_t kc = std::min(kGemmBlockK, g.k - p0);
    if (a_pack.size() < static_cast<size_t>(mc_padded * kc)) a_pack.resize(mc_padded * kGemmBlockK);
    if (b_pack.size() < static_cast<size_t>(nc_padded * kc)) b_pack.resize(nc_padded * kGemmBlockK);
    pack_a<T, MR>(g, a, i0, mc, p0, kc, a_pack.data());
    pack_b<T, NR>(g, b, j0, nc, p0, kc, b_pack.data());
    for (int64_t j = 0; j < nc; j += NR) {
      const T* b_strip = b_pack.data() + j * kc;
      for (int64_t i = 0; i < mc; i += MR) {
        alignas(64) T acc[MR * NR];
        Micro(kc, a_pack.data() + i * kc, b_strip, acc);
        store_tile<T, NR>(acc, std::min<int64_t>(MR, mc - i), std::min<int64_t>(NR, nc - j), alpha, beta,
                              p0 == 0, c + (i0 + i) * g.ldc + j0 + j, g.ldc);
      }
    }
  }
}

template <class T, int MR, int NR, MicroKernel<T> Micro>
void gemm_blocked(const GemmArgs& g, T alpha, const T* a, const T* b, T beta, T* c, ThreadPool& pool) {
  if (g.m <= 0 || g.n <= 0) return;
  const int64_t blocks_m = (g.m + kGemmBlockM - 1) / kGemmBlockM;
  const int64_t blocks_n = (g.n + kGemmBlockN - 1) / kGemmBlockN;
  const int64_t blocks = blocks_m * blocks_n;
  // Small problems run inline: dispatch costs more than the work.
  const bool small = g.m * g.n * std::max<int64_t>(g.k, 1) < (int64_t{1} << 15);
  pool.parallel_for(blocks, small ? blocks : 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<T> a_pack;
    thread_local std::vector<T> b_pack;
    for (int64_t block = begin; block < end; ++block) {
      const int64_t i0 = (block / blocks_n) * kGemmBlockM;
      const int64_t j0 = (block % blocks_n) * kGemmBlockN;
      gemm_block<T, MR, NR, Micro>(g, alpha, a, b, beta, c, i0, j0, a_pack, b_pack);
    }
  });
}

template <class T>
void apply_epilogue(const GemmArgs& g, const GemmEpilogue<T>& epilogue, T* c) {
  if (epilogue.is_identity()) return;
  for (int64_t i = 0; i < g.m; ++i) {
    T* row = c + i * g.ldc;
    if (epilogue.bias != nullptr) {
      if (epilogue.bias_per_row) {
        for (int64_t j = 0; j < g.n; ++j) row[j] += epilogue.bias[i];
      } else {
        for (int64_t j = 0; j < g.n; ++j) row[j] += epilogue.bias[j];
      }
    }
    apply_activation(epilogue.activation, row, g.n);
  }
}

}  // namespace

template <class T>
PackedB<T> PackedB<T>::pack(const GemmArgs& args, const T* b, GemmIsa isa) {
  PackedB packed;
  packed.k_ = args.k;
  packed.n_ = args.n;
  packed.isa_ = isa;
  packed.data_.resize(static_cast<size_t>(args.k * args.n));
  for (int64_t p = 0; p < args.k; ++p) {
    for (int64_t j = 0; j < args.n; ++j) {
      packed.data_[p * args.n + j] = load_b(args, b, p, j);
    }
  }
  return packed;
}

template class PackedB<float>;
template class PackedB<double>;

void gemm_f32_packed(const GemmArgs& args, float alpha, const float* a, const PackedB<float>& b, float beta, float* c,
                     ThreadPool& pool, const GemmEpilogue<float>& epilogue) {
  GemmArgs g = args;
  g.trans_b = false;
  g.ldb = b.n();
  gemm_f32(g, alpha, a, b.data(), beta, c, pool, b.isa(), epilogue);
}

void gemm_f64_packed(const GemmArgs& args, double alpha, const double* a, const PackedB<double>& b, double beta,
                     double* c, ThreadPool& pool, const GemmEpilogue<double>& epilogue) {
  GemmArgs g = args;
  g.trans_b = false;
  g.ldb = b.n();
  gemm_f64(g, alpha, a, b.data(), beta, c, pool, b.isa(), epilogue);
}

bool cpu_has_avx2_fma() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

GemmIsa best_gemm_isa() { return cpu_has_avx2_fma() ? GemmIsa::kAvx2 : GemmIsa::kGeneric; }

void gemm_f32(const GemmArgs& args, float alpha, const float* a, const float* b, float beta, float* c,
              ThreadPool& pool, GemmIsa isa, const GemmEpilogue<float>& epilogue) {
#if defined(__x86_64__)
  if (isa == GemmIsa::kAvx2 && cpu_has_avx2_fma()) {
    gemm_blocked<float, kAvx2F32TileM, kAvx2F32TileN, f32_gemm_6x16__avx2>(args, alpha, a, b, beta, c, pool);
    apply_epilogue(args, epilogue, c);
    return;
  }
#endif
  gemm_blocked<float, kGemmF32TileM, kGemmF32TileN, micro_kernel_generic<float, kGemmF32TileM, kGemmF32TileN>>(
      args, alpha, a, b, beta, c, pool);
  apply_epilogue(args, epilogue, c);
}

void gemm_f64(const GemmArgs& args, double alpha, const double* a, const double* b, double beta, double* c,
              ThreadPool& pool, GemmIsa isa, const GemmEpilogue<double>& epilogue) {
#if defined(__x86_64__)
  if (isa == GemmIsa::kAvx2 && cpu_has_avx2_fma()) {
    gemm_blocked<double, kAvx2F64TileM, kAvx2F64TileN, f64_gemm_6x8__avx2>(args, alpha, a, b, beta, c, pool);
    apply_epilogue(args, epilogue, c);
    return;
  }
#endif
  gemm_blocked<double, 4, kGemmF64TileN, micro_kernel_generic<double, 4, kGemmF64TileN>>(args, alpha, a, b, beta, c,
                                                                                       pool);
  apply_epilogue(args, epilogue, c);
}

}  // namespace nxrt::cpu
