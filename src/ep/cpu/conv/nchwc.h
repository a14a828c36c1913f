// Blocked-channel ("NCHWc") float32 layout for CPUs with AVX2 or AVX-512: a tensor [N, C, H, W] is held as
// [N, ceil(C / 16), H, W, 16], channel c at block c / 16, lane c % 16; lanes past C hold padding (zero where a reorder
// or a conv writes them; see nchwc_layout.cpp). The optimizer's nchwc_layout pass rewrites
// chains of Conv / FusedConv / MaxPool / GlobalAveragePool into the com.nxrt ops of nchwc.cpp over this layout, so a
// CNN reorders its data once on entry and once on exit instead of every conv copying its input into a padded scratch.
// The conv micro-kernel (microkernels/nchwc_conv_kernel.h) keeps a register tile of output blocks x pixels (AVX-512:
// up to 2 x 12, AVX2: 1 x 6) over the whole reduction, broadcasting one input element per (pixel, input channel, tap)
// against 16-lane weight vectors; tiles that cross the left or right border read a small zero-padded copy of their
// columns, rows above and below are skipped. Both tiers use 16-lane blocks, so the layout and the optimizer pass do
// not depend on the tier.
#pragma once

#include <cstdint>
#include <vector>

#include "ep/cpu/elementwise/fused_activation.h"

namespace nxrt::cpu::nchwc {

inline constexpr int64_t kBlock = 16;

// Blocks that hold `channels` >= 0 channels (without the overflow of rounding up by adding kBlock - 1).
inline int64_t blocks_of(int64_t channels) { return channels / kBlock + (channels % kBlock > 0 ? 1 : 0); }

// W [out_channels, in_channels, kernel_h, kernel_w] and bias repacked for the micro-kernel. With a blocked input:
// [out_block][in_block][kh][kw][16 in lanes][16 out lanes]; with a plain NCHW input (a network's first conv):
// [out_block][in_channel][kh][kw][16 out lanes]; depthwise (W [channels, 1, kh, kw], group = channels, blocked
// input): [block][kh][kw][16 lanes]. Padding channels hold zeros. The bias has blocks_of(out) * 16 floats (zeros when
// the node has none).
class ConvWeights {
 public:
  static ConvWeights pack(const float* w, const float* bias, int64_t out_channels, int64_t in_channels,
                          int64_t kernel_h, int64_t kernel_w, bool blocked_input);
  static ConvWeights pack_depthwise(const float* w, const float* bias, int64_t channels, int64_t kernel_h,
                                    int64_t kernel_w);

  const float* data() const { return packed_.data(); }
  const float* bias() const { return bias_.data(); }
  int64_t out_channels() const { return out_channels_; }
  int64_t in_channels() const { return in_channels_; }
  int64_t kernel_h() const { return kernel_h_; }
  int64_t kernel_w() const { return kernel_w_; }
  bool blocked_input() const { return blocked_input_; }
  // Depthwise: in_channels() == out_channels() == the channel count, one filter per channel.
  bool depthwise() const { return depthwise_; }
  // Floats between consecutive output blocks of data().
  int64_t out_block_stride() const;
  // The Winograd F(2x2, 3x3) transform G g G^T of every (out, in) channel pair, [16 elements][out block][in block]
  // [16 in][16 out], packed for 3x3 kernels on a blocked input of at least 16 input and output channels; else empty.
  bool has_winograd() const { return !winograd_.empty(); }
  const float* winograd() const { return winograd_.data(); }

 private:
  void pack_winograd(const float* w);

