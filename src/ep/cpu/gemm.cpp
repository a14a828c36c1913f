// Blocked GEMM engine (BLIS-style). op(B) is packed once per call (or once per kernel, PackedB) into depth
// blocks of kc rows, each a row of NR-column strips stored k-major; all threads share it. The output is cut
// into tasks of mc rows x an N chunk; a task walks the depth blocks and packs its A rows into MR-row strips
// (k-major, zero-padded) in a thread-local buffer; then, panel by panel of nc columns (kept in L2), each A strip
// (kept in L1) meets every B strip of the panel in the tile kernel. The last depth block applies the epilogue
// inside the tile kernel (bias, Relu/LeakyRelu/Clip) or right after it on the tile's rows (other activations),
// while the tile is in cache.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ep/cpu/gemm.h"
#include "ep/cpu/kernels/gemm_microkernels.h"

namespace nxrt::cpu {

namespace {

template <class T>
using TileFn = void (*)(const GemmTile<T>& tile);

// One micro-kernel family with its blocking: depth blocks of kc, A blocks of mc rows, B panels of nc columns
// (kc x nc meant to stay in L2 while an mr x kc A strip stays in L1; the AVX-512 values were tuned on the dev
// machine's AMD EPYC, L1 48 KiB, L2 1 MiB, full-width AVX-512; the others follow the same budget, untuned). `direct` tile kernels accept any A / B strides (unpacked operands); the others need packed A
// (a_row_stride 1, a_k_stride mr) and packed B (b_k_stride nr).
template <class T>
struct KernelSet {
  GemmIsa isa = GemmIsa::kGeneric;
  int64_t mr = 0;
  int64_t nr = 0;
  int64_t kc = 0;
  int64_t mc = 0;
  int64_t nc = 0;
  TileFn<T> tile = nullptr;
  bool direct = false;
  // Packs one mr-row strip of a row-major A (see f32_pack_a_14__avx512); null: the portable loop.
  void (*pack_a_strip)(const T* a, int64_t lda, int64_t rows, int64_t kc, T* dst) = nullptr;
};

template <class T>
using PackedKernel = void (*)(int64_t kc, const T* a, const T* b, T* acc);

template <class T, int MR, int NR>
void packed_kernel_generic(int64_t kc, const T* __restrict a, const T* __restrict b, T* __restrict acc) {
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

template <class T>
T activate_scalar(const GemmTile<T>& t, T v) {
  switch (t.activation) {
    case TileActivation::kNone: return v;
    case TileActivation::kRelu: return v < T{0} ? T{0} : v;
    case TileActivation::kLeakyRelu: return v < T{0} ? static_cast<T>(t.activation_alpha) * v : v;
    case TileActivation::kClip:
      return std::min(std::max(v, static_cast<T>(t.activation_alpha)), static_cast<T>(t.activation_beta));
  }
  return v;
}

// Tile kernel of the packed-strip families: the micro-kernel fills a full MR x NR tile (from zero-padded
// strips), then the tile's rows x cols part is combined with C as GemmTile describes.
template <class T, int MR, int NR, PackedKernel<T> Micro>
void packed_tile(const GemmTile<T>& t) {
  alignas(64) T acc[MR * NR];
  Micro(t.kc, t.a, t.b, acc);
  for (int64_t r = 0; r < t.rows; ++r) {
    T* out = t.c + r * t.ldc;
    const T* row = acc + r * NR;
    const T row_bias = t.row_bias != nullptr ? t.row_bias[r] : T{0};
    for (int64_t j = 0; j < t.cols; ++j) {
      T v = t.alpha * row[j];
      if (t.beta != T{0}) v += t.beta * out[j];
      if (t.col_bias != nullptr) v += t.col_bias[j];
      out[j] = activate_scalar(t, v + row_bias);
    }
  }
}

KernelSet<float> f32_kernels(GemmIsa isa) {
#if defined(__x86_64__)
  if (isa == GemmIsa::kAvx512 && cpu_has_avx512()) {
    return {GemmIsa::kAvx512, kAvx512F32TileM, kAvx512F32TileN, 384, 20 * kAvx512F32TileM, 512,
            f32_gemm_14x32__avx512, true, f32_pack_a_14__avx512};
  }
  if ((isa == GemmIsa::kAvx2 || isa == GemmIsa::kAvx512) && cpu_has_avx2_fma()) {
    return {GemmIsa::kAvx2, kAvx2F32TileM, kAvx2F32TileN, kGemmBlockK, 16 * kAvx2F32TileM, 512,
            packed_tile<float, kAvx2F32TileM, kAvx2F32TileN, f32_gemm_6x16__avx2>, false};
  }
#endif
  return {GemmIsa::kGeneric, kGemmF32TileM, kGemmF32TileN, kGemmBlockK, 16 * kGemmF32TileM, 512,
          packed_tile<float, kGemmF32TileM, kGemmF32TileN,
                      packed_kernel_generic<float, kGemmF32TileM, kGemmF32TileN>>,
          false};
}

KernelSet<double> f64_kernels(GemmIsa isa) {
#if defined(__x86_64__)
  if (isa == GemmIsa::kAvx512 && cpu_has_avx512()) {
    return {GemmIsa::kAvx512, kAvx512F64TileM, kAvx512F64TileN, 128, 20 * kAvx512F64TileM, 256,
            f64_gemm_14x16__avx512, true};
  }
  if ((isa == GemmIsa::kAvx2 || isa == GemmIsa::kAvx512) && cpu_has_avx2_fma()) {
    return {GemmIsa::kAvx2, kAvx2F64TileM, kAvx2F64TileN, kGemmBlockK, 16 * kAvx2F64TileM, 256,
            packed_tile<double, kAvx2F64TileM, kAvx2F64TileN, f64_gemm_6x8__avx2>, false};
  }
#endif
  return {GemmIsa::kGeneric, kGemmF64TileM, kGemmF64TileN, kGemmBlockK, 16 * kGemmF64TileM, 256,
          packed_tile<double, kGemmF64TileM, kGemmF64TileN,
                      packed_kernel_generic<double, kGemmF64TileM, kGemmF64TileN>>,
          false};
}

template <class T>
KernelSet<T> kernels_for(GemmIsa isa) {
  KernelSet<T> ks;
  if constexpr (std::is_same_v<T, float>) {
    ks = f32_kernels(isa);
  } else {
    ks = f64_kernels(isa);
  }
  return ks;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// op(B) packed: depth block p0 (a multiple of kc) starts at p0 * n_padded; strip s of a block whose depth is
// kc_block starts s * kc_block * nr further.
template <class T>
struct BOperand {
  const T* packed = nullptr;
  int64_t n_padded = 0;
  const T* raw = nullptr;
  bool trans = false;
  int64_t ldb = 0;
};

// Packs strips [s0, s1) of every depth block of op(B) into `dst` (the layout BOperand describes). B is read in
// row blocks of kPackRows (sequential along B's rows, writes within a few lines of each strip); B^T column by
// column of op(B) (sequential along B^T's rows).
template <class T>
void pack_b_strips(const KernelSet<T>& ks, const GemmArgs& g, const T* b, int64_t s0, int64_t s1, T* dst) {
  constexpr int64_t kPackRows = 8;
  const int64_t nr = ks.nr;
  const int64_t n_padded = round_up(g.n, nr);
  for (int64_t p0 = 0; p0 < g.k; p0 += ks.kc) {
    const int64_t kc = std::min(ks.kc, g.k - p0);
    T* block = dst + p0 * n_padded;
    if (g.trans_b) {
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t j0 = s * nr;
        const int64_t cols = std::min(nr, g.n - j0);
        T* out = block + s * kc * nr;
        for (int64_t c = 0; c < cols; ++c) {
          const T* col = b + (j0 + c) * g.ldb + p0;
          for (int64_t p = 0; p < kc; ++p) out[p * nr + c] = col[p];
        }
        for (int64_t p = 0; p < kc; ++p) {
          for (int64_t c = cols; c < nr; ++c) out[p * nr + c] = T{0};
        }
      }
      continue;
    }
    for (int64_t pb = 0; pb < kc; pb += kPackRows) {
      const int64_t depth = std::min(kPackRows, kc - pb);
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t j0 = s * nr;
        const int64_t cols = std::min(nr, g.n - j0);
        T* out = block + s * kc * nr + pb * nr;
        for (int64_t p = 0; p < depth; ++p) {
          const T* row = b + (p0 + pb + p) * g.ldb + j0;
          T* o = out + p * nr;
          std::memcpy(o, row, static_cast<size_t>(cols) * sizeof(T));
          for (int64_t c = cols; c < nr; ++c) o[c] = T{0};
        }
      }
    }
  }
}

// Packs rows [i0, i0 + rows) x depth [p0, p0 + kc) of op(A) into MR-row strips, k-major, zero-padded.
template <class T>
void pack_a_block(const KernelSet<T>& ks, const GemmArgs& g, const T* a, int64_t i0, int64_t rows, int64_t p0,
                  int64_t kc, T* dst) {
  const int64_t mr = ks.mr;
  for (int64_t strip = 0; strip < rows; strip += mr) {
    const int64_t count = std::min(mr, rows - strip);
    T* out = dst + strip * kc;
    if (!g.trans_a && ks.pack_a_strip != nullptr) {
      ks.pack_a_strip(a + (i0 + strip) * g.lda + p0, g.lda, count, kc, out);
      continue;
    }
    if (g.trans_a) {
      for (int64_t p = 0; p < kc; ++p) {
        const T* src = a + (p0 + p) * g.lda + i0 + strip;
        T* o = out + p * mr;
        for (int64_t r = 0; r < count; ++r) o[r] = src[r];
        for (int64_t r = count; r < mr; ++r) o[r] = T{0};
      }
      continue;
    }
    // Blocks of kPackDepth columns keep the strided writes inside a few cache lines.
    constexpr int64_t kPackDepth = 16;
    const T* src = a + (i0 + strip) * g.lda + p0;
    for (int64_t pb = 0; pb < kc; pb += kPackDepth) {
      const int64_t depth = std::min(kPackDepth, kc - pb);
      T* o = out + pb * mr;
      for (int64_t r = 0; r < count; ++r) {
        const T* row = src + r * g.lda + pb;
        for (int64_t p = 0; p < depth; ++p) o[p * mr + r] = row[p];
      }
      for (int64_t r = count; r < mr; ++r) {
        for (int64_t p = 0; p < depth; ++p) o[p * mr + r] = T{0};
      }
    }
  }
}

// How a tile ends when its last depth block is done: the GemmTile fields, plus an activation applied to the
// tile's rows afterwards when the tile kernel can't apply it.
template <class T>
struct EpiloguePlan {
  const T* bias = nullptr;
  bool bias_per_row = false;
  TileActivation in_tile = TileActivation::kNone;
  float alpha = 0.0f;
  float beta = 0.0f;
  const FusedActivation* after = nullptr;
};

template <class T>
EpiloguePlan<T> plan_epilogue(const GemmEpilogue<T>& epilogue) {
  EpiloguePlan<T> plan;
  plan.bias = epilogue.bias;
  plan.bias_per_row = epilogue.bias_per_row;
  plan.alpha = epilogue.activation.alpha;
  plan.beta = epilogue.activation.beta;
  switch (epilogue.activation.kind) {
    case ActivationKind::kNone: break;
    case ActivationKind::kRelu: plan.in_tile = TileActivation::kRelu; break;
    case ActivationKind::kLeakyRelu: plan.in_tile = TileActivation::kLeakyRelu; break;
    case ActivationKind::kClip: plan.in_tile = TileActivation::kClip; break;
    default: plan.after = &epilogue.activation; break;
  }
  return plan;
}

// Runs one tile whose C origin is (i, j); `last` adds the epilogue.
template <class T>
void run_tile(const KernelSet<T>& ks, GemmTile<T>& t, bool last, const EpiloguePlan<T>& plan, int64_t i,
              int64_t j) {
  if (last) {
    if (plan.bias != nullptr) {
      (plan.bias_per_row ? t.row_bias : t.col_bias) = plan.bias + (plan.bias_per_row ? i : j);
    }
    t.activation = plan.in_tile;
    t.activation_alpha = plan.alpha;
    t.activation_beta = plan.beta;
  }
  ks.tile(t);
  t.col_bias = t.row_bias = nullptr;
  t.activation = TileActivation::kNone;
  if (last && plan.after != nullptr) {
    for (int64_t r = 0; r < t.rows; ++r) apply_activation(*plan.after, t.c + r * t.ldc, t.cols);
  }
}

// Below this many multiply-adds a call runs on the calling thread only.
constexpr int64_t kInlineWork = int64_t{1} << 16;

// k == 0: C = beta * C (0 when beta == 0), then the epilogue.
template <class T>
void gemm_empty_depth(const GemmArgs& g, T beta, T* c, const GemmEpilogue<T>& epilogue) {
  for (int64_t i = 0; i < g.m; ++i) {
    T* row = c + i * g.ldc;
    for (int64_t j = 0; j < g.n; ++j) {
      T v = beta == T{0} ? T{0} : beta * row[j];
      if (epilogue.bias != nullptr) v += epilogue.bias_per_row ? epilogue.bias[i] : epilogue.bias[j];
      row[j] = v;
    }
    apply_activation(epilogue.activation, row, g.n);
  }
}

// Small m: the tile kernel reads A and B in place, each task owns a range of NR-column strips. Depth blocks
// go outermost within a task, and an unpacked B uses short ones (kRawDepth rows), so B is read a few rows at a
// time, sequentially along each row, rather than one strided column strip at a time (measured 2.4x faster for
// a 1 x 1024 x 1024 GEMV).
template <class T>
void gemm_direct(const KernelSet<T>& ks, const GemmArgs& g, T alpha, const T* a, const BOperand<T>& b, T beta,
                 T* c, ThreadPool& pool, const EpiloguePlan<T>& plan, bool serial) {
  constexpr int64_t kRawDepth = 16;
  const int64_t strips = ceil_div(g.n, ks.nr);
  const int64_t depth = b.packed != nullptr ? ks.kc : kRawDepth;
  pool.parallel_for(strips, serial ? strips : 1, [&](int64_t begin, int64_t end) {
    GemmTile<T> t;
    t.rows = g.m;
    t.a_row_stride = g.trans_a ? 1 : g.lda;
    t.a_k_stride = g.trans_a ? g.lda : 1;
    t.ldc = g.ldc;
    t.alpha = alpha;
    t.b_k_stride = b.packed != nullptr ? ks.nr : b.ldb;
    for (int64_t p0 = 0; p0 < g.k; p0 += depth) {
      t.kc = std::min(depth, g.k - p0);
      t.a = a + p0 * t.a_k_stride;
      t.beta = p0 == 0 ? beta : T{1};
      const bool last = p0 + t.kc >= g.k;
      for (int64_t s = begin; s < end; ++s) {
        const int64_t j0 = s * ks.nr;
        t.cols = std::min(ks.nr, g.n - j0);
        t.c = c + j0;
        t.b = b.packed != nullptr ? b.packed + p0 * b.n_padded + s * t.kc * ks.nr : b.raw + p0 * b.ldb + j0;
        run_tile(ks, t, last, plan, 0, j0);
      }
    }
  });
}

template <class T>
void gemm_blocked(const KernelSet<T>& ks, const GemmArgs& g, T alpha, const T* a, const BOperand<T>& b, T beta,
                  T* c, ThreadPool& pool, const EpiloguePlan<T>& plan, int threads) {
  const int64_t strips = ceil_div(g.n, ks.nr);
  int64_t mc = round_up(ceil_div(g.m, ceil_div(g.m, ks.mc)), ks.mr);
  int64_t m_blocks = ceil_div(g.m, mc);
  int64_t chunk = strips;
  int64_t n_chunks = 1;
  // Enough tasks for every thread: split N first (no extra packing of B), then M.
  while (threads > 1 && m_blocks * n_chunks < 2 * threads && chunk > 1) {
    chunk = ceil_div(chunk, 2);
    n_chunks = ceil_div(strips, chunk);
  }
  while (m_blocks * n_chunks < threads && mc > ks.mr) {
    mc = round_up(ceil_div(mc, 2), ks.mr);
    m_blocks = ceil_div(g.m, mc);
  }
  const int64_t panel_strips = std::max<int64_t>(1, ks.nc / ks.nr);
  const int64_t tasks = m_blocks * n_chunks;
  pool.parallel_for(tasks, threads == 1 ? tasks : 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<T> a_pack;
    const size_t need = static_cast<size_t>(round_up(mc, ks.mr) * ks.kc);
    if (a_pack.size() < need) a_pack.resize(need);
    GemmTile<T> t;
    t.a_row_stride = 1;
    t.a_k_stride = ks.mr;
    t.b_k_stride = ks.nr;
    t.ldc = g.ldc;
    t.alpha = alpha;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t i0 = (task / n_chunks) * mc;
      const int64_t rows = std::min(mc, g.m - i0);
      const int64_t s0 = (task % n_chunks) * chunk;
      const int64_t s1 = std::min(strips, s0 + chunk);
      for (int64_t p0 = 0; p0 < g.k; p0 += ks.kc) {
        const int64_t kc = std::min(ks.kc, g.k - p0);
        const bool last = p0 + kc >= g.k;
        pack_a_block(ks, g, a, i0, rows, p0, kc, a_pack.data());
        t.kc = kc;
        t.beta = p0 == 0 ? beta : T{1};
        // An A strip stays in L1 while it meets every B strip of a panel that stays in L2.
        for (int64_t panel = s0; panel < s1; panel += panel_strips) {
          const int64_t panel_end = std::min(s1, panel + panel_strips);
          for (int64_t ir = 0; ir < rows; ir += ks.mr) {
            t.rows = std::min(ks.mr, rows - ir);
            t.a = a_pack.data() + ir * kc;
            for (int64_t s = panel; s < panel_end; ++s) {
              const int64_t j0 = s * ks.nr;
              t.cols = std::min(ks.nr, g.n - j0);
              t.b = b.packed + p0 * b.n_padded + s * kc * ks.nr;
              t.c = c + (i0 + ir) * g.ldc + j0;
              run_tile(ks, t, last, plan, i0 + ir, j0);
            }
          }
        }
      }
    }
  });
}

