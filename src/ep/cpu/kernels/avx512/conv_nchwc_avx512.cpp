// AVX-512 micro-kernel of the blocked-channel f32 convolution (contract in
// ep/cpu/nchwc.h). Compiled with -mavx512f and friends; callers check the CPU
// first.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined_ps() pass-through operand inside
// _mm512_max_ps/_mm512_min_ps as maybe-uninitialized; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>

#include "ep/cpu/kernels/avx512/activation_avx512.h"
#include "ep/cpu/nchwc.h"

namespace nxrt::cpu::nchwc {

namespace {

constexpr int kLanes = static_cast<int>(kBlock);
// Output pixels of one interior tile: OB * kMaxPixels accumulators + OB weights
// + 1 broadcast fit 32 registers.
constexpr int kMaxPixels = 12;
// Independent accumulator chains of an edge pixel (hides the FMA latency a
// single chain would expose).
constexpr int kEdgeChains = 4;

// Where one tile's taps start and what it may read: rows [kh_begin, kh_end) and
// columns [kw_begin, kw_end) of the kernel are inside the input for every pixel
// of the tile.
struct TileWindow {
  int64_t ih0, iw0; // input position of tap (0, 0) for the tile's first pixel
  int64_t kh_begin, kh_end, kw_begin, kw_end;
};

struct Shapes {
  int64_t in_blocks_or_channels; // blocked: input blocks; plain: input channels
  int64_t kernel_h, kernel_w;
  int64_t in_plane;       // floats per input block (blocked) or channel (plain)
  int64_t weights_per_in; // floats of one output block's weights per input
                          // block / channel
  int64_t out_block_stride;
};

template <int OB>
inline void store_outputs(const ConvJob &job, int64_t block, int64_t oh,
                          int64_t ow, const __m512 &acc, int o) {
  const int64_t at = (((block + o) * job.out_h + oh) * job.out_w + ow) * kBlock;
  __m512 v = _mm512_add_ps(
      acc, _mm512_loadu_ps(job.weights->bias() + (block + o) * kBlock));
  if (job.z != nullptr)
    v = _mm512_add_ps(v, _mm512_loadu_ps(job.z + at));
  _mm512_storeu_ps(job.y + at, activate(job.activation, v));
}

// P output pixels x OB output blocks, every tap of every pixel inside the
// input. Columns step S (S = 0: the job's stride_w, read at run time); a
// compile-time step makes every broadcast address base + constant.
template <int OB, int P, bool Blocked, int S>
void interior_tile(const ConvJob &job, const Shapes &s, int64_t block,
                   int64_t oh, int64_t ow0, const TileWindow &win) {
  __m512 acc[OB][P];
#pragma GCC unroll 2
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 12
    for (int p = 0; p < P; ++p)
      acc[o][p] = _mm512_setzero_ps();
  }
  const float *w_block = job.weights->data() + block * s.out_block_stride;
  const int64_t pixel_step =
      (S > 0 ? S : job.stride_w) * (Blocked ? kBlock : 1);
  const int64_t ob_stride = s.out_block_stride;
  for (int64_t i = 0; i < s.in_blocks_or_channels; ++i) {
    const float *x_plane = job.x + i * s.in_plane;
    const float *w_in = w_block + i * s.weights_per_in;
    for (int64_t kh = win.kh_begin; kh < win.kh_end; ++kh) {
      const int64_t row = (win.ih0 + kh) * job.in_w;
      for (int64_t kw = win.kw_begin; kw < win.kw_end; ++kw) {
        const int64_t tap = kh * s.kernel_w + kw;
        if constexpr (Blocked) {
          const float *x = x_plane + (row + win.iw0 + kw) * kBlock;
          const float *w = w_in + tap * kBlock * kBlock;
#pragma GCC unroll 16
          for (int lane = 0; lane < kLanes; ++lane) {
            __m512 weight[OB];
#pragma GCC unroll 2
            for (int o = 0; o < OB; ++o)
              weight[o] = _mm512_loadu_ps(w + o * ob_stride + lane * kBlock);
#pragma GCC unroll 12
            for (int p = 0; p < P; ++p) {
              const __m512 in = _mm512_set1_ps(x[p * pixel_step + lane]);
#pragma GCC unroll 2
              for (int o = 0; o < OB; ++o)
                acc[o][p] = _mm512_fmadd_ps(weight[o], in, acc[o][p]);
            }
          }
        } else {
          const float *x = x_plane + row + win.iw0 + kw;
          const float *w = w_in + tap * kBlock;
          __m512 weight[OB];
#pragma GCC unroll 2
          for (int o = 0; o < OB; ++o)
            weight[o] = _mm512_loadu_ps(w + o * ob_stride);
#pragma GCC unroll 12
          for (int p = 0; p < P; ++p) {
            const __m512 in = _mm512_set1_ps(x[p * pixel_step]);
#pragma GCC unroll 2
            for (int o = 0; o < OB; ++o)
              acc[o][p] = _mm512_fmadd_ps(weight[o], in, acc[o][p]);
          }
        }
      }
    }
  }
#pragma GCC unroll 2
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 12
    for (int p = 0; p < P; ++p)
      store_outputs<OB>(job, block, oh, ow0 + p, acc[o][p], o);
  }
}

