// The GEMM tile kernel shared by the AVX2 and AVX-512 families (gemm_microkernels.h has the GemmTile contract),
// written once over a vector traits type and included only by translation units compiled for that ISA
// (avx2/gemm_avx2.cpp, avx512/gemm_avx512.cpp), which define the traits.
//
// The accumulators are 2 * rows vector registers; each k step loads two B vectors and broadcasts one A element per
// row. Tiles with fewer rows run a kernel instantiated for that row count; with few rows (V::kDualSetRows or
// fewer) the k loop keeps two accumulator sets to hide FMA latency. Tiles narrower than two vectors read B, C, the
// bias and the residual and write C through lane masks, so callers never pad C or B. row_strips_kernel runs one row
// against several strips of a packed B at once (the GEMV case).
//
// Traits V: Reg, Mask, kLanes, kDualSetRows; zero(), set1(x), load(p), load(mask, p), store(p, v),
// store(mask, p, v), fma(a, b, c) = a * b + c, add, mul, max, min (returning the second operand when either is
// NaN), scale_negative(v, slope) (v < 0 ? v * slope : v) and lanes(n) (the first n lanes, n clamped to [0, kLanes]).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <utility>

#include "ep/cpu/microkernels/gemm_microkernels.h"

namespace nxrt::cpu::gemm_tile {

// max(bound, v) / min(bound, v) return v when v is NaN, matching the portable tile's scalar forms.
template <class V, class T>
typename V::Reg activate(const GemmTile<T>& t, typename V::Reg v) {
  switch (t.activation) {
    case TileActivation::kNone: return v;
    case TileActivation::kRelu: return V::max(V::zero(), v);
    case TileActivation::kLeakyRelu: return V::scale_negative(v, V::set1(static_cast<T>(t.activation_alpha)));
    case TileActivation::kClip:
      return V::min(V::set1(static_cast<T>(t.activation_beta)),
                    V::max(V::set1(static_cast<T>(t.activation_alpha)), v));
    default: return v;  // the Gelu forms: applied by the family's entry point after the stores, where supported
  }
}

// The epilogue of a tile whose k loop has left its sums in c0 / c1 (columns [0, L) / [L, 2L) of each row): alpha,
// beta * C, the biases, the residual and the in-register activation, then the stores (through lane masks when
// kMasked).
template <class V, class T, int kRows, bool kMasked, bool kOneVector>
[[gnu::always_inline]] inline void finish_tile(const GemmTile<T>& t, typename V::Reg (&c0)[kRows],
                                               typename V::Reg (&c1)[kRows]) {
  using Reg = typename V::Reg;
  constexpr int L = V::kLanes;
  const typename V::Mask m0 = V::lanes(t.cols);
  const typename V::Mask m1 = V::lanes(t.cols - L);
  const auto load0 = [&](const T* p) { return kMasked ? V::load(m0, p) : V::load(p); };
  const auto load1 = [&](const T* p) { return kOneVector ? V::zero() : kMasked ? V::load(m1, p) : V::load(p); };
  const bool scale = t.alpha != T{1};
  const Reg alpha = V::set1(t.alpha);
  const Reg beta = V::set1(t.beta);
  Reg bias0 = V::zero();
  Reg bias1 = V::zero();
  if (t.col_bias != nullptr) {
    bias0 = load0(t.col_bias);
    bias1 = load1(t.col_bias + L);
  }
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) {
    T* c = t.c + r * t.ldc;
    Reg v0 = c0[r];
    Reg v1 = c1[r];
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
      v0 = activate<V>(t, v0);
      v1 = activate<V>(t, v1);
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

// The k loop of tile_kernel: adds A(r, p) * B(p, c) over the tile's depth to the kSets accumulator sets (alternate
// depth steps; an odd last step goes to the first set). kPrefetchB: B rows kBPrefetchSteps ahead are prefetched,
// one line per vector of columns per step, for a B strip read for the first time (from memory); a strip that the
// previous A strip has just read is in L2, where the prefetches only take load slots (on Zen 3 at 2 threads the
// 512 x 768 x 2048 product ran 0.81-0.86x onnxruntime with them on every tile, 0.96-1.01x without).
template <class V, class T, int kRows, int kSets, bool kUnitRowStride, bool kMasked, bool kOneVector, bool kPrefetchB>
[[gnu::always_inline]] inline void accumulate_depth(const GemmTile<T>& t, typename V::Reg (&c0)[kSets][kRows],
                                                    typename V::Reg (&c1)[kSets][kRows]) {
  using Reg = typename V::Reg;
  constexpr int L = V::kLanes;
  constexpr int kLineElements = static_cast<int>(64 / sizeof(T));
  constexpr int64_t kBPrefetchSteps = 24;
  const typename V::Mask m0 = V::lanes(t.cols);
  const typename V::Mask m1 = V::lanes(t.cols - L);
  const auto load0 = [&](const T* p) { return kMasked ? V::load(m0, p) : V::load(p); };
  const auto load1 = [&](const T* p) { return kOneVector ? V::zero() : kMasked ? V::load(m1, p) : V::load(p); };
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
      if constexpr (kPrefetchB) {
#pragma GCC unroll 2
        for (int offset = 0; offset < 2 * L; offset += kLineElements) {
          _mm_prefetch(reinterpret_cast<const char*>(bp + kBPrefetchSteps * bs + offset), _MM_HINT_T0);
        }
      }
      const Reg b0 = load0(bp);
      const Reg b1 = load1(bp + L);
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
      const Reg b0 = load0(b);
      const Reg b1 = load1(b + L);
#pragma GCC unroll 16
      for (int r = 0; r < kRows; ++r) {
        const Reg x = V::set1(a[r * rs]);
        c0[0][r] = V::fma(x, b0, c0[0][r]);
        if constexpr (!kOneVector) c1[0][r] = V::fma(x, b1, c1[0][r]);
      }
    }
  }
}

