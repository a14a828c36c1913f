// AVX-512 reorders and pools of the blocked-channel layout (contracts in ep/cpu/conv/nchwc.h). Compiled with -mavx512f and
// friends; callers check the CPU first.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined_ps() pass-through operand inside _mm512_max_ps as maybe-uninitialized; the
// value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cstring>

#include "ep/cpu/microkernels/avx512/nchwc_tile_avx512.h"
#include "ep/cpu/conv/nchwc.h"
#include "ep/cpu/microkernels/transpose_block.h"

namespace nxrt::cpu::nchwc {

void f32_reorder_to_nchwc__avx512(const float* x, int64_t channels, int64_t plane, int64_t block, float* y,
                                  int64_t begin, int64_t end) {
  const int64_t first = block * kBlock;
  const int64_t lanes = std::min<int64_t>(kBlock, channels - first);
  // The block transpose writes the real lanes only; a last partial block's padding lanes are zeroed first.
  if (lanes < kBlock) std::memset(y + begin * kBlock, 0, static_cast<size_t>((end - begin) * kBlock) * sizeof(float));
  for (int64_t p = begin; p < end; p += kBlock) {
    transpose_32bit_block__avx512(x + first * plane + p, plane, y + p * kBlock, kBlock, lanes,
                                  std::min<int64_t>(kBlock, end - p));
  }
}

void f32_reorder_from_nchwc__avx512(const float* x, int64_t channels, int64_t plane, int64_t block, float* y,
                                    int64_t begin, int64_t end) {
  const int64_t first = block * kBlock;
  const int64_t lanes = std::min<int64_t>(kBlock, channels - first);
  for (int64_t p = begin; p < end; p += kBlock) {
    transpose_32bit_block__avx512(x + p * kBlock, kBlock, y + first * plane + p, plane,
                                  std::min<int64_t>(kBlock, end - p), lanes);
  }
}

namespace {

// The MaxPool rule for one output pixel, taps checked against the input's bounds.
__m512 max_pool_pixel_exact(const PoolJob& job, const float* x, int64_t oh, int64_t ow) {
  const int64_t ih0 = oh * job.stride_h - job.pad_top;
  const int64_t iw0 = ow * job.stride_w - job.pad_left;
  __m512 best = _mm512_set1_ps(-__builtin_inff());
  bool first = true;
  for (int64_t kh = 0; kh < job.kernel_h; ++kh) {
    const int64_t ih = ih0 + kh * job.dilation_h;
    if (ih < 0 || ih >= job.in_h) continue;
    for (int64_t kw = 0; kw < job.kernel_w; ++kw) {
      const int64_t iw = iw0 + kw * job.dilation_w;
      if (iw < 0 || iw >= job.in_w) continue;
      const __m512 tap = _mm512_loadu_ps(x + (ih * job.in_w + iw) * kBlock);
      if (first) {
        best = tap;
        first = false;
        continue;
      }
      // Take the tap where it is larger, or where the best so far is NaN.
      const __mmask16 take = _mm512_cmp_ps_mask(tap, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(best, best, _CMP_UNORD_Q);
      best = _mm512_mask_mov_ps(best, take, tap);
    }
  }
  return best;
}

}  // namespace

void f32_max_pool_nchwc_rows__avx512(const PoolJob& job, const float* x, float* y, int64_t oh_begin, int64_t oh_end) {
  int64_t oh_lo, oh_hi, ow_lo, ow_hi;
  inner_range(job.in_h, job.out_h, job.kernel_h, job.stride_h, job.pad_top, job.dilation_h, oh_lo, oh_hi);
  inner_range(job.in_w, job.out_w, job.kernel_w, job.stride_w, job.pad_left, job.dilation_w, ow_lo, ow_hi);
  const __m512 minus_inf = _mm512_set1_ps(-__builtin_inff());
  const bool dense_3x3 = job.kernel_h == 3 && job.kernel_w == 3 && job.dilation_h == 1 && job.dilation_w == 1;
  for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
    float* out = y + oh * job.out_w * kBlock;
    const bool inner_row = oh >= oh_lo && oh < oh_hi;
    for (int64_t ow = 0; ow < job.out_w; ++ow) {
      if (!inner_row || ow < ow_lo || ow >= ow_hi) {
        _mm512_storeu_ps(out + ow * kBlock, max_pool_pixel_exact(job, x, oh, ow));
        continue;
      }
      // max(tap, best) keeps best on ties and on a NaN tap, so from -inf it follows the rule unless every tap is NaN;
      // such lanes (and any window whose maximum is -inf) end at -inf and are redone exactly.
      const float* window =
          x + ((oh * job.stride_h - job.pad_top) * job.in_w + ow * job.stride_w - job.pad_left) * kBlock;
      __m512 best = minus_inf;
      if (dense_3x3) {
        // Each row from -inf, then the rows with max(later, earlier): still the first largest tap in window order.
        const int64_t row = job.in_w * kBlock;
        const auto row_max = [&](const float* r) {
          const __m512 first = _mm512_max_ps(_mm512_loadu_ps(r), minus_inf);
          return _mm512_max_ps(_mm512_loadu_ps(r + 2 * kBlock), _mm512_max_ps(_mm512_loadu_ps(r + kBlock), first));
        };
        best = _mm512_max_ps(row_max(window + 2 * row), _mm512_max_ps(row_max(window + row), row_max(window)));
      } else {
        for (int64_t kh = 0; kh < job.kernel_h; ++kh) {
          const float* row = window + kh * job.dilation_h * job.in_w * kBlock;
          for (int64_t kw = 0; kw < job.kernel_w; ++kw) {
            best = _mm512_max_ps(_mm512_loadu_ps(row + kw * job.dilation_w * kBlock), best);
          }
        }
      }
      if (_mm512_cmp_ps_mask(best, minus_inf, _CMP_EQ_OQ) != 0) best = max_pool_pixel_exact(job, x, oh, ow);
      _mm512_storeu_ps(out + ow * kBlock, best);
    }
  }
}

void f32_global_average_pool_nchwc__avx512(const float* x, int64_t plane, float* y) {
  __m512 sum[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  int64_t p = 0;
  for (; p + 4 <= plane; p += 4) {
    for (int i = 0; i < 4; ++i) sum[i] = _mm512_add_ps(sum[i], _mm512_loadu_ps(x + (p + i) * kBlock));
  }
  for (; p < plane; ++p) sum[0] = _mm512_add_ps(sum[0], _mm512_loadu_ps(x + p * kBlock));
  const __m512 total = _mm512_add_ps(_mm512_add_ps(sum[0], sum[1]), _mm512_add_ps(sum[2], sum[3]));
  _mm512_storeu_ps(y, _mm512_div_ps(total, _mm512_set1_ps(static_cast<float>(plane))));
}

}  // namespace nxrt::cpu::nchwc
