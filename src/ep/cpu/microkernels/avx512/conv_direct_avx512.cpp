// AVX-512 micro-kernel of the direct f32 convolution (contract in ep/cpu/conv/conv_direct.h). Compiled with
// -mavx512f and friends; the driver calls it only when the CPU has avx512f.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined_ps() pass-through operand inside _mm512_max_ps/_mm512_min_ps as
// maybe-uninitialized; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>

#include "ep/cpu/conv/conv_direct.h"
#include "ep/cpu/microkernels/avx512/activation_avx512.h"
#include "ep/cpu/microkernels/avx512/vector_lanes_avx512.h"

namespace nxrt::cpu::conv {

namespace {

constexpr int kBlock = static_cast<int>(kDirectConvBlock);
constexpr int kMaxVectors = 3;

// 16 consecutive positions q of the virtual output grid (out_h rows of job.grid_w, see DirectConvJob): where
// their inputs start (tap (0, 0), channel 0) and, per output row they touch (at most two as grid_w >= 16),
// the offset in y's plane that lane 0 maps to and which lanes are real outputs of that row.
struct OutputVector {
  const float* src;
  int64_t dst[2];
  __mmask16 lanes[2];
};

// Accumulates kBlock channels x NV output vectors over all input channels and taps, then stores them with the
// epilogue. `channels` (<= kBlock) output channels are real.
template <int NV>
void conv_tile(const DirectConvJob& job, const float* weights, int64_t channel0, int channels,
               const OutputVector* vectors) {
  __m512 acc[kBlock][NV];
  for (int c = 0; c < kBlock; ++c) {
    for (int v = 0; v < NV; ++v) acc[c][v] = _mm512_setzero_ps();
  }
  const float* src[NV];
  for (int v = 0; v < NV; ++v) src[v] = vectors[v].src;
  const float* w = weights;
  const int64_t* taps = job.taps;
  const int64_t tap_count = job.tap_count;
  for (int64_t ci = 0; ci < job.in_channels; ++ci) {
    for (int64_t t = 0; t < tap_count; ++t) {
      const int64_t offset = taps[t];
      __m512 in[NV];
      for (int v = 0; v < NV; ++v) in[v] = _mm512_loadu_ps(src[v] + offset);
      for (int c = 0; c < kBlock; ++c) {
        const __m512 weight = _mm512_set1_ps(w[c]);
        for (int v = 0; v < NV; ++v) acc[c][v] = _mm512_fmadd_ps(weight, in[v], acc[c][v]);
      }
      w += kBlock;
    }
    for (int v = 0; v < NV; ++v) src[v] += job.plane_stride;
  }
  const int64_t plane = job.out_plane_stride;
  const bool fast_activation = vectorised(job.activation.kind);
  for (int c = 0; c < channels; ++c) {
    const int64_t channel_offset = (channel0 + c) * plane;
    const __m512 bias = _mm512_set1_ps(job.bias != nullptr ? job.bias[channel0 + c] : 0.0f);
    for (int v = 0; v < NV; ++v) {
      const OutputVector& vec = vectors[v];
      const int64_t at0 = channel_offset + vec.dst[0];
      const int64_t at1 = channel_offset + vec.dst[1];
      __m512 out = _mm512_add_ps(acc[c][v], bias);
      if (job.z != nullptr) {
        __m512 z = _mm512_maskz_loadu_ps(vec.lanes[0], job.z + at0);
        z = _mm512_mask_loadu_ps(z, vec.lanes[1], job.z + at1);
        out = _mm512_add_ps(out, z);
      }
      if (fast_activation) out = activate(job.activation, out);
      _mm512_mask_storeu_ps(job.y + at0, vec.lanes[0], out);
      _mm512_mask_storeu_ps(job.y + at1, vec.lanes[1], out);
      if (!fast_activation) {
        for (int r = 0; r < 2; ++r) {
          const __mmask16 lanes = vec.lanes[r];
          if (lanes == 0) continue;
          const int first = __builtin_ctz(lanes);
          apply_activation(job.activation, job.y + (r == 0 ? at0 : at1) + first, __builtin_popcount(lanes));
        }
      }
    }
  }
}

}  // namespace

void f32_conv_direct_8x48__avx512(const DirectConvJob& job, int64_t block, int64_t q_begin, int64_t q_end) {
  const int64_t channel0 = block * kBlock;
  const int channels = static_cast<int>(std::min<int64_t>(kBlock, job.out_channels - channel0));
  const float* weights = job.weights + block * job.in_channels * job.tap_count * kBlock;
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
  for (int64_t q0 = q_begin; q0 < q_end; q0 += 16) {
    OutputVector vec{job.padded + q0, {0, 0}, {0, 0}};
    while ((row + 1) * grid_w <= q0) ++row;
    for (int r = 0; r < 2; ++r) {
      const int64_t row_start = (row + r) * grid_w;  // grid position of this row's column 0
      const int64_t lo = std::max<int64_t>(q0, row_start);
      const int64_t hi = std::min<int64_t>({q0 + 16, row_start + out_w, q_total});
      vec.dst[r] = q0 - (row + r) * gap;
      if (hi > lo) {
        vec.lanes[r] = static_cast<__mmask16>(((1u << (hi - q0)) - 1u) & ~((1u << (lo - q0)) - 1u));
      }
    }
    if ((vec.lanes[0] | vec.lanes[1]) == 0) continue;
    pending[count++] = vec;
    if (count == kMaxVectors) flush();
  }
  flush();
}

void f32_deinterleave__avx512(const float* src, int64_t even_count, float* even_dst, int64_t odd_count,
                              float* odd_dst) {
  const __m512i even = even_lanes();
  const __m512i odd = odd_lanes();
  const int64_t inputs = std::max(2 * even_count - 1, 2 * odd_count);  // src[0 .. inputs)
  const int64_t outputs = std::max(even_count, odd_count);
  int64_t i = 0;
  // Whole vectors with plain loads (masked loads of a cold input measured several times slower here).
  for (; i + 16 <= std::min(even_count, odd_count) && 2 * i + 32 <= inputs; i += 16) {
    const __m512 lo = _mm512_loadu_ps(src + 2 * i);
    const __m512 hi = _mm512_loadu_ps(src + 2 * i + 16);
    _mm512_storeu_ps(even_dst + i, _mm512_permutex2var_ps(lo, even, hi));
    _mm512_storeu_ps(odd_dst + i, _mm512_permutex2var_ps(lo, odd, hi));
  }
  for (; i < outputs; i += 16) {
    const int64_t left = inputs - 2 * i;
    const __m512 lo = _mm512_maskz_loadu_ps(first_lanes(left), src + 2 * i);
    const __m512 hi = _mm512_maskz_loadu_ps(first_lanes(left - 16), src + 2 * i + 16);
    _mm512_mask_storeu_ps(even_dst + i, first_lanes(even_count - i), _mm512_permutex2var_ps(lo, even, hi));
    _mm512_mask_storeu_ps(odd_dst + i, first_lanes(odd_count - i), _mm512_permutex2var_ps(lo, odd, hi));
  }
}

}  // namespace nxrt::cpu::conv