// kMasked: fewer than two vectors of columns. kOneVector: at most one vector of columns, so the second
// accumulator column is neither computed nor stored.
template <class V, class T, int kRows, bool kUnitRowStride, bool kMasked, bool kOneVector>
void tile_kernel(const GemmTile<T>& t) {
  using Reg = typename V::Reg;
  constexpr int L = V::kLanes;
  constexpr int kSets = kRows <= V::kDualSetRows ? 2 : 1;
  Reg c0[kSets][kRows];
  Reg c1[kSets][kRows];
#pragma GCC unroll 16
  for (int s = 0; s < kSets; ++s) {
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) c0[s][r] = c1[s][r] = V::zero();
  }
  // C is read (beta != 0) and written only after the k loop: start bringing its lines in now.
  constexpr int kLineElements = static_cast<int>(64 / sizeof(T));
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 2
    for (int offset = 0; offset < 2 * L; offset += kLineElements) {
      _mm_prefetch(reinterpret_cast<const char*>(t.c + r * t.ldc + offset), _MM_HINT_T0);
    }
  }
  if (t.prefetch_b) {
    accumulate_depth<V, T, kRows, kSets, kUnitRowStride, kMasked, kOneVector, true>(t, c0, c1);
  } else {
    accumulate_depth<V, T, kRows, kSets, kUnitRowStride, kMasked, kOneVector, false>(t, c0, c1);
  }
  if constexpr (kSets > 1) {
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
      c0[0][r] = V::add(c0[0][r], c0[1][r]);
      c1[0][r] = V::add(c1[0][r], c1[1][r]);
    }
  }
  finish_tile<V, T, kRows, kMasked, kOneVector>(t, c0[0], c1[0]);
}

