// Blocked GEMM engine (BLIS-style). k is cut into equal depth blocks (depth_block); op(B) is packed into
// NR-column strips stored k-major, per depth block: once per kernel (PackedB), or per call, either panel by
// panel inside the tasks (one M block: each B element meets one task) or up front in bounded chunks shared by
// all threads (several M blocks). The output is cut into tasks of whole MR-row strips x an N chunk; a task
// walks the depth blocks and packs its A rows into MR-row strips (k-major, zero-padded) in a thread-local
// buffer; then, panel by panel of B strips (kept in L2), each A strip meets every B strip of the panel in the
// tile kernel. The last depth block applies the epilogue inside the tile kernel (bias, Relu/LeakyRelu/Clip) or
// right after it on the tile's rows (other activations), while the tile is in cache.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/scratch_space.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/microkernels/gemm_microkernels.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu {

namespace {

template <class T>
using TileFn = void (*)(const GemmTile<T>& tile);

// One micro-kernel family with its blocking: depth blocks of kc, A blocks of mc rows, B panels of nc columns, or
// (nc 0) of as many NR-column strips as fit panel_bytes at the call's depth. The AVX-512 values were tuned on the
// dev machine's AMD EPYC (L1 48 KiB, L2 1 MiB per core, full-width AVX-512): depth blocks up to 1024 (f32) beat
// the L1-sized 384 by 4-6%, as C is then read and written once; for f64, 512 (the same 56 KiB A strip) beat 1024
// by 2-4% on 1024^3; mc hardly mattered. Panels of 256 KiB (2 strips at depth 768-1024, 10 at 192) beat fixed
// 256 columns (up to 1 MiB, which with the A rows overflowed L2) by 3-6% on GPT-2's 128 x 768 x {768, 3072} and
// the 1024^3 and MLP products, same on ViT's. The AVX2 families were tuned on a Zen 4 core (L1 32 KiB, L2 1 MiB)
// at the avx2 tier: f32 depth blocks up to 1024 and A blocks of 240 rows (against 512 and 120: GPT-2's 128-row
// products take one A block, so B streams from memory once, 15% faster in the model; 1024^3 at 2 threads 161 ->
// 207 GFLOP/s); f64 512 and 240 (against 256 and 120: 1024^3 85% -> 90% of the FMA peak at 1 thread).
// The other families are untuned. `direct` tile kernels accept any A / B strides (unpacked operands); the
// others need packed A (a_row_stride 1, a_k_stride mr) and packed B (b_k_stride nr).
template <class T>
struct KernelSet {
  GemmIsa isa = GemmIsa::kGeneric;
  int64_t mr = 0;
  int64_t nr = 0;
  int64_t kc = 0;
  int64_t mc = 0;
  int64_t nc = 0;
  int64_t panel_bytes = 0;
  TileFn<T> tile = nullptr;
  bool direct = false;
  // Packs one mr-row strip of a row-major A (see f32_pack_a_14__avx512); null: the portable loop.
  void (*pack_a_strip)(const T* a, int64_t lda, int64_t rows, int64_t kc, T* dst) = nullptr;
  // `tile` applies TileActivation::kGeluErf and kGeluTanh.
  bool tile_gelu = false;
  // One row of A against rows of an unpacked transposed B (see f32_dot_rows__avx512); null: no such path.
  void (*dot_rows)(const T* a, const T* b, int64_t ldb, int64_t n, int64_t k, T* c) = nullptr;
  // One row of A against `row_strips` packed B strips at once (see f32_gemm_row_strips__avx2); null: one strip per
  // tile.
  void (*row_strips_tile)(const GemmTile<T>& tile, int64_t strip_stride) = nullptr;
  int64_t row_strips = 1;
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
    default: return v;  // the Gelu forms are planned for tile_gelu kernel sets only
  }
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
    const T* residual = t.residual != nullptr ? t.residual + r * t.ld_residual : nullptr;
    for (int64_t j = 0; j < t.cols; ++j) {
      T v = t.alpha * row[j];
      if (t.beta != T{0}) v += t.beta * out[j];
      if (t.col_bias != nullptr) v += t.col_bias[j];
      if (residual != nullptr) v += residual[j];
      out[j] = activate_scalar(t, v + row_bias);
    }
  }
}

