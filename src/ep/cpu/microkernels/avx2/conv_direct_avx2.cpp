// AVX2 + FMA micro-kernel of the direct f32 convolution (contract in ep/cpu/conv/conv_direct.h): the twin of
// avx512/conv_direct_avx512.cpp over 8-lane vectors. Sixteen ymm registers hold 4 output channels x 3 vectors of 8
// outputs, the 3 input vectors of a tap and one broadcast weight, so a block of kDirectConvBlock (8) channels runs
// as two halves that read the same inputs. Built with -mavx2 -mfma on x86-64 only (see CMakeLists.txt).
#include "ep/cpu/conv/conv_direct.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "ep/cpu/microkernels/avx2/activation_avx2.h"
#include "ep/cpu/microkernels/avx2/vector_lanes_avx2.h"

namespace nxrt::cpu::conv {

namespace {

using avx2_activation::activate;
using avx2_activation::vectorised;

constexpr int kLanes = 8;
constexpr int kHalf = static_cast<int>(kDirectConvBlock) / 2;
constexpr int kMaxVectors = 3;

// 8 consecutive positions q of the virtual output grid (see DirectConvJob): where their inputs start (tap (0, 0),
// channel 0) and, per output row they touch (at most two as grid_w >= 16), the offset in y's plane that lane 0
// maps to and which lanes are real outputs of that row (bit l: lane l).
struct OutputVector {
  const float* src;
  int64_t dst[2];
  unsigned lanes[2];
};

// Writes `out` to the lanes of `vec` (one plain store when all lanes are row 0's; maskstore is microcoded on AMD).
inline void store_lanes(float* y, int64_t channel_offset, const OutputVector& vec, __m256 out) {
  if (vec.lanes[0] == 0xFFu) {
    _mm256_storeu_ps(y + channel_offset + vec.dst[0], out);
    return;
  }
  for (int r = 0; r < 2; ++r) {
    if (vec.lanes[r] != 0) _mm256_maskstore_ps(y + channel_offset + vec.dst[r], avx2_lanes::lanes_of_bits(vec.lanes[r]), out);
  }
}

// Accumulates kHalf channels (from `channel0`, `channels` <= kHalf of them real) x NV output vectors over all
// input channels and taps, then stores them with the epilogue. `weights` points at the half's first lane of the
// block's packed weights (kDirectConvBlock floats per input channel and tap).
template <int NV>
void conv_half_tile(const DirectConvJob& job, const float* weights, int64_t channel0, int channels,
                    const OutputVector* vectors) {
  // Every loop over c and v is unrolled, so that acc stays in registers (a runtime index keeps it in memory).
  __m256 acc[kHalf][NV];
#pragma GCC unroll 4
  for (int c = 0; c < kHalf; ++c) {
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[c][v] = _mm256_setzero_ps();
  }
  const float* src[NV];
#pragma GCC unroll 3
  for (int v = 0; v < NV; ++v) src[v] = vectors[v].src;
  const float* w = weights;
  const int64_t* taps = job.taps;
  const int64_t tap_count = job.tap_count;
  for (int64_t ci = 0; ci < job.in_channels; ++ci) {
    for (int64_t t = 0; t < tap_count; ++t) {
      const int64_t offset = taps[t];
      __m256 in[NV];
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) in[v] = _mm256_loadu_ps(src[v] + offset);
#pragma GCC unroll 4
      for (int c = 0; c < kHalf; ++c) {
        const __m256 weight = _mm256_broadcast_ss(w + c);
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) acc[c][v] = _mm256_fmadd_ps(weight, in[v], acc[c][v]);
      }
      w += kDirectConvBlock;
    }
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) src[v] += job.plane_stride;
  }
  const int64_t plane = job.out_plane_stride;
  const bool fast_activation = vectorised(job.activation.kind);