template <class V, class T, int kRows>
void dispatch_layout(const GemmTile<T>& t) {
  constexpr int kTileN = 2 * V::kLanes;
  const bool masked = t.cols < kTileN;
  const bool one_vector = t.cols <= V::kLanes;
  if (t.a_row_stride == 1) {
    if (one_vector) return tile_kernel<V, T, kRows, true, true, true>(t);
    masked ? tile_kernel<V, T, kRows, true, true, false>(t) : tile_kernel<V, T, kRows, true, false, false>(t);
  } else {
    if (one_vector) return tile_kernel<V, T, kRows, false, true, true>(t);
    masked ? tile_kernel<V, T, kRows, false, true, false>(t) : tile_kernel<V, T, kRows, false, false, false>(t);
  }
}

template <class V, class T, int... kRows>
void dispatch_rows(const GemmTile<T>& t, std::integer_sequence<int, kRows...>) {
  (void)((t.rows == kRows + 1 ? (dispatch_layout<V, T, kRows + 1>(t), true) : false) || ...);
}

// Runs `t` (1 <= t.rows <= kMaxRows) with the kernel for its row count.
template <class V, int kMaxRows, class T>
void run_tile(const GemmTile<T>& t) {
  dispatch_rows<V>(t, std::make_integer_sequence<int, kMaxRows>{});
}

// One row of A (t.rows == 1) against kStrips consecutive B strips of 2 * kLanes columns each, strip_stride elements
// apart (a packed B, whose padding columns read as zeros), t.cols <= kStrips * 2 * kLanes of them stored: the GEMV
// case, where kStrips B streams in flight read memory faster than one. Each column is summed as tile_kernel sums a
// one-row tile (two accumulator sets, alternate depth steps; an odd last step goes to the first set), so the
// results are bitwise those of kStrips one-strip tiles.
template <class V, class T, int kStrips>
void row_strips_kernel(const GemmTile<T>& t, int64_t strip_stride) {
  using Reg = typename V::Reg;
  constexpr int L = V::kLanes;
  Reg c0[2][kStrips];
  Reg c1[2][kStrips];
#pragma GCC unroll 8
  for (int i = 0; i < kStrips; ++i) c0[0][i] = c1[0][i] = c0[1][i] = c1[1][i] = V::zero();
  const T* a = t.a;
  const T* b = t.b;
  const int64_t ks = t.a_k_stride;
  const int64_t bs = t.b_k_stride;
  int64_t p = 0;
  for (; p + 2 <= t.kc; p += 2) {
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
      const Reg x = V::set1(a[s * ks]);
#pragma GCC unroll 8
      for (int i = 0; i < kStrips; ++i) {
        const T* bp = b + i * strip_stride + s * bs;
        c0[s][i] = V::fma(x, V::load(bp), c0[s][i]);
        c1[s][i] = V::fma(x, V::load(bp + L), c1[s][i]);
      }
    }
    a += 2 * ks;
    b += 2 * bs;
  }
  if (p < t.kc) {
    const Reg x = V::set1(a[0]);
#pragma GCC unroll 8
    for (int i = 0; i < kStrips; ++i) {
      c0[0][i] = V::fma(x, V::load(b + i * strip_stride), c0[0][i]);
      c1[0][i] = V::fma(x, V::load(b + i * strip_stride + L), c1[0][i]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kStrips; ++i) {
    Reg v0[1] = {V::add(c0[0][i], c0[1][i])};
    Reg v1[1] = {V::add(c1[0][i], c1[1][i])};
    GemmTile<T> strip = t;
    const int64_t col0 = int64_t{i} * 2 * L;
    if (col0 >= t.cols) break;
    strip.c += col0;
    strip.cols = t.cols - col0 < 2 * L ? t.cols - col0 : 2 * L;
    if (strip.col_bias != nullptr) strip.col_bias += col0;
    if (strip.residual != nullptr) strip.residual += col0;
    if (strip.cols == 2 * L) {
      finish_tile<V, T, 1, false, false>(strip, v0, v1);
    } else if (strip.cols > L) {
      finish_tile<V, T, 1, true, false>(strip, v0, v1);
    } else {
      finish_tile<V, T, 1, true, true>(strip, v0, v1);
    }
  }
}

}  // namespace nxrt::cpu::gemm_tile