KernelSet<float> f32_kernels(GemmIsa isa) {
#if defined(__x86_64__)
  if (isa == GemmIsa::kAvx512 && cpu_isa_at_least(CpuIsa::kAvx512)) {
    return {GemmIsa::kAvx512, kAvx512F32TileM, kAvx512F32TileN, 1024, 20 * kAvx512F32TileM, 0, 256 * 1024,
            f32_gemm_14x32__avx512, true, f32_pack_a_14__avx512, true, f32_dot_rows__avx512,
            f32_gemm_row_strips__avx512, kAvx512F32RowStrips};
  }
  if ((isa == GemmIsa::kAvx2 || isa == GemmIsa::kAvx512) && cpu_isa_at_least(CpuIsa::kAvx2)) {
    return {GemmIsa::kAvx2, kAvx2F32TileM, kAvx2F32TileN, 1024, 40 * kAvx2F32TileM, 0, 256 * 1024,
            f32_gemm_6x16__avx2, true, f32_pack_a_6__avx2, true, f32_dot_rows__avx2, f32_gemm_row_strips__avx2,
            kAvx2F32RowStrips};
  }
#endif
  return {GemmIsa::kGeneric, kGemmF32TileM, kGemmF32TileN, kGemmBlockK, 16 * kGemmF32TileM, 512, 0,
          packed_tile<float, kGemmF32TileM, kGemmF32TileN,
                      packed_kernel_generic<float, kGemmF32TileM, kGemmF32TileN>>,
          false};
}

KernelSet<double> f64_kernels(GemmIsa isa) {
#if defined(__x86_64__)
  if (isa == GemmIsa::kAvx512 && cpu_isa_at_least(CpuIsa::kAvx512)) {
    return {GemmIsa::kAvx512, kAvx512F64TileM, kAvx512F64TileN, 512, 20 * kAvx512F64TileM, 0, 256 * 1024,
            f64_gemm_14x16__avx512, true, f64_pack_a_14__avx512};
  }
  if ((isa == GemmIsa::kAvx2 || isa == GemmIsa::kAvx512) && cpu_isa_at_least(CpuIsa::kAvx2)) {
    return {GemmIsa::kAvx2, kAvx2F64TileM, kAvx2F64TileN, 512, 40 * kAvx2F64TileM, 0, 256 * 1024,
            f64_gemm_6x8__avx2, true};
  }
#endif
  return {GemmIsa::kGeneric, kGemmF64TileM, kGemmF64TileN, kGemmBlockK, 16 * kGemmF64TileM, 256, 0,
          packed_tile<double, kGemmF64TileM, kGemmF64TileN,
                      packed_kernel_generic<double, kGemmF64TileM, kGemmF64TileN>>,
          false};
}