template <class T>
void gemm_engine(const KernelSet<T>& ks, const GemmArgs& g, T alpha, const T* a, BOperand<T> b, T beta, T* c,
                 ThreadPool& pool, const GemmEpilogue<T>& epilogue) {
  if (g.m <= 0 || g.n <= 0) return;
  if (g.k <= 0) {
    gemm_empty_depth(g, beta, c, epilogue);
    return;
  }
  const EpiloguePlan<T> plan = plan_epilogue(epilogue);
  const bool serial = g.m * g.n * g.k < kInlineWork;
  const int threads = serial ? 1 : pool.num_threads();
  if (ks.direct && g.m <= kGemmDirectMaxRows && (b.packed != nullptr || !b.trans)) {
    gemm_direct(ks, g, alpha, a, b, beta, c, pool, plan, serial);
    return;
  }
  if (b.packed == nullptr) {
    // Shared by this call's tasks only; the calling thread is blocked in parallel_for until they finish.
    thread_local std::vector<T> b_pack;
    const int64_t strips = ceil_div(g.n, ks.nr);
    b.n_padded = strips * ks.nr;
    const size_t need = static_cast<size_t>(b.n_padded * g.k);
    if (b_pack.size() < need) b_pack.resize(need);
    T* dst = b_pack.data();
    pool.parallel_for(strips, threads == 1 ? strips : 1, [&](int64_t s0, int64_t s1) {
      pack_b_strips(ks, g, b.raw, s0, s1, dst);
    });
    b.packed = dst;
  }
  gemm_blocked(ks, g, alpha, a, b, beta, c, pool, plan, threads);
}

