// Max and global average pooling on the blocked-channel layout (contracts in ep/cpu/conv/nchwc.h), written once over
// the block traits of nchwc_conv_kernel.h and included only by translation units compiled for that ISA.
#pragma once

#include <cstdint>

#include "ep/cpu/conv/nchwc.h"

namespace nxrt::cpu::nchwc::block_kernel {

// The MaxPool rule for one output pixel, taps checked against the input's bounds.
template <class B>
typename B::Reg max_pool_pixel_exact(const PoolJob& job, const float* x, int64_t oh, int64_t ow) {
  const int64_t ih0 = oh * job.stride_h - job.pad_top;
  const int64_t iw0 = ow * job.stride_w - job.pad_left;
  const float minus_inf = -__builtin_inff();
  typename B::Reg best = B::load_broadcast(&minus_inf);
  bool first = true;
  for (int64_t kh = 0; kh < job.kernel_h; ++kh) {
    const int64_t ih = ih0 + kh * job.dilation_h;
    if (ih < 0 || ih >= job.in_h) continue;
    for (int64_t kw = 0; kw < job.kernel_w; ++kw) {
      const int64_t iw = iw0 + kw * job.dilation_w;
      if (iw < 0 || iw >= job.in_w) continue;
      const typename B::Reg tap = B::load(x + (ih * job.in_w + iw) * kBlock);
      best = first ? tap : B::take_larger(best, tap);
      first = false;
    }
  }
  return best;
}

// The entry point behind f32_max_pool_nchwc_rows__<isa> (nchwc.h).
template <class B>
void max_pool_nchwc_rows(const PoolJob& job, const float* x, float* y, int64_t oh_begin, int64_t oh_end) {
  using Reg = typename B::Reg;
  const WindowRange rows = inner_window_range(job.in_h, job.out_h, job.kernel_h, job.stride_h, job.pad_top,
                                              job.dilation_h);
  const WindowRange cols = inner_window_range(job.in_w, job.out_w, job.kernel_w, job.stride_w, job.pad_left,
                                              job.dilation_w);
  const float minus_inf_value = -__builtin_inff();
  const Reg minus_inf = B::load_broadcast(&minus_inf_value);
  const bool dense_3x3 = job.kernel_h == 3 && job.kernel_w == 3 && job.dilation_h == 1 && job.dilation_w == 1;
  for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
    float* out = y + oh * job.out_w * kBlock;
    const bool inner_row = oh >= rows.begin && oh < rows.end;
    for (int64_t ow = 0; ow < job.out_w; ++ow) {
      if (!inner_row || ow < cols.begin || ow >= cols.end) {
        B::store(out + ow * kBlock, max_pool_pixel_exact<B>(job, x, oh, ow));
        continue;
      }
      // max(tap, best) keeps best on ties and on a NaN tap, so from -inf it follows the rule unless every tap is NaN;
      // such lanes (and any window whose maximum is -inf) end at -inf and are redone exactly.
      const float* window =
          x + ((oh * job.stride_h - job.pad_top) * job.in_w + ow * job.stride_w - job.pad_left) * kBlock;
      Reg best = minus_inf;
      if (dense_3x3) {
        // Each row from -inf, then the rows with max(later, earlier): still the first largest tap in window order.
        const int64_t row = job.in_w * kBlock;
        const auto row_max = [&](const float* r) {
          const Reg first = B::max(B::load(r), minus_inf);
          return B::max(B::load(r + 2 * kBlock), B::max(B::load(r + kBlock), first));
        };
        best = B::max(row_max(window + 2 * row), B::max(row_max(window + row), row_max(window)));
      } else {
        for (int64_t kh = 0; kh < job.kernel_h; ++kh) {
          const float* row = window + kh * job.dilation_h * job.in_w * kBlock;
          for (int64_t kw = 0; kw < job.kernel_w; ++kw) {
            best = B::max(B::load(row + kw * job.dilation_w * kBlock), best);
          }
        }
      }
      if (B::any_equal(best, minus_inf)) best = max_pool_pixel_exact<B>(job, x, oh, ow);
      B::store(out + ow * kBlock, best);
    }
  }
}

// The entry point behind f32_global_average_pool_nchwc__<isa> (nchwc.h).
template <class B>
void global_average_pool_nchwc(const float* x, int64_t plane, float* y) {
  using Reg = typename B::Reg;
  Reg sum[4] = {B::zero(), B::zero(), B::zero(), B::zero()};
  int64_t p = 0;
  for (; p + 4 <= plane; p += 4) {
    for (int i = 0; i < 4; ++i) sum[i] = B::add(sum[i], B::load(x + (p + i) * kBlock));
  }
  for (; p < plane; ++p) sum[0] = B::add(sum[0], B::load(x + p * kBlock));
  const Reg total = B::add(B::add(sum[0], sum[1]), B::add(sum[2], sum[3]));
  const float count = static_cast<float>(plane);
  B::store(y, B::div(total, B::load_broadcast(&count)));
}

}  // namespace nxrt::cpu::nchwc::block_kernel