template <class T>
KernelSet<T> kernels_for(GemmIsa isa) {
  if constexpr (std::is_same_v<T, float>) {
    return f32_kernels(isa);
  } else {
    return f64_kernels(isa);
  }
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// Depth of the blocks that op(B) (packed) and op(A) are cut into: k in as few blocks of at most ks.kc as
// possible, of equal depth but the last (shorter by less than the block count), so no block is a short tail.
// PackedB's layout depends on it, so it is a function of (family, k) only.
template <class T>
int64_t depth_block(const KernelSet<T>& ks, int64_t k) {
  return k <= ks.kc ? std::max<int64_t>(k, 1) : ceil_div(k, ceil_div(k, ks.kc));
}

// Upper bound, in bytes, of the per-call B packing buffer (one per calling thread): op(B) is packed one
// depth block x column chunk at a time.
constexpr int64_t kPackBufferBytes = int64_t{4} << 20;

// op(B) packed: depth block p0 (a multiple of depth_block(ks, k)) starts at p0 * n_padded; strip s of a block
// whose depth is kc starts s * kc * nr further.
template <class T>
struct BOperand {
  const T* packed = nullptr;
  int64_t n_padded = 0;
  const T* raw = nullptr;
  bool trans = false;
  int64_t ldb = 0;
};

// Copies `cols` (<= nr) elements to `dst` and zero-fills it to nr; full strips use fixed-size copies.
template <class T>
void copy_strip_row(const T* src, int64_t cols, int64_t nr, T* dst) {
  constexpr int64_t kLine = 64 / sizeof(T);
  if (cols == nr && nr % kLine == 0) {
    for (int64_t c = 0; c < nr; c += kLine) std::memcpy(dst + c, src + c, 64);
    return;
  }
  std::memcpy(dst, src, static_cast<size_t>(cols) * sizeof(T));
  for (int64_t c = cols; c < nr; ++c) dst[c] = T{0};
}

// Packs depth [p0, p0 + kc) x strips [s0, s1) of op(B) into NR-column strips, k-major, zero-padded: strip s
// at dst + (s - s0) * kc * nr. B is read in row blocks of kPackRows (sequential along B's rows, writes within
// a few lines of each strip); B^T column by column of op(B) (sequential along B^T's rows).
template <class T>
void pack_b_block(const KernelSet<T>& ks, const GemmArgs& g, const T* b, int64_t p0, int64_t kc, int64_t s0,
                  int64_t s1, T* dst) {
  constexpr int64_t kPackRows = 8;
  const int64_t nr = ks.nr;
  if (g.trans_b) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t j0 = s * nr;
      const int64_t cols = std::min(nr, g.n - j0);
      T* out = dst + (s - s0) * kc * nr;
      for (int64_t c = 0; c < cols; ++c) {
        const T* col = b + (j0 + c) * g.ldb + p0;
        for (int64_t p = 0; p < kc; ++p) out[p * nr + c] = col[p];
      }
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t c = cols; c < nr; ++c) out[p * nr + c] = T{0};
      }
    }
    return;
  }
  for (int64_t pb = 0; pb < kc; pb += kPackRows) {
    const int64_t depth = std::min(kPackRows, kc - pb);
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t j0 = s * nr;
      const int64_t cols = std::min(nr, g.n - j0);
      T* out = dst + (s - s0) * kc * nr + pb * nr;
      for (int64_t p = 0; p < depth; ++p) copy_strip_row(b + (p0 + pb + p) * g.ldb + j0, cols, nr, out + p * nr);
    }
  }
}

// Packs strips [s0, s1) of every depth block of op(B) into `dst` (the layout BOperand describes).
template <class T>
void pack_b_strips(const KernelSet<T>& ks, const GemmArgs& g, const T* b, int64_t s0, int64_t s1, T* dst) {
  const int64_t n_padded = round_up(g.n, ks.nr);
  const int64_t kc_block = depth_block(ks, g.k);
  for (int64_t p0 = 0; p0 < g.k; p0 += kc_block) {
    const int64_t kc = std::min(kc_block, g.k - p0);
    pack_b_block(ks, g, b, p0, kc, s0, s1, dst + p0 * n_padded + s0 * kc * ks.nr);
  }
}

// The MR-row strips of a block of rows: as few as MR allows, sizes differing by at most one, so that no strip is
// left with a few rows (a tile kernel's time per row grows as its row count falls: m = 128 was 9 strips of 14
// and one of 2). Packed strip q sits at q * MR * kc.
struct RowStrips {
  int64_t rows = 0;
  int64_t mr = 1;
  int64_t count() const { return (rows + mr - 1) / mr; }
  int64_t begin(int64_t q) const { return q * rows / count(); }
  int64_t size(int64_t q) const { return begin(q + 1) - begin(q); }
};

