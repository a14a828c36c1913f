// Shared pieces of the Conv and pooling families: the window geometry names, element conversion to the
// accumulation type, and the im2col / col2im / GEMM core used by Conv, ConvTranspose, ConvInteger and QLinearConv.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/kernel.h"
#include "graph/window_geometry.h"

namespace nxrt::cpu::conv {

// True when `type` is in `mask`.
inline bool type_in(DataTypeMask mask, DataType type) { return ((mask >> static_cast<int>(type)) & 1u) != 0; }

// The window attributes and geometry live with the graph (graph/window_geometry.h): shape inference resolves
// output sizes with the same rule the kernels use.
using graph::AutoPad;
using graph::check_attr_length;
using graph::parse_window_attrs;
using graph::resolve_geometry;
using graph::WindowAttrs;
using Geometry = graph::WindowGeometry;

template <class T>
using AccOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Copies n elements of T into a vector of Acc (float for half/bfloat16/float, double for double).
template <class Acc, class T>
std::vector<Acc> to_acc(const T* data, int64_t n) {
  std::vector<Acc> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, Acc>) {
      out[static_cast<size_t>(i)] = data[i];
    } else {
      out[static_cast<size_t>(i)] = static_cast<Acc>(static_cast<float>(data[i]));
    }
  }
  return out;
}

template <class T, class Acc>
void from_acc(const Acc* data, int64_t n, T* out) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, Acc>) {
      out[i] = data[i];
    } else {
      out[i] = T(static_cast<float>(data[i]));
    }
  }
}

// C = A * B with the project GEMM (beta = 0).
void gemm(const GemmArgs& args, const float* a, const float* b, float* c, ThreadPool& pool);
void gemm(const GemmArgs& args, const double* a, const double* b, double* c, ThreadPool& pool);
// C = epilogue(A * B + beta * C).
void gemm(const GemmArgs& args, const float* a, const float* b, float beta, float* c, ThreadPool& pool,
          const GemmEpilogue<float>& epilogue);
void gemm(const GemmArgs& args, const double* a, const double* b, double beta, double* c, ThreadPool& pool,
          const GemmEpilogue<double>& epilogue);

// Most spatial dims a convolution accepts (conv_problem rejects more).
inline constexpr size_t kMaxConvRank = 16;

// What conv_forward adds to the convolution: y = activation(conv(x, w) + bias + z). bias (may be null) is
// [out_channels]; z (may be null) has y's shape and is either y itself (in place) or does not overlap it.
template <class Acc>
struct ConvEpilogue {
  const Acc* bias = nullptr;
  const Acc* z = nullptr;
  FusedActivation activation;
};

// Grouped convolution on contiguous NC[spatial] data: x is [batch, in_channels, g.in...], w is
// [out_channels, in_channels / group, g.kernel...], y is [batch, out_channels, g.out...]; padding reads as 0.
// The output is cut into tiles of (batch, group, run of output positions); each tile's im2col matrix stays in
// cache for its GEMM (1x1 stride-1 unpadded kernels read x directly), and the epilogue runs inside the GEMM.
// Tiles run in parallel when there are enough of them, else one by one with the GEMM parallel inside.
template <class Acc>
void conv_forward(const Acc* x, const Acc* w, Acc* y, int64_t batch, int64_t in_channels, int64_t out_channels,
                  int64_t group, const Geometry& g, ThreadPool& pool, const ConvEpilogue<Acc>& epilogue = {});

// Convolutions with few output positions per image (streaming 1-D convs over a few frames): at most this many
// positions, group 1 and no Z take conv_narrow_f32.
inline constexpr int64_t kNarrowConvOutputs = 8;
bool narrow_conv_applies(int64_t group, const Geometry& g, bool has_z);
// W [out_channels, in_channels * kernel] as the GEMM's B operand, transposed: k = in_channels * kernel,
// n = out_channels (packed once per kernel, at its first narrow run).
PackedB<float> pack_narrow_conv_weights(const float* w, int64_t out_channels, int64_t k_dim);
// Over chunks of images: y^T [images x positions, out_channels] = columns^T * W^T with the bias and activation in
// the GEMM's epilogue, then transposed into each image of y. Its GEMM has out_channels columns (whole vector
// tiles) where conv_forward's would have `positions` columns per tile. epilogue.z must be null.
void conv_narrow_f32(const float* x, const PackedB<float>& w_t, float* y, int64_t batch, int64_t in_channels,
                     int64_t out_channels, const Geometry& g, ThreadPool& pool, const ConvEpilogue<float>& epilogue);

// Transposed convolution: x is [batch, in_channels, g.out...] (the "output" side of the forward window),
// w is [in_channels, out_channels / group, g.kernel...], y is [batch, out_channels, g.in...]. The geometry's
// `in` holds the transposed output sizes and `out` the transposed input sizes.
template <class Acc>
void conv_transpose_forward(const Acc* x, const Acc* w, const Acc* bias, Acc* y, int64_t batch, int64_t in_channels,
                            int64_t out_channels, int64_t group, const Geometry& g, ThreadPool& pool);

}  // namespace nxrt::cpu::conv
