// Direct (no im2col) 2-D f32 convolution for CPUs at the avx2 tier and above. The driver (conv_direct.cpp) copies
// each image into a zero-padded, stride-phase-split scratch so that every kernel tap reads one contiguous run of
// inputs per 16 outputs, and the micro-kernel of the tier (microkernels/avx512/conv_direct_avx512.cpp: 8 output
// channels x up to 3 vectors of 16 outputs; microkernels/avx2/conv_direct_avx2.cpp: 4 channels x 3 vectors of 8,
// twice per block) accumulates in registers, broadcasting one prepacked weight per channel and tap.
#pragma once

#include <cstdint>
#include <vector>

#include "ep/cpu/conv/conv_common.h"

namespace nxrt::cpu::conv {

// Output channels one micro-kernel call accumulates (and the lane count of the packed weights).
inline constexpr int64_t kDirectConvBlock = 8;

// W [out_channels, in_channels, kernel_h, kernel_w] repacked as [block][in_channel][kh][kw][kDirectConvBlock]
// (block = out_channel / kDirectConvBlock); channels past out_channels in the last block are zero.
class DirectConvWeights {
 public:
  static DirectConvWeights pack(const float* w, int64_t out_channels, int64_t in_channels, int64_t kernel_h,
                                int64_t kernel_w);

  const float* data() const { return packed_.data(); }
  int64_t out_channels() const { return out_channels_; }
  int64_t in_channels() const { return in_channels_; }
  int64_t kernel_h() const { return kernel_h_; }
  int64_t kernel_w() const { return kernel_w_; }
  bool empty() const { return packed_.empty(); }