// Packs rows [i0, i0 + rows) x depth [p0, p0 + kc) of op(A) into MR-row strips, k-major, zero-padded.
template <class T>
void pack_a_block(const KernelSet<T>& ks, const GemmArgs& g, const T* a, int64_t i0, int64_t rows, int64_t p0,
                  int64_t kc, T* dst) {
  const int64_t mr = ks.mr;
  const RowStrips strips{rows, mr};
  for (int64_t q = 0; q < strips.count(); ++q) {
    const int64_t strip = strips.begin(q);
    const int64_t count = strips.size(q);
    T* out = dst + q * mr * kc;
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
  const T* residual = nullptr;
  int64_t ld_residual = 0;
  TileActivation in_tile = TileActivation::kNone;
  float alpha = 0.0f;
  float beta = 0.0f;
  const FusedActivation* after = nullptr;
};

template <class T>
EpiloguePlan<T> plan_epilogue(const GemmEpilogue<T>& epilogue, bool tile_gelu) {
  EpiloguePlan<T> plan;
  plan.bias = epilogue.bias;
  plan.bias_per_row = epilogue.bias_per_row;
  plan.residual = epilogue.residual;
  plan.ld_residual = epilogue.ld_residual;
  plan.alpha = epilogue.activation.alpha;
  plan.beta = epilogue.activation.beta;
  switch (epilogue.activation.kind) {
    case ActivationKind::kNone: break;
    case ActivationKind::kRelu: plan.in_tile = TileActivation::kRelu; break;
    case ActivationKind::kLeakyRelu: plan.in_tile = TileActivation::kLeakyRelu; break;
    case ActivationKind::kClip: plan.in_tile = TileActivation::kClip; break;
    case ActivationKind::kGelu:
    case ActivationKind::kGeluTanh:
      if (!tile_gelu) {
        plan.after = &epilogue.activation;
      } else {
        plan.in_tile = epilogue.activation.kind == ActivationKind::kGelu ? TileActivation::kGeluErf
                                                                          : TileActivation::kGeluTanh;
      }
      break;
    default: plan.after = &epilogue.activation; break;
  }
  return plan;
}

// Runs one tile whose C origin is (i, j); `last` adds the epilogue. strip_stride > 0: a one-row tile over
// ks.row_strips packed B strips that far apart (ks.row_strips_tile).
template <class T>
void run_tile(const KernelSet<T>& ks, GemmTile<T>& t, bool last, const EpiloguePlan<T>& plan, int64_t i,
              int64_t j, int64_t strip_stride = 0) {
  if (last) {
    if (plan.bias != nullptr) {
      (plan.bias_per_row ? t.row_bias : t.col_bias) = plan.bias + (plan.bias_per_row ? i : j);
    }
    if (plan.residual != nullptr) {
      t.residual = plan.residual + i * plan.ld_residual + j;
      t.ld_residual = plan.ld_residual;
    }
    t.activation = plan.in_tile;
    t.activation_alpha = plan.alpha;
    t.activation_beta = plan.beta;
  }
  if (strip_stride > 0) {
    ks.row_strips_tile(t, strip_stride);
  } else {
    ks.tile(t);
  }
  t.col_bias = t.row_bias = t.residual = nullptr;
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
      if (epilogue.residual != nullptr) v += epilogue.residual[i * epilogue.ld_residual + j];
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
  const int64_t depth = b.packed != nullptr ? depth_block(ks, g.k) : kRawDepth;
  // One row against a packed B: whole groups of ks.row_strips strips per tile (several B streams at once).
  const int64_t group = g.m == 1 && b.packed != nullptr && ks.row_strips_tile != nullptr ? ks.row_strips : 1;
  const RunLimits* limits = current_run_limits();
  pool.parallel_for(ceil_div(strips, group), serial ? strips : 1, [&](int64_t group_begin, int64_t group_end) {
    if (run_should_stop(limits)) return;
    const int64_t begin = group_begin * group;
    const int64_t end = std::min(strips, group_end * group);
    GemmTile<T> t;
    t.rows = g.m;
    t.a_row_stride = g.trans_a ? 1 : g.lda;
    t.a_k_stride = g.trans_a ? g.lda : 1;
    t.ldc = g.ldc;
    t.alpha = alpha;
    t.b_k_stride = b.packed != nullptr ? ks.nr : b.ldb;
    t.prefetch_b = true;  // each B strip meets one A strip
    for (int64_t p0 = 0; p0 < g.k; p0 += depth) {
      t.kc = std::min(depth, g.k - p0);
      t.a = a + p0 * t.a_k_stride;
      t.beta = p0 == 0 ? beta : T{1};
      const bool last = p0 + t.kc >= g.k;
      for (int64_t s = begin; s < end;) {
        const int64_t j0 = s * ks.nr;
        const int64_t together = s + group <= end ? group : 1;
        t.cols = std::min(together * ks.nr, g.n - j0);
        t.c = c + j0;
        t.b = b.packed != nullptr ? b.packed + p0 * b.n_padded + s * t.kc * ks.nr : b.raw + p0 * b.ldb + j0;
        run_tile(ks, t, last, plan, 0, j0, together > 1 ? t.kc * ks.nr : 0);
        s += together;
      }
    }
  });
}

// Neither operand packed, for a short depth and a raw op(B) small enough to stay in L2 (attention's Q K^T and
// P V: 4-18% faster than packing both), on one thread (split over two threads, some such shapes ran slower):
// each B column strip (k x nr, strided rows, in L1) meets every MR-row strip of A over the whole depth.
template <class T>
void gemm_unpacked(const KernelSet<T>& ks, const GemmArgs& g, T alpha, const T* a, const BOperand<T>& b, T beta,
                   T* c, const EpiloguePlan<T>& plan) {
  const RowStrips row_strips{g.m, ks.mr};
  GemmTile<T> t;
  t.kc = g.k;
  t.a_row_stride = g.lda;
  t.a_k_stride = 1;
  t.b_k_stride = b.ldb;
  t.ldc = g.ldc;
  t.alpha = alpha;
  t.beta = beta;
  for (int64_t j0 = 0; j0 < g.n; j0 += ks.nr) {
    t.cols = std::min(ks.nr, g.n - j0);
    t.b = b.raw + j0;
    for (int64_t q = 0; q < row_strips.count(); ++q) {
      const int64_t i0 = row_strips.begin(q);
      t.rows = row_strips.size(q);
      t.a = a + i0 * g.lda;
      t.prefetch_b = q == 0;
      t.c = c + i0 * g.ldc + j0;
      run_tile(ks, t, true, plan, i0, j0);
    }
  }
}

template <class T>
bool fits_unpacked(const KernelSet<T>& ks, const GemmArgs& g, const BOperand<T>& b, int threads) {
  constexpr int64_t kMaxDepth = 256;
  constexpr int64_t kMaxBBytes = 256 * 1024;
  return threads == 1 && ks.direct && b.packed == nullptr && !b.trans && !g.trans_a && g.k <= kMaxDepth &&
         g.k * g.n * static_cast<int64_t>(sizeof(T)) <= kMaxBBytes;
}

// How gemm_blocked cuts C into tasks: m_blocks blocks of whole MR-row strips (block b: strips
// [b * m_strips / m_blocks, next block's), at most ks.mc rows, sizes differing by at most one strip) times
// n_chunks ranges of `chunk` NR-column strips.
struct TaskGrid {
  int64_t m_strips = 0, m_blocks = 0;
  int64_t chunk = 0, n_chunks = 0;
};

template <class T>
TaskGrid plan_tasks(const KernelSet<T>& ks, const GemmArgs& g, int threads) {
  TaskGrid grid;
  const int64_t strips = ceil_div(g.n, ks.nr);
  grid.m_strips = ceil_div(g.m, ks.mr);
  grid.m_blocks = ceil_div(grid.m_strips, std::max<int64_t>(1, ks.mc / ks.mr));
  grid.chunk = strips;
  grid.n_chunks = 1;
  // Enough tasks for every thread. Each N chunk packs its A rows again and each M block reads all of B again,
  // so the dimension whose split repeats less work goes first: M when op(A) is the larger operand (m >= n), or
  // when M is tall enough for at least kMinRowsPerMBlock rows in each of two blocks per thread (a block reuses
  // each B panel over its rows, while repacking all of A per N chunk costs more: MLP 256x1024x1024 at 2 threads
  // 4.7 -> 4.2 ms; shorter blocks, GPT-2 at 128 rows, measured slower).
  constexpr int64_t kMinRowsPerMBlock = 64;
  const bool m_first = g.m >= g.n || g.m >= 2 * threads * kMinRowsPerMBlock;
  while (threads > 1 && m_first && grid.m_blocks < 2 * threads && grid.m_blocks < grid.m_strips) {
    ++grid.m_blocks;
  }
  while (threads > 1 && grid.m_blocks * grid.n_chunks < 2 * threads && grid.chunk > 1) {
    grid.chunk = ceil_div(grid.chunk, 2);
    grid.n_chunks = ceil_div(strips, grid.chunk);
  }
  while (grid.m_blocks * grid.n_chunks < threads && grid.m_blocks < grid.m_strips) ++grid.m_blocks;
  // Equal shares: with M blocks only, a multiple of the thread count (tasks are taken in order, one at a time).
  if (threads > 1 && grid.n_chunks == 1) grid.m_blocks = std::min(grid.m_strips, round_up(grid.m_blocks, threads));
  return grid;
}

// Whether a task's tiles read A where it lies (row-major, kernels that take any A strides) instead of packing
// it: when an MR-row strip of one depth block stays in L1 (42 KiB) while it meets at most 24 B strips, packing
// costs more than the strided broadcasts (ViT shapes, k 64-768 x n 64-768: 1-15% faster); longer depth or
// more strips reuse the packed strip enough to pay for it (m 128 x k 3072 x n 768: 1.27x slower unpacked).
template <class T>
bool reads_a_in_place(const KernelSet<T>& ks, const GemmArgs& g, int64_t kc, int64_t strips) {
  constexpr int64_t kL1StripBytes = 42 * 1024;
  constexpr int64_t kMaxStrips = 24;
  return ks.direct && !g.trans_a && kc * ks.mr * static_cast<int64_t>(sizeof(T)) <= kL1StripBytes &&
         strips <= kMaxStrips;
}

// b.packed null: only for grids with one M block (each B element used by one task); each task then packs the
// kc x nc panel of B it is about to use into a thread-local buffer (kept in L2 for the whole panel).
template <class T>
void gemm_blocked(const KernelSet<T>& ks, const GemmArgs& g, T alpha, const T* a, const BOperand<T>& b, T beta,
                  T* c, ThreadPool& pool, const EpiloguePlan<T>& plan, int threads, const TaskGrid& grid) {
  const int64_t strips = ceil_div(g.n, ks.nr);
  const int64_t m_strips = grid.m_strips;
  const int64_t m_blocks = grid.m_blocks;
  const int64_t chunk = grid.chunk;
  const int64_t n_chunks = grid.n_chunks;
  const int64_t kc_block = depth_block(ks, g.k);
  const int64_t panel_strips =
      std::max<int64_t>(1, ks.nc > 0 ? ks.nc / ks.nr
                                     : ks.panel_bytes / (kc_block * ks.nr * static_cast<int64_t>(sizeof(T))));
  const int64_t tasks = m_blocks * n_chunks;
  const RunLimits* limits = current_run_limits();
  pool.parallel_for(tasks, threads == 1 ? tasks : 1, [&](int64_t begin, int64_t end) {
    const size_t a_need = static_cast<size_t>(ceil_div(m_strips, m_blocks) * ks.mr * kc_block);
    T* const a_pack = static_cast<T*>(scratch_buffer(ScratchUse::kGemmPackedA, a_need * sizeof(T)));
    T* b_panel = nullptr;
    if (b.packed == nullptr) {
      const size_t panel_need = static_cast<size_t>(panel_strips * ks.nr * kc_block);
      b_panel = static_cast<T*>(scratch_buffer(ScratchUse::kGemmPanelB, panel_need * sizeof(T)));
    }
    GemmTile<T> t;  // the A strides are set per depth block (packed or read in place)
    t.b_k_stride = ks.nr;
    t.ldc = g.ldc;
    t.alpha = alpha;
    for (int64_t task = begin; task < end; ++task) {
      if (run_should_stop(limits)) return;
      const int64_t m_block = task / n_chunks;
      const int64_t i0 = m_block * m_strips / m_blocks * ks.mr;
      const int64_t rows = std::min(g.m, (m_block + 1) * m_strips / m_blocks * ks.mr) - i0;
      const RowStrips row_strips{rows, ks.mr};
      const int64_t s0 = (task % n_chunks) * chunk;
      const int64_t s1 = std::min(strips, s0 + chunk);
      for (int64_t p0 = 0; p0 < g.k; p0 += kc_block) {
        const int64_t kc = std::min(kc_block, g.k - p0);
        const bool last = p0 + kc >= g.k;
        const bool direct_a = reads_a_in_place(ks, g, kc, s1 - s0);
        if (!direct_a) pack_a_block(ks, g, a, i0, rows, p0, kc, a_pack);
        t.a_row_stride = direct_a ? g.lda : 1;
        t.a_k_stride = direct_a ? 1 : ks.mr;
        t.kc = kc;
        t.beta = p0 == 0 ? beta : T{1};
        // An A strip stays in L1 while it meets every B strip of a panel that stays in L2.
        for (int64_t panel = s0; panel < s1; panel += panel_strips) {
          const int64_t panel_end = std::min(s1, panel + panel_strips);
          const T* panel_b = b_panel;
          if (b.packed != nullptr) {
            panel_b = b.packed + p0 * b.n_padded + panel * kc * ks.nr;
          } else {
            pack_b_block(ks, g, b.raw, p0, kc, panel, panel_end, b_panel);
          }
          for (int64_t q = 0; q < row_strips.count(); ++q) {
            const int64_t ir = row_strips.begin(q);
            t.rows = row_strips.size(q);
            t.a = direct_a ? a + (i0 + ir) * g.lda + p0 : a_pack + q * ks.mr * kc;
            t.prefetch_b = q == 0;  // later A strips find the panel in L2
            for (int64_t s = panel; s < panel_end; ++s) {
              const int64_t j0 = s * ks.nr;
              t.cols = std::min(ks.nr, g.n - j0);
              t.b = panel_b + (s - panel) * kc * ks.nr;
              t.c = c + (i0 + ir) * g.ldc + j0;
              run_tile(ks, t, last, plan, i0 + ir, j0);
            }
          }
        }
      }
    }
  });
}

// A few rows of A against an unpacked transposed B without packing it (packing a k x n B^T for one row costs more
// than the product: attention's Q K^T at decode): C[i, j] = alpha * dot(A row i, B row j), tasks over ranges of
// B's rows. Only for beta 0 and no epilogue.
constexpr int64_t kDotRowsMaxRows = 2;

template <class T>
bool dot_rows_applies(const KernelSet<T>& ks, const GemmArgs& g, const BOperand<T>& b, T beta,
                      const EpiloguePlan<T>& plan) {
  return ks.dot_rows != nullptr && b.packed == nullptr && b.trans && !g.trans_a && g.m <= kDotRowsMaxRows &&
         beta == T{0} && plan.bias == nullptr && plan.residual == nullptr && plan.in_tile == TileActivation::kNone &&
         plan.after == nullptr;
}

template <class T>
void gemm_dot_rows(const KernelSet<T>& ks, const GemmArgs& g, T alpha, const T* a, const BOperand<T>& b, T* c,
                   ThreadPool& pool, bool serial) {
  const RunLimits* limits = current_run_limits();
  const int64_t grain = std::max<int64_t>(16, 32768 / std::max<int64_t>(1, g.k * g.m));
  pool.parallel_for(g.n, serial ? g.n : grain, [&](int64_t begin, int64_t end) {
    if (run_should_stop(limits)) return;
    for (int64_t i = 0; i < g.m; ++i) {
      T* row = c + i * g.ldc;
      ks.dot_rows(a + i * g.lda, b.raw + begin * b.ldb, b.ldb, end - begin, g.k, row + begin);
      if (alpha != T{1}) {
        for (int64_t j = begin; j < end; ++j) row[j] *= alpha;
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
  const EpiloguePlan<T> plan = plan_epilogue(epilogue, ks.tile_gelu);
  const bool serial = g.m * g.n * g.k < kInlineWork;
  const int threads = serial ? 1 : pool.num_threads();
  if (dot_rows_applies(ks, g, b, beta, plan)) {
    gemm_dot_rows(ks, g, alpha, a, b, c, pool, serial);
    return;
  }
  if (ks.direct && g.m <= std::min(kGemmDirectMaxRows, ks.mr) && (b.packed != nullptr || !b.trans)) {
    gemm_direct(ks, g, alpha, a, b, beta, c, pool, plan, serial);
    return;
  }
  if (fits_unpacked(ks, g, b, threads)) {
    gemm_unpacked(ks, g, alpha, a, b, beta, c, plan);
    return;
  }
  if (b.packed != nullptr) {
    gemm_blocked(ks, g, alpha, a, b, beta, c, pool, plan, threads, plan_tasks(ks, g, threads));
    return;
  }
  const TaskGrid grid = plan_tasks(ks, g, threads);
  if (grid.m_blocks == 1) {
    gemm_blocked(ks, g, alpha, a, b, beta, c, pool, plan, threads, grid);
    return;
  }
  // op(B) is packed one block (one depth block x a column chunk that fits kPackBufferBytes) at a time, all
  // threads packing it, then every thread uses it: a sub-GEMM per block, accumulating into C after the first
  // depth block; the epilogue comes with the last depth block of each chunk.
  const int64_t kc_block = depth_block(ks, g.k);
  const int64_t chunk_cols =
      std::max(ks.nr, kPackBufferBytes / static_cast<int64_t>(sizeof(T)) / kc_block / ks.nr * ks.nr);
  // Shared by this call's tasks only; the calling thread is blocked in parallel_for until they finish.
  const size_t need = static_cast<size_t>(round_up(std::min(chunk_cols, g.n), ks.nr) * kc_block);
  T* const dst = static_cast<T*>(scratch_buffer(ScratchUse::kGemmPackedB, need * sizeof(T)));
  const RunLimits* limits = current_run_limits();
  for (int64_t j0 = 0; j0 < g.n; j0 += chunk_cols) {
    for (int64_t p0 = 0; p0 < g.k; p0 += kc_block) {
      if (run_should_stop(limits)) return;
      GemmArgs sub = g;
      sub.n = std::min(chunk_cols, g.n - j0);
      sub.k = std::min(kc_block, g.k - p0);
      const T* b_block = b.raw + (g.trans_b ? j0 * g.ldb + p0 : p0 * g.ldb + j0);
      const int64_t strips = ceil_div(sub.n, ks.nr);
      pool.parallel_for(strips, threads == 1 ? strips : 1, [&](int64_t s0, int64_t s1) {
        pack_b_strips(ks, sub, b_block, s0, s1, dst);
      });
      BOperand<T> block;
      block.packed = dst;
      block.n_padded = strips * ks.nr;
      EpiloguePlan<T> block_plan;
      if (p0 + sub.k >= g.k) {
        block_plan = plan;
        if (block_plan.bias != nullptr && !block_plan.bias_per_row) block_plan.bias += j0;
        if (block_plan.residual != nullptr) block_plan.residual += j0;
      }
      gemm_blocked(ks, sub, alpha, a + (g.trans_a ? p0 * g.lda : p0), block, p0 == 0 ? beta : T{1}, c + j0, pool,
                   block_plan, threads, plan_tasks(ks, sub, threads));
    }
  }
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
  packed.data_ = PackedArray<T>(static_cast<size_t>(strips * ks.nr * std::max<int64_t>(args.k, 0)));
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

GemmIsa best_gemm_isa() {
  if (cpu_isa_at_least(CpuIsa::kAvx512)) return GemmIsa::kAvx512;
  return cpu_isa_at_least(CpuIsa::kAvx2) ? GemmIsa::kAvx2 : GemmIsa::kGeneric;
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