// One output pixel x OB blocks whose window may cross the input's border (win
// clips the taps), with kEdgeChains accumulators per block so consecutive FMAs
// do not wait on each other.
template <int OB, bool Blocked>
void edge_pixel(const ConvJob &job, const Shapes &s, int64_t block, int64_t oh,
                int64_t ow, const TileWindow &win) {
  __m512 acc[OB][kEdgeChains];
  for (int o = 0; o < OB; ++o) {
    for (int c = 0; c < kEdgeChains; ++c)
      acc[o][c] = _mm512_setzero_ps();
  }
  const float *w_block = job.weights->data() + block * s.out_block_stride;
  int chain = 0;
  for (int64_t i = 0; i < s.in_blocks_or_channels; ++i) {
    const float *x_plane = job.x + i * s.in_plane;
    const float *w_in = w_block + i * s.weights_per_in;
    for (int64_t kh = win.kh_begin; kh < win.kh_end; ++kh) {
      const int64_t row = (win.ih0 + kh) * job.in_w;
      for (int64_t kw = win.kw_begin; kw < win.kw_end; ++kw) {
        const int64_t tap = kh * s.kernel_w + kw;
        if constexpr (Blocked) {
          const float *x = x_plane + (row + win.iw0 + kw) * kBlock;
          const float *w = w_in + tap * kBlock * kBlock;
          for (int lane = 0; lane < kLanes; lane += kEdgeChains) {
            for (int c = 0; c < kEdgeChains; ++c) {
              const __m512 in = _mm512_set1_ps(x[lane + c]);
              for (int o = 0; o < OB; ++o) {
                acc[o][c] =
                    _mm512_fmadd_ps(_mm512_loadu_ps(w + o * s.out_block_stride +
                                                    (lane + c) * kBlock),
                                    in, acc[o][c]);
              }
            }
          }
        } else {
          const __m512 in = _mm512_set1_ps(x_plane[row + win.iw0 + kw]);
          const float *w = w_in + tap * kBlock;
          for (int o = 0; o < OB; ++o) {
            acc[o][chain] = _mm512_fmadd_ps(
                _mm512_loadu_ps(w + o * s.out_block_stride), in, acc[o][chain]);
          }
          chain = (chain + 1) % kEdgeChains;
        }
      }
    }
  }
  for (int o = 0; o < OB; ++o) {
    const __m512 sum = _mm512_add_ps(_mm512_add_ps(acc[o][0], acc[o][1]),
                                     _mm512_add_ps(acc[o][2], acc[o][3]));
    store_outputs<OB>(job, block, oh, ow, sum, o);
  }
}

template <int OB, bool Blocked, int S, int P = kMaxPixels>
void interior_tile_of(int pixels, const ConvJob &job, const Shapes &s,
                      int64_t block, int64_t oh, int64_t ow0,
                      const TileWindow &win) {
  if constexpr (P > 0) {
    if (pixels == P)
      return interior_tile<OB, P, Blocked, S>(job, s, block, oh, ow0, win);
    return interior_tile_of<OB, Blocked, S, P - 1>(pixels, job, s, block, oh,
                                                   ow0, win);
  }
}