  std::vector<float> packed_;
  std::vector<float> winograd_;
  std::vector<float> bias_;
  int64_t out_channels_ = 0;
  int64_t in_channels_ = 0;
  int64_t kernel_h_ = 0;
  int64_t kernel_w_ = 0;
  bool blocked_input_ = true;
  bool depthwise_ = false;
};

// One image of one convolution as the micro-kernel sees it (2-D, no dilation, group 1).
struct ConvJob {
  const float* x = nullptr;  // blocked [in_blocks][in_h][in_w][16], or plain [in_channels][in_h][in_w]
  const ConvWeights* weights = nullptr;
  int64_t in_h = 0, in_w = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t out_h = 0, out_w = 0;
  float* y = nullptr;          // blocked [out_blocks][out_h][out_w][16]
  const float* z = nullptr;    // null or y's layout; may be y itself (each element is read before it is written)
  FusedActivation activation;
  // The epilogue applies `activation` in registers when activation_in_block_registers accepts it; else each tile's
  // stored outputs go through apply_activation while they are in cache.
  bool activation_after_store = false;
};

// The activations the blocked-channel conv epilogues apply in registers: none, Relu, LeakyRelu, Clip, HardSigmoid,
// HardSwish.
bool activation_in_block_registers(ActivationKind kind);

// The most output pixels one micro-kernel call computes (per output block) on any tier.
inline constexpr int kMaxConvTilePixels = 12;

// [begin, end): the output indices along one axis whose whole (dilated) window lies inside the input.
struct WindowRange {
  int64_t begin, end;
};
WindowRange inner_window_range(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad,
                               int64_t dilation);

// Floats of the scratch f32_conv_nchwc_rows__<isa> needs for a conv with these weights and column stride: a tile
// whose window crosses the left or right border reads a zero-padded copy of its input columns.
int64_t conv_edge_scratch_floats(const ConvWeights& w, int64_t stride_w);

// Output rows [oh_begin, oh_end) of output blocks [block_begin, block_end) of `job`, epilogue included (y =
// activation(conv + bias + z)), using `edge_scratch` (conv_edge_scratch_floats). Rows are cut into balanced tiles of
// up to the tier's tile width. Defined only on x86-64; call only when the CPU has the tier.
void f32_conv_nchwc_rows__avx512(const ConvJob& job, int64_t block_begin, int64_t block_end, int64_t oh_begin,
                                 int64_t oh_end, float* edge_scratch);
void f32_conv_nchwc_rows__avx2(const ConvJob& job, int64_t block_begin, int64_t block_end, int64_t oh_begin,
                               int64_t oh_end, float* edge_scratch);

// The same for depthwise weights (ConvWeights::depthwise; blocks [block_begin, block_end), any stride), needing no
// scratch.
void f32_depthwise_nchwc_rows__avx512(const ConvJob& job, int64_t block_begin, int64_t block_end, int64_t oh_begin,
                                      int64_t oh_end);
void f32_depthwise_nchwc_rows__avx2(const ConvJob& job, int64_t block_begin, int64_t block_end, int64_t oh_begin,
                                    int64_t oh_end);

// Tiles of one row the Winograd kernel transforms at a time (its scratch holds their 16 transform elements).
inline constexpr int64_t kWinogradChunkTiles = 32;

// The Winograd kernels' scratch: V [16 elements][in blocks][chunk tiles][16] then M [16][out blocks][chunk][16].
struct WinogradLayout {
  int64_t in_blocks, out_blocks;
  int64_t v_element_stride;  // floats between transform elements of V
  int64_t m_element_stride;  // and of M
};
WinogradLayout winograd_layout(const ConvWeights& w);

// Floats of the scratch f32_conv_nchwc_winograd_rows__<isa> needs.
int64_t winograd_scratch_floats(const ConvWeights& w);

// The rows of 2x2 output tiles [th_begin, th_end) of a stride-1 3x3 conv whose weights have the Winograd packing,
// epilogue included, through `scratch` (winograd_scratch_floats). Each output differs from the direct sum by a few
// ulps of its largest terms. Defined only on x86-64; call only when the CPU has the tier.
void f32_conv_nchwc_winograd_rows__avx512(const ConvJob& job, int64_t th_begin, int64_t th_end, float* scratch);
void f32_conv_nchwc_winograd_rows__avx2(const ConvJob& job, int64_t th_begin, int64_t th_end, float* scratch);

// Output blocks one micro-kernel call keeps in registers for a conv with `out_blocks` blocks on a tier whose tiles
// hold up to `max_group` (1 or 2) blocks.
inline int64_t conv_block_group(int64_t out_blocks, int64_t max_group) {
  return max_group == 2 && out_blocks % 2 == 0 ? 2 : 1;
}

// Positions [begin, end) of one image's block `block`: y[p][lane] = x[(block * 16 + lane) * plane + p] for channels
// below `channels`, 0 above. x is the image's [channels][plane], y the block's [plane][16].
void f32_reorder_to_nchwc__avx512(const float* x, int64_t channels, int64_t plane, int64_t block, float* y,
                                  int64_t begin, int64_t end);
void f32_reorder_to_nchwc__avx2(const float* x, int64_t channels, int64_t plane, int64_t block, float* y,
                                int64_t begin, int64_t end);
// The inverse for positions [begin, end): y (the image's [channels][plane]) from the block's [plane][16].
void f32_reorder_from_nchwc__avx512(const float* x, int64_t channels, int64_t plane, int64_t block, float* y,
                                    int64_t begin, int64_t end);
void f32_reorder_from_nchwc__avx2(const float* x, int64_t channels, int64_t plane, int64_t block, float* y,
                                  int64_t begin, int64_t end);

// One block plane of a 2-D max pool: x [in_h][in_w][16] -> y [out_h][out_w][16], rows [oh_begin, oh_end). Every window
// must hold at least one input tap. Taps are taken in row-major window order, NaN taps skipped unless all are NaN, ties
// keeping the earlier tap (the MaxPool kernel's rule).
struct PoolJob {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
  int64_t dilation_h = 1, dilation_w = 1;
};
void f32_max_pool_nchwc_rows__avx512(const PoolJob& job, const float* x, float* y, int64_t oh_begin, int64_t oh_end);
void f32_max_pool_nchwc_rows__avx2(const PoolJob& job, const float* x, float* y, int64_t oh_begin, int64_t oh_end);

// y[lane] = mean over the plane of x[p][lane] (x [plane][16]).
void f32_global_average_pool_nchwc__avx512(const float* x, int64_t plane, float* y);
void f32_global_average_pool_nchwc__avx2(const float* x, int64_t plane, float* y);

// The kernels of one tier.
struct TierKernels {
  decltype(&f32_conv_nchwc_rows__avx512) conv_rows;
  decltype(&f32_conv_nchwc_winograd_rows__avx512) winograd_rows;
  decltype(&f32_depthwise_nchwc_rows__avx512) depthwise_rows;
  decltype(&f32_reorder_to_nchwc__avx512) reorder_to;
  decltype(&f32_reorder_from_nchwc__avx512) reorder_from;
  decltype(&f32_max_pool_nchwc_rows__avx512) max_pool_rows;
  decltype(&f32_global_average_pool_nchwc__avx512) global_average_pool;
  int64_t max_block_group;  // conv_block_group's max_group
};
// The kernels of the active CPU tier (cpu_features.h), or null below avx2 or off x86-64.
const TierKernels* active_tier_kernels();

}  // namespace nxrt::cpu::nchwc