#pragma GCC unroll 4
  for (int c = 0; c < kHalf; ++c) {
    if (c >= channels) break;
    const int64_t channel_offset = (channel0 + c) * plane;
    const __m256 bias = _mm256_set1_ps(job.bias != nullptr ? job.bias[channel0 + c] : 0.0f);
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const OutputVector& vec = vectors[v];
      __m256 out = _mm256_add_ps(acc[c][v], bias);
      if (job.z != nullptr) {
        // The two rows' lanes are disjoint and masked-off lanes read as +0: OR joins them exactly.
        const __m256 z0 = _mm256_maskload_ps(job.z + channel_offset + vec.dst[0], avx2_lanes::lanes_of_bits(vec.lanes[0]));
        const __m256 z1 = _mm256_maskload_ps(job.z + channel_offset + vec.dst[1], avx2_lanes::lanes_of_bits(vec.lanes[1]));
        out = _mm256_add_ps(out, _mm256_or_ps(z0, z1));
      }
      if (fast_activation) out = activate(job.activation, out);
      store_lanes(job.y, channel_offset, vec, out);
      if (!fast_activation) {
        for (int r = 0; r < 2; ++r) {
          const unsigned lanes = vec.lanes[r];
          if (lanes == 0) continue;
          const int first = __builtin_ctz(lanes);
          apply_activation(job.activation, job.y + channel_offset + vec.dst[r] + first, __builtin_popcount(lanes));
        }
      }
    }
  }
}

template <int NV>
void conv_tile(const DirectConvJob& job, const float* weights, int64_t channel0, int channels,
               const OutputVector* vectors) {
  for (int half = 0; half * kHalf < channels; ++half) {
    conv_half_tile<NV>(job, weights + half * kHalf, channel0 + half * kHalf,
                       std::min(kHalf, channels - half * kHalf), vectors);
  }
}

}  // namespace

void f32_conv_direct_8x24__avx2(const DirectConvJob& job, int64_t block, int64_t q_begin, int64_t q_end) {
  const int64_t channel0 = block * kDirectConvBlock;
  const int channels = static_cast<int>(std::min<int64_t>(kDirectConvBlock, job.out_channels - channel0));
  const float* weights = job.weights + block * job.in_channels * job.tap_count * kDirectConvBlock;
  OutputVector pending[kMaxVectors];
  int count = 0;
  auto flush = [&]() {
    if (count == 3) conv_tile<3>(job, weights, channel0, channels, pending);
    if (count == 2) conv_tile<2>(job, weights, channel0, channels, pending);
    if (count == 1) conv_tile<1>(job, weights, channel0, channels, pending);
    count = 0;
  };
  // Lanes past out_w of a row are grid padding, computed and dropped; vectors with no real lane are skipped.
  const int64_t grid_w = job.grid_w;
  const int64_t out_w = job.out_w;
  const int64_t gap = grid_w - out_w;
  const int64_t q_total = (job.out_h - 1) * grid_w + out_w;
  int64_t row = q_begin / grid_w;  // the output row of q0, advanced as q0 moves on
  for (int64_t q0 = q_begin; q0 < q_end; q0 += kLanes) {
    OutputVector vec{job.padded + q0, {0, 0}, {0, 0}};
    while ((row + 1) * grid_w <= q0) ++row;
    for (int r = 0; r < 2; ++r) {
      const int64_t row_start = (row + r) * grid_w;  // grid position of this row's column 0
      const int64_t lo = std::max<int64_t>(q0, row_start);
      const int64_t hi = std::min<int64_t>({q0 + kLanes, row_start + out_w, q_total});
      vec.dst[r] = q0 - (row + r) * gap;
      if (hi > lo) vec.lanes[r] = ((1u << (hi - q0)) - 1u) & ~((1u << (lo - q0)) - 1u);
    }
    if ((vec.lanes[0] | vec.lanes[1]) == 0) continue;
    pending[count++] = vec;
    if (count == kMaxVectors) flush();
  }
  flush();
}

void f32_deinterleave__avx2(const float* src, int64_t even_count, float* even_dst, int64_t odd_count,
                            float* odd_dst) {
  const int64_t inputs = std::max(2 * even_count - 1, 2 * odd_count);  // src[0 .. inputs)
  int64_t i = 0;
  for (; i + kLanes <= std::min(even_count, odd_count) && 2 * i + 2 * kLanes <= inputs; i += kLanes) {
    const __m256 lo = _mm256_loadu_ps(src + 2 * i);
    const __m256 hi = _mm256_loadu_ps(src + 2 * i + kLanes);
    _mm256_storeu_ps(even_dst + i, avx2_lanes::even_columns(lo, hi));
    _mm256_storeu_ps(odd_dst + i, avx2_lanes::odd_columns(lo, hi));
  }
  for (int64_t j = i; j < even_count; ++j) even_dst[j] = src[2 * j];
  for (int64_t j = i; j < odd_count; ++j) odd_dst[j] = src[2 * j + 1];
}

}  // namespace nxrt::cpu::conv

#endif