template <int OB, bool Blocked, int S>
void conv_rows(const ConvJob &job, const Shapes &s, int64_t block_begin,
               int64_t block_end, int64_t oh_begin, int64_t oh_end) {
  const int64_t sw = job.stride_w;
  // Pixels [ow_lo, ow_hi) read every kernel column inside the input.
  const int64_t ow_lo = std::min(job.out_w, (job.pad_left + sw - 1) / sw);
  const int64_t last_full =
      job.in_w - s.kernel_w +
      job.pad_left; // largest iw0 + pad_left with all columns in
  const int64_t ow_hi = std::clamp<int64_t>(
      last_full < 0 ? 0 : last_full / sw + 1, ow_lo, job.out_w);
  const int64_t interior = ow_hi - ow_lo;
  const int64_t tiles = (interior + kMaxPixels - 1) / kMaxPixels;
  for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
    TileWindow win;
    win.ih0 = oh * job.stride_h - job.pad_top;
    win.kh_begin = std::max<int64_t>(0, -win.ih0);
    win.kh_end = std::min<int64_t>(s.kernel_h, job.in_h - win.ih0);
    for (int64_t block = block_begin; block < block_end; block += OB) {
      const auto edge = [&](int64_t ow) {
        win.iw0 = ow * sw - job.pad_left;
        win.kw_begin = std::max<int64_t>(0, -win.iw0);
        win.kw_end = std::min<int64_t>(s.kernel_w, job.in_w - win.iw0);
        edge_pixel<OB, Blocked>(job, s, block, oh, ow, win);
      };
      for (int64_t ow = 0; ow < ow_lo; ++ow)
        edge(ow);
      win.kw_begin = 0;
      win.kw_end = s.kernel_w;
      int64_t ow = ow_lo;
      for (int64_t t = 0; t < tiles; ++t) {
        // Balanced tiles: the first (interior % tiles) take one pixel more.
        const int pixels =
            static_cast<int>(interior / tiles + (t < interior % tiles ? 1 : 0));
        win.iw0 = ow * sw - job.pad_left;
        interior_tile_of<OB, Blocked, S>(pixels, job, s, block, oh, ow, win);
        ow += pixels;
      }
      for (ow = ow_hi; ow < job.out_w; ++ow)
        edge(ow);
    }
  }
}

} // namespace

void f32_conv_nchwc_rows__avx512(const ConvJob &job, int64_t block_begin,
                                 int64_t block_end, int64_t oh_begin,
                                 int64_t oh_end) {
  const ConvWeights &w = *job.weights;
  const bool blocked = w.blocked_input();
  Shapes s;
  s.in_blocks_or_channels =
      blocked ? blocks_of(w.in_channels()) : w.in_channels();
  s.kernel_h = w.kernel_h();
  s.kernel_w = w.kernel_w();
  s.in_plane = job.in_h * job.in_w * (blocked ? kBlock : 1);
  s.weights_per_in = s.kernel_h * s.kernel_w * kBlock * (blocked ? kBlock : 1);
  s.out_block_stride = w.out_block_stride();
  const bool pairs = conv_block_group(blocks_of(w.out_channels())) == 2;
  const auto with_stride = [&]<int OB, bool Blocked>() {
    if (job.stride_w == 1)
      return conv_rows<OB, Blocked, 1>(job, s, block_begin, block_end, oh_begin,
                                       oh_end);
    if (job.stride_w == 2)
      return conv_rows<OB, Blocked, 2>(job, s, block_begin, block_end, oh_begin,
                                       oh_end);
    conv_rows<OB, Blocked, 0>(job, s, block_begin, block_end, oh_begin, oh_end);
  };
  if (blocked) {
    if (pairs)
      return with_stride.template operator()<2, true>();
    return with_stride.template operator()<1, true>();
  }
  if (pairs)
    return with_stride.template operator()<2, false>();
  with_stride.template operator()<1, false>();
}

} // namespace nxrt::cpu::nchwc
