// The blocked-channel direct convolution (contract in ep/cpu/conv/nchwc.h), written once over a block traits type and
// included only by translation units compiled for that ISA (avx2/conv_nchwc_avx2.cpp, avx512/conv_nchwc_avx512.cpp),
// which define the traits. The Winograd and pooling kernels (nchwc_winograd_kernel.h, nchwc_pool_kernel.h) build on
// the pieces here.
//
// Traits B describe one 16-lane channel block held in registers: Reg (the block), Lane (one float broadcast to the
// vector width), kTilePixels (pixels per register tile, at most kMaxConvTilePixels), kMaxBlockGroup (1 or 2 output
// blocks per tile), kDepthwisePixels (pixels per depthwise tile); zero(), load(p), load_broadcast(p) (*p in every
// lane), store(p, v), broadcast(p) (a Lane), fma(w, x, acc) = w * x + acc for a Lane x, fmadd(a, b, acc) for two
// blocks, add, sub, div, max(a, b) (b when either is NaN), activate(activation, v)
// for the activations activation_in_block_registers accepts, take_larger(best, tap) (tap in the lanes where it is
// larger or best is NaN) and any_equal(a, b) (a lane of a equals b's).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ep/cpu/conv/nchwc.h"
#include "ep/cpu/elementwise/fused_activation.h"

namespace nxrt::cpu::nchwc::block_kernel {

// acc[o][p] += sum over the 16 lanes l of w[o * w_block_stride + 16 l .. + 16] * x[p * pixel_step + l]: one 16-channel
// input block against OB 16 x 16 weight blocks for P pixels (or tiles). Called with a constant pixel_step after
// inlining, every broadcast address is x + constant.
template <class B, int OB, int P>
[[gnu::always_inline]] inline void accumulate_block(typename B::Reg (&acc)[OB][P], const float* x,
                                                    int64_t pixel_step, const float* w, int64_t w_block_stride) {
#pragma GCC unroll 16
  for (int lane = 0; lane < static_cast<int>(kBlock); ++lane) {
    typename B::Reg weight[OB];
#pragma GCC unroll 2
    for (int o = 0; o < OB; ++o) weight[o] = B::load(w + o * w_block_stride + lane * kBlock);
#pragma GCC unroll 12
    for (int p = 0; p < P; ++p) {
      const typename B::Lane value = B::broadcast(x + p * pixel_step + lane);
#pragma GCC unroll 2
      for (int o = 0; o < OB; ++o) acc[o][p] = B::fma(weight[o], value, acc[o][p]);
    }
  }
}

// Output pixel (oh, ow) of output block `block`: acc + bias, + Z when the job has one, activated (in registers when
// the traits can), stored.
template <class B>
inline void store_output(const ConvJob& job, int64_t block, int64_t oh, int64_t ow, typename B::Reg acc) {
  const int64_t at = ((block * job.out_h + oh) * job.out_w + ow) * kBlock;
  typename B::Reg v = B::add(acc, B::load(job.weights->bias() + block * kBlock));
  if (job.z != nullptr) v = B::add(v, B::load(job.z + at));
  B::store(job.y + at, B::activate(job.activation, v));
}

// The activation of the `pixels` stored outputs of row oh of block `block` from ow0, when the job applies it after
// the stores (ConvJob::activation_after_store). A template, like everything here, so that copies built for different
// ISAs never merge at link time.
template <class B>
void activate_stored(const ConvJob& job, int64_t block, int64_t oh, int64_t ow0, int64_t pixels) {
  if (!job.activation_after_store || pixels <= 0) return;
  apply_activation(job.activation, job.y + ((block * job.out_h + oh) * job.out_w + ow0) * kBlock, pixels * kBlock);
}

// The input one tile reads: `x` at kernel row kh_begin, column 0, of the tile's first pixel; kernel rows
// [kh_begin, kh_end) are readable, `row_stride` floats apart; input blocks or channels `plane_stride` floats apart.
struct TileInput {
  const float* x;
  int64_t row_stride, plane_stride;
  int64_t kh_begin, kh_end;
};

struct Shapes {
  int64_t in_blocks_or_channels;  // blocked: input blocks; plain: input channels
  int64_t kernel_h, kernel_w;
  int64_t weights_per_in;  // floats of one output block's weights per input block / channel
  int64_t out_block_stride;
};

// P output pixels x OB output blocks of row oh from `in`, every kernel column readable for every pixel. Pixels are
// S input columns apart (S = 0: the job's stride_w, read at run time); a compile-time step makes every broadcast
// address base + constant.
template <class B, int OB, int P, bool Blocked, int S>
void tile(const ConvJob& job, const Shapes& s, const TileInput& in, int64_t block, int64_t oh, int64_t ow0) {
  typename B::Reg acc[OB][P];
#pragma GCC unroll 2
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 12
    for (int p = 0; p < P; ++p) acc[o][p] = B::zero();
  }
  const float* w_block = job.weights->data() + block * s.out_block_stride;
  const int64_t pixel_step = (S > 0 ? S : job.stride_w) * (Blocked ? kBlock : 1);
  const int64_t ob_stride = s.out_block_stride;
  for (int64_t i = 0; i < s.in_blocks_or_channels; ++i) {
    const float* x_plane = in.x + i * in.plane_stride;
    const float* w_in = w_block + i * s.weights_per_in;
    for (int64_t kh = in.kh_begin; kh < in.kh_end; ++kh) {
      const float* x_row = x_plane + (kh - in.kh_begin) * in.row_stride;
      for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
        const int64_t tap = kh * s.kernel_w + kw;
        if constexpr (Blocked) {
          const float* x = x_row + kw * kBlock;
          // Opaque to the optimiser: without this GCC strength-reduces all P x 16 broadcast addresses into separate
          // induction variables and spills them, instead of addressing x + constant.
          asm("" : "+r"(x));
          accumulate_block<B, OB, P>(acc, x, pixel_step, w_in + tap * kBlock * kBlock, ob_stride);
        } else {
          const float* x = x_row + kw;
          asm("" : "+r"(x));  // see the blocked branch
          const float* w = w_in + tap * kBlock;
          typename B::Reg weight[OB];
#pragma GCC unroll 2
          for (int o = 0; o < OB; ++o) weight[o] = B::load(w + o * ob_stride);
#pragma GCC unroll 12
          for (int p = 0; p < P; ++p) {
            const typename B::Lane value = B::broadcast(x + p * pixel_step);
#pragma GCC unroll 2
            for (int o = 0; o < OB; ++o) acc[o][p] = B::fma(weight[o], value, acc[o][p]);
          }
        }
      }
    }
  }