template <class T>
void gemm_typed(const GemmArgs& g, T alpha, const T* a, const T* b, T beta, T* c, ThreadPool& pool, GemmIsa isa,
                const GemmEpilogue<T>& epilogue) {
  BOperand<T> operand;
  operand.raw = b;
  operand.trans = g.trans_b;
  operand.ldb = g.ldb;
  gemm_engine(kernels_for<T>(isa), g, alpha, a, operand, beta, c, pool, epilogue);
}

template <class T>
void gemm_packed_typed(const GemmArgs& args, T alpha, const T* a, const PackedB<T>& b, T beta, T* c,
                       ThreadPool& pool, const GemmEpilogue<T>& epilogue) {
  const KernelSet<T> ks = kernels_for<T>(b.isa());
  BOperand<T> operand;
  operand.packed = b.data();
  operand.n_padded = round_up(b.n(), ks.nr);
  GemmArgs g = args;
  g.trans_b = false;
  gemm_engine(ks, g, alpha, a, operand, beta, c, pool, epilogue);
}

}  // namespace

template <class T>
PackedB<T> PackedB<T>::pack(const GemmArgs& args, const T* b, GemmIsa isa) {
  const KernelSet<T> ks = kernels_for<T>(isa);
  PackedB packed;
  packed.k_ = args.k;
  packed.n_ = args.n;
  packed.isa_ = ks.isa;
  const int64_t strips = ceil_div(args.n, ks.nr);
  packed.data_.resize(static_cast<size_t>(strips * ks.nr * std::max<int64_t>(args.k, 0)));
  if (args.k > 0 && args.n > 0) pack_b_strips(ks, args, b, 0, strips, packed.data_.data());
  return packed;
}

