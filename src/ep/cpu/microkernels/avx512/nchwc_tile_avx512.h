// Pieces shared by the blocked-channel AVX-512 kernels (direct and Winograd convolution, pooling); include only
// from AVX-512 translation units (kernels/avx512/).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "ep/cpu/microkernels/avx512/activation_avx512.h"
#include "ep/cpu/conv/nchwc.h"

namespace nxrt::cpu::nchwc {

// acc[o][p] += sum over the 16 lanes l of w[o * w_block_stride + 16 l .. + 16] * x[p * pixel_step + l]: one 16-channel
// input block against OB 16 x 16 weight blocks for P pixels (or tiles). Called with a constant pixel_step after
// inlining, every broadcast address is x + constant.
template <int OB, int P>
[[gnu::always_inline]] inline void accumulate_block(__m512 (&acc)[OB][P], const float* x, int64_t pixel_step,
                                                    const float* w, int64_t w_block_stride) {
#pragma GCC unroll 16
  for (int lane = 0; lane < static_cast<int>(kBlock); ++lane) {
    __m512 weight[OB];
#pragma GCC unroll 2
    for (int o = 0; o < OB; ++o) weight[o] = _mm512_loadu_ps(w + o * w_block_stride + lane * kBlock);
#pragma GCC unroll 12
    for (int p = 0; p < P; ++p) {
      const __m512 value = _mm512_set1_ps(x[p * pixel_step + lane]);
#pragma GCC unroll 2
      for (int o = 0; o < OB; ++o) acc[o][p] = _mm512_fmadd_ps(weight[o], value, acc[o][p]);
    }
  }
}

// Output pixel (oh, ow) of output block `block`: acc + bias, + Z when the job has one, activated, stored.
inline void store_output(const ConvJob& job, int64_t block, int64_t oh, int64_t ow, __m512 acc) {
  const int64_t at = ((block * job.out_h + oh) * job.out_w + ow) * kBlock;
  __m512 v = _mm512_add_ps(acc, _mm512_loadu_ps(job.weights->bias() + block * kBlock));
  if (job.z != nullptr) v = _mm512_add_ps(v, _mm512_loadu_ps(job.z + at));
  _mm512_storeu_ps(job.y + at, activate(job.activation, v));
}

// [lo, hi): the output indices along one axis whose whole (dilated) window lies inside the input.
inline void inner_range(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                        int64_t& lo, int64_t& hi) {
  lo = std::min(out, (pad + stride - 1) / stride);
  const int64_t last = in - ((kernel - 1) * dilation + 1) + pad;  // largest start + pad with the window inside
  hi = std::clamp<int64_t>(last < 0 ? 0 : last / stride + 1, lo, out);
}

}  // namespace nxrt::cpu::nchwc