#pragma GCC unroll 2
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 12
    for (int p = 0; p < P; ++p) store_output<B>(job, block + o, oh, ow0 + p, acc[o][p]);
  }
  for (int o = 0; o < OB; ++o) activate_stored<B>(job, block + o, oh, ow0, P);
}

template <class B, int OB, bool Blocked, int S, int P = B::kTilePixels>
void tile_of(int pixels, const ConvJob& job, const Shapes& s, const TileInput& in, int64_t block, int64_t oh,
             int64_t ow0) {
  if constexpr (P > 0) {
    if (pixels == P) return tile<B, OB, P, Blocked, S>(job, s, in, block, oh, ow0);
    return tile_of<B, OB, Blocked, S, P - 1>(pixels, job, s, in, block, oh, ow0);
  }
}

// Copies the input columns [iw0, iw0 + cols) of kernel rows [kh_begin, kh_end) of output row oh into `edge`
// (zeros outside the input) and returns the view of it a tile reads. Templated on B like everything here, so that the
// copies built for different ISAs never merge at link time.
template <class B, bool Blocked>
TileInput copy_edge(const ConvJob& job, const Shapes& s, int64_t ih0, int64_t kh_begin, int64_t kh_end, int64_t iw0,
                    int64_t cols, float* edge) {
  const int64_t rows = kh_end - kh_begin;
  const int64_t width = Blocked ? kBlock : 1;
  const int64_t in_plane = job.in_h * job.in_w * width;
  const int64_t first = std::clamp<int64_t>(-iw0, 0, cols);               // columns before the input
  const int64_t last = std::clamp<int64_t>(job.in_w - iw0, first, cols);  // end of the columns inside
  for (int64_t i = 0; i < s.in_blocks_or_channels; ++i) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = job.x + i * in_plane + ((ih0 + kh_begin + r) * job.in_w + iw0 + first) * width;
      float* dst = edge + (i * rows + r) * cols * width;
      // memset / memcpy rather than std::fill / std::copy: template code built here could merge with baseline copies.
      std::memset(dst, 0, static_cast<size_t>(first * width) * sizeof(float));
      std::memcpy(dst + first * width, src, static_cast<size_t>((last - first) * width) * sizeof(float));
      std::memset(dst + last * width, 0, static_cast<size_t>((cols - last) * width) * sizeof(float));
    }
  }
  return TileInput{edge, cols * width, rows * cols * width, kh_begin, kh_end};
}