template class PackedB<float>;
template class PackedB<double>;

void gemm_f32_packed(const GemmArgs& args, float alpha, const float* a, const PackedB<float>& b, float beta, float* c,
                     ThreadPool& pool, const GemmEpilogue<float>& epilogue) {
  gemm_packed_typed(args, alpha, a, b, beta, c, pool, epilogue);
}

void gemm_f64_packed(const GemmArgs& args, double alpha, const double* a, const PackedB<double>& b, double beta,
                     double* c, ThreadPool& pool, const GemmEpilogue<double>& epilogue) {
  gemm_packed_typed(args, alpha, a, b, beta, c, pool, epilogue);
}

bool cpu_has_avx2_fma() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx512() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                          cpu_has_avx2_fma();
  return has;
#else
  return false;
#endif
}

GemmIsa best_gemm_isa() {
  if (cpu_has_avx512()) return GemmIsa::kAvx512;
  return cpu_has_avx2_fma() ? GemmIsa::kAvx2 : GemmIsa::kGeneric;
}

void gemm_f32(const GemmArgs& args, float alpha, const float* a, const float* b, float beta, float* c,
              ThreadPool& pool, GemmIsa isa, const GemmEpilogue<float>& epilogue) {
  gemm_typed(args, alpha, a, b, beta, c, pool, isa, epilogue);
}

void gemm_f64(const GemmArgs& args, double alpha, const double* a, const double* b, double beta, double* c,
              ThreadPool& pool, GemmIsa isa, const GemmEpilogue<double>& epilogue) {
  gemm_typed(args, alpha, a, b, beta, c, pool, isa, epilogue);
}

}  // namespace nxrt::cpu
