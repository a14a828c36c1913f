// Winograd F(2x2, 3x3) f32 convolution at the avx2 tier and above (Lavin & Gray 2016): each 2x2 output tile is
// A^T [(G g G^T) . (B^T d B)] A for its 4x4 input patch d, so the 36 multiplies per tile and channel pair of a
// direct 3x3 convolution become 16. The 16 element products, summed over input channels, are 16 independent
// matrix products [out_channels x in_channels] x [in_channels x tiles], run by the direct convolution's
// micro-kernel with one tap; the transforms (microkernels/avx512/conv_winograd_avx512.cpp and its AVX2 twin) run
// over rows of tiles.
// Rounding differs from the direct sum by a few ulps of the largest terms; an infinite input makes NaN where the
// direct sum would give an infinity.
#pragma once

#include <array>
#include <cstdint>

#include "ep/cpu/conv/conv_common.h"
#include "ep/cpu/conv/conv_direct.h"

namespace nxrt::cpu::conv {

// Winograd element count of one tile: (2 + 3 - 1)^2.
inline constexpr int kWinogradElements = 16;

// U = G g G^T of every (out_channel, in_channel) 3x3 kernel g, as kWinogradElements [out_channels x
// in_channels] matrices packed for the direct micro-kernel (1x1 kernels).
class WinogradWeights {
 public:
  static WinogradWeights pack(const float* w, int64_t out_channels, int64_t in_channels);

  const DirectConvWeights& element(int xi) const { return elements_[static_cast<size_t>(xi)]; }
  int64_t out_channels() const { return elements_[0].out_channels(); }
  int64_t in_channels() const { return elements_[0].in_channels(); }
  bool empty() const { return elements_[0].empty(); }

 private:
  std::array<DirectConvWeights, kWinogradElements> elements_;
};

// The part of winograd_applies that W decides: a 3x3 kernel with at least 16 input and output channels.
bool winograd_weights_fit(int64_t out_channels, int64_t in_channels, int64_t kernel_h, int64_t kernel_w);

// True when conv_winograd_f32 runs this convolution (and is worth it): the avx2 tier, 2-D, group 1,
// winograd_weights_fit, stride 1, no dilation and an output of at least 4 x 8.
bool winograd_applies(int64_t group, const Geometry& g, int64_t in_channels, int64_t out_channels);

// y = activation(conv(x, w) + bias + z) for x [batch, in_channels, H, W] and y [batch, out_channels, OH, OW],
// with the contract of conv_forward (z may alias y). Requires winograd_applies and weights packed for this W.
// Work is cut into blocks of tile rows whose transformed inputs and products stay in L2; blocks run in parallel.
void conv_winograd_f32(const float* x, const WinogradWeights& w, float* y, int64_t batch, const Geometry& g,
                       ThreadPool& pool, const ConvEpilogue<float>& epilogue);

// One tile row of one input channel plane for the input transform: tiles t < `tiles` read the 4x4 patch whose
// top-left input element is (top, 2t - pad_left); elements outside [0, in_h) x [0, in_w) read as zero.
struct WinogradInputRow {
  const float* x = nullptr;  // the [in_h, in_w] plane
  int64_t in_h = 0;
  int64_t in_w = 0;
  int64_t top = 0;
  int64_t pad_left = 0;
  int64_t tiles = 0;
};

// One tile row of one output channel for the output transform: output rows [0, rows) (rows is 1 or 2) of
// y (and z, null or same layout, may equal y), each out_w wide; tile t covers columns 2t, 2t + 1 (< out_w).
struct WinogradOutputRow {
  float* y = nullptr;
  const float* z = nullptr;
  int64_t out_w = 0;
  int rows = 0;
  int64_t tiles = 0;
  float bias = 0.0f;
  FusedActivation activation;
};

// v[xi * xi_stride + t] = (B^T d_t B)[xi] for the tiles of `row`. Defined only on x86-64; avx512f only.
void f32_winograd_input_row__avx512(const WinogradInputRow& row, float* v, int64_t xi_stride);
// y = activation(A^T m_t A + bias + z) for the tiles of `row`, m_t[xi] = m[xi * xi_stride + t]. Same availability.
void f32_winograd_output_row__avx512(const WinogradOutputRow& row, const float* m, int64_t xi_stride);
// AVX2 + FMA twins of the two above: the same contracts and the same results bit for bit (a NaN that meets another
// NaN may keep either payload); defined only on x86-64 and called only at the avx2 tier.
void f32_winograd_input_row__avx2(const WinogradInputRow& row, float* v, int64_t xi_stride);
void f32_winograd_output_row__avx2(const WinogradOutputRow& row, const float* m, int64_t xi_stride);

}  // namespace nxrt::cpu::conv