template <class B, int OB, bool Blocked, int S>
void conv_rows(const ConvJob& job, const Shapes& s, int64_t block_begin, int64_t block_end, int64_t oh_begin,
               int64_t oh_end, float* edge) {
  const int64_t sw = job.stride_w;
  const int64_t width = Blocked ? kBlock : 1;
  // Pixels [ow_lo, ow_hi) read every kernel column inside the input; a tile holding any other pixel reads a copy of
  // its columns with zeros for the padding.
  const WindowRange inner = inner_window_range(job.in_w, job.out_w, s.kernel_w, sw, job.pad_left, 1);
  const int64_t tiles = (job.out_w + B::kTilePixels - 1) / B::kTilePixels;
  for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
    const int64_t ih0 = oh * job.stride_h - job.pad_top;
    const int64_t kh_begin = std::max<int64_t>(0, -ih0);
    const int64_t kh_end = std::min<int64_t>(s.kernel_h, job.in_h - ih0);
    int64_t ow = 0;
    for (int64_t t = 0; t < tiles; ++t) {
      // Balanced tiles: the first (out_w % tiles) take one pixel more.
      const int pixels = static_cast<int>(job.out_w / tiles + (t < job.out_w % tiles ? 1 : 0));
      const int64_t iw0 = ow * sw - job.pad_left;
      TileInput in;
      if (ow >= inner.begin && ow + pixels <= inner.end) {
        in = TileInput{job.x + ((ih0 + kh_begin) * job.in_w + iw0) * width, job.in_w * width,
                       job.in_h * job.in_w * width, kh_begin, kh_end};
      } else {
        in = copy_edge<B, Blocked>(job, s, ih0, kh_begin, kh_end, iw0, (pixels - 1) * sw + s.kernel_w, edge);
      }
      for (int64_t block = block_begin; block < block_end; block += OB) {
        tile_of<B, OB, Blocked, S>(pixels, job, s, in, block, oh, ow);
      }
      ow += pixels;
    }
  }
}

// The entry point behind f32_conv_nchwc_rows__<isa> (nchwc.h).
template <class B>
void conv_nchwc_rows(const ConvJob& job, int64_t block_begin, int64_t block_end, int64_t oh_begin, int64_t oh_end,
                     float* edge_scratch) {
  static_assert(B::kTilePixels <= kMaxConvTilePixels && (B::kMaxBlockGroup == 1 || B::kMaxBlockGroup == 2));
  const ConvWeights& w = *job.weights;
  const bool blocked = w.blocked_input();
  Shapes s;
  s.in_blocks_or_channels = blocked ? blocks_of(w.in_channels()) : w.in_channels();
  s.kernel_h = w.kernel_h();
  s.kernel_w = w.kernel_w();
  s.weights_per_in = s.kernel_h * s.kernel_w * kBlock * (blocked ? kBlock : 1);
  s.out_block_stride = w.out_block_stride();
  const auto with_stride = [&]<int OB, bool Blocked>() {
    const auto rows = [&]<int S>() {
      conv_rows<B, OB, Blocked, S>(job, s, block_begin, block_end, oh_begin, oh_end, edge_scratch);
    };
    if (job.stride_w == 1) return rows.template operator()<1>();
    if (job.stride_w == 2) return rows.template operator()<2>();
    rows.template operator()<0>();
  };
  if constexpr (B::kMaxBlockGroup == 2) {
    if (conv_block_group(blocks_of(w.out_channels()), B::kMaxBlockGroup) == 2) {
      if (blocked) return with_stride.template operator()<2, true>();
      return with_stride.template operator()<2, false>();
    }
  }
  if (blocked) return with_stride.template operator()<1, true>();
  with_stride.template operator()<1, false>();
}

}  // namespace nxrt::cpu::nchwc::block_kernel
