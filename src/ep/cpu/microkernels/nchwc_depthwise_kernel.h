// Depthwise convolution on the blocked-channel layout (contract in ep/cpu/conv/nchwc.h), written once over the block
// traits of nchwc_conv_kernel.h and included only by translation units compiled for that ISA. Channel c of the
// output reads only channel c of the input, so each 16-lane block is its own problem: a register tile holds
// B::kDepthwisePixels output pixels of one block and every tap is one vector multiply-add per pixel.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ep/cpu/conv/nchwc.h"
#include "ep/cpu/microkernels/nchwc_conv_kernel.h"

namespace nxrt::cpu::nchwc::block_kernel {

// P output pixels of row oh of block `block`, starting at ow0, whose windows lie inside the input columns; kernel rows
// [kh_begin, kh_end) are inside the input rows.
template <class B, int P>
void depthwise_tile(const ConvJob& job, const float* x, const float* w, int64_t block, int64_t oh, int64_t ow0,
                    int64_t kh_begin, int64_t kh_end) {
  typename B::Reg acc[P];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) acc[p] = B::zero();
  const int64_t kernel_w = job.weights->kernel_w();
  const int64_t pixel_step = job.stride_w * kBlock;
  const int64_t ih0 = oh * job.stride_h - job.pad_top;
  const int64_t iw0 = ow0 * job.stride_w - job.pad_left;
  for (int64_t kh = kh_begin; kh < kh_end; ++kh) {
    const float* row = x + ((ih0 + kh) * job.in_w + iw0) * kBlock;
    const float* w_row = w + kh * kernel_w * kBlock;
    for (int64_t kw = 0; kw < kernel_w; ++kw) {
      const typename B::Reg weight = B::load(w_row + kw * kBlock);
      const float* column = row + kw * kBlock;
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) acc[p] = B::fmadd(B::load(column + p * pixel_step), weight, acc[p]);
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) store_output<B>(job, block, oh, ow0 + p, acc[p]);
  activate_stored<B>(job, block, oh, ow0, P);
}

// One output pixel whose window may cross the left or right border: taps outside the input are skipped.
template <class B>
void depthwise_pixel(const ConvJob& job, const float* x, const float* w, int64_t block, int64_t oh, int64_t ow,
                     int64_t kh_begin, int64_t kh_end) {
  typename B::Reg acc = B::zero();
  const int64_t kernel_w = job.weights->kernel_w();
  const int64_t ih0 = oh * job.stride_h - job.pad_top;
  const int64_t iw0 = ow * job.stride_w - job.pad_left;
  const int64_t kw_begin = std::max<int64_t>(0, -iw0);
  const int64_t kw_end = std::min<int64_t>(kernel_w, job.in_w - iw0);
  for (int64_t kh = kh_begin; kh < kh_end; ++kh) {
    for (int64_t kw = kw_begin; kw < kw_end; ++kw) {
      acc = B::fmadd(B::load(x + ((ih0 + kh) * job.in_w + iw0 + kw) * kBlock),
                     B::load(w + (kh * kernel_w + kw) * kBlock), acc);
    }
  }
  store_output<B>(job, block, oh, ow, acc);
  activate_stored<B>(job, block, oh, ow, 1);
}

// The entry point behind f32_depthwise_nchwc_rows__<isa> (nchwc.h).
template <class B>
void depthwise_nchwc_rows(const ConvJob& job, int64_t block_begin, int64_t block_end, int64_t oh_begin,
                          int64_t oh_end) {
  constexpr int P = B::kDepthwisePixels;
  const ConvWeights& weights = *job.weights;
  const int64_t in_plane = job.in_h * job.in_w * kBlock;
  const WindowRange inner = inner_window_range(job.in_w, job.out_w, weights.kernel_w(), job.stride_w, job.pad_left, 1);
  for (int64_t block = block_begin; block < block_end; ++block) {
    const float* x = job.x + block * in_plane;
    const float* w = weights.data() + block * weights.out_block_stride();
    for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
      const int64_t ih0 = oh * job.stride_h - job.pad_top;
      const int64_t kh_begin = std::max<int64_t>(0, -ih0);
      const int64_t kh_end = std::min<int64_t>(weights.kernel_h(), job.in_h - ih0);
      const int64_t edge_end = std::min(inner.begin, job.out_w);
      int64_t ow = 0;
      for (; ow < edge_end; ++ow) depthwise_pixel<B>(job, x, w, block, oh, ow, kh_begin, kh_end);
      for (; ow + P <= inner.end; ow += P) depthwise_tile<B, P>(job, x, w, block, oh, ow, kh_begin, kh_end);
      for (; ow < inner.end; ++ow) depthwise_tile<B, 1>(job, x, w, block, oh, ow, kh_begin, kh_end);
      for (; ow < job.out_w; ++ow) depthwise_pixel<B>(job, x, w, block, oh, ow, kh_begin, kh_end);
    }
  }
}

}  // namespace nxrt::cpu::nchwc::block_kernel
