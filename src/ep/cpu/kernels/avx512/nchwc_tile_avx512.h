// The register tile shared by the blocked-channel convolution kernels (direct and Winograd); include only from
// AVX-512 translation units (kernels/avx512/).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ep/cpu/nchwc.h"

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

}  // namespace nxrt::cpu::nchwc