 private:
  std::vector<float> packed_;
  int64_t out_channels_ = 0;
  int64_t in_channels_ = 0;
  int64_t kernel_h_ = 0;
  int64_t kernel_w_ = 0;
};


// True when the direct kernel runs this convolution: the CPU is at the avx2 tier or above, 2-D, group 1, no
// dilation, not 1x1, the output rows are wide enough for 16-lane vectors (see DirectConvJob::grid_w) without wasting
// most lanes, and at the avx2 tier a strided convolution is one the direct kernel runs faster than im2col + GEMM.
bool direct_conv_applies(int64_t group, const Geometry& g, int64_t in_channels, int64_t out_channels);

// y = activation(conv(x, w) + bias + z) for x [batch, in_channels, H, W] and y [batch, out_channels, OH, OW];
// same contract as conv_forward (z may alias y). Requires the avx2 tier, no dilation, a virtual grid at least 16 wide
// (all checked by direct_conv_applies, which also turns away 1x1 kernels and wasteful shapes) and weights packed
// for this W. Images run one after another, each in stripes of output rows whose padded copy stays under 4 MiB,
// each stripe split into runs of output vectors that run in parallel.
void conv_direct_f32(const float* x, const DirectConvWeights& w, float* y, int64_t batch, const Geometry& g,
                     ThreadPool& pool, const ConvEpilogue<float>& epilogue);

// Output rows [o0, o1) of one image (x's [in_channels, H, W] at `image`) into y, which points at output row o0
// of channel 0 with channels out_plane floats apart; z (null or the same layout as y, may alias it) likewise.
// Same requirements as conv_direct_f32; epilogue.z is not read (z is).
void conv_direct_f32_rows(const float* image, const DirectConvWeights& w, const Geometry& g, int64_t o0,
                          int64_t o1, float* y, const float* z, int64_t out_plane, ThreadPool& pool,
                          const ConvEpilogue<float>& epilogue);

// One image's work as the micro-kernel sees it. The padded image (pads as zeros) is split into its
// stride_h x stride_w phases: `padded` holds in_channels planes of `plane_stride` floats, each plane the phase
// sub-images one after another, sub-image (ph, pw) holding padded rows ph, ph + stride_h, ... of padded columns
// pw, pw + stride_w, ..., each row `grid_w` long. Output (oh, ow) is virtual grid position q = oh * grid_w + ow,
// and tap (kh, kw) reads it at padded[q + taps[kh * kernel_w + kw]], so 16 consecutive q are one contiguous
// load per tap; grid positions with ow >= out_w are computed and dropped. grid_w >= 16 and grid_w >= out_w;
// the scratch ends with at least 16 readable floats of slack.
struct DirectConvJob {
  const float* padded = nullptr;
  int64_t plane_stride = 0;
  int64_t grid_w = 0;
  const int64_t* taps = nullptr;
  int64_t tap_count = 0;
  const float* weights = nullptr;  // DirectConvWeights::data()
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t out_h = 0;
  int64_t out_w = 0;
  int64_t out_plane_stride = 0;  // distance between output channels in y and z
  float* y = nullptr;           // output row 0 of channel 0; out_h x out_w per channel
  const float* z = nullptr;     // same layout as y, or null
  const float* bias = nullptr;  // [out_channels] or null
  FusedActivation activation;
};

// Computes output channels [block * kDirectConvBlock, +kDirectConvBlock) (clipped to out_channels) of the grid
// positions [q_begin, q_end) including the epilogue; q_begin is a multiple of 16. Defined only on x86-64; call
// only when the CPU has avx512f.
void f32_conv_direct_8x48__avx512(const DirectConvJob& job, int64_t block, int64_t q_begin, int64_t q_end);
// The same at the avx2 tier.
void f32_conv_direct_8x24__avx2(const DirectConvJob& job, int64_t block, int64_t q_begin, int64_t q_end);

// even_dst[i] = src[2 * i] for i < even_count and odd_dst[i] = src[2 * i + 1] for i < odd_count, reading only
// those elements. Same availability as the kernel of the tier.
void f32_deinterleave__avx512(const float* src, int64_t even_count, float* even_dst, int64_t odd_count,
                              float* odd_dst);
void f32_deinterleave__avx2(const float* src, int64_t even_count, float* even_dst, int64_t odd_count,
                            float* odd_dst);

// Depthwise convolution in the plain layout (group == in_channels == out_channels): each channel's plane is padded
// and phase-split as for the direct kernel and run by the depthwise micro-kernel of the tier. True when it runs
// this convolution: the avx2 tier or above, 2-D, no dilation, not 1x1, and rows wide enough for 16-lane vectors.
bool depthwise_conv_applies(int64_t group, const Geometry& g, int64_t in_channels, int64_t out_channels);

// y = activation(depthwise conv(x, w) + bias + z) for x [batch, channels, H, W], w [channels, 1, KH, KW] and
// y [batch, channels, OH, OW], with the contract of conv_forward (z may alias y). Requires depthwise_conv_applies.
// Planes run in parallel.
void conv_depthwise_f32(const float* x, const float* w, float* y, int64_t batch, int64_t channels, const Geometry& g,
                        ThreadPool& pool, const ConvEpilogue<float>& epilogue);

// One channel of a depthwise convolution over its padded plane: `job` as for the direct kernel with one input and
// one output channel, weights the channel's tap_count weights (row-major taps), bias null or the channel's bias,
// y / z the channel's output planes. Defined only on x86-64; the avx512 one for CPUs with avx512f, the avx2 one at
// the avx2 tier.
void f32_conv_depthwise__avx512(const DirectConvJob& job);
void f32_conv_depthwise__avx2(const DirectConvJob& job);

// The plain-layout conv micro-kernels of the CPU's tier (NXRT_CPU_ISA lowers it): the AVX-512 set, or the AVX2 one.
// Call only at the avx2 tier or above (direct_conv_applies / depthwise_conv_applies / winograd_applies hold).
struct DirectConvKernels {
  void (*conv)(const DirectConvJob& job, int64_t block, int64_t q_begin, int64_t q_end) = nullptr;
  void (*depthwise)(const DirectConvJob& job) = nullptr;
  void (*deinterleave)(const float* src, int64_t even_count, float* even_dst, int64_t odd_count,
                       float* odd_dst) = nullptr;
};
DirectConvKernels direct_conv_kernels();

}  // namespace nxrt::cpu::conv
