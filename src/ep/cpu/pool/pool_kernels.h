// Create functions of the pool family defined in pool_roi.cpp and listed in pool_kernels() (pool.cpp).
#pragma once

#include "ep/cpu/conv/conv_common.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu::pool {

Expected<std::unique_ptr<Kernel>> create_max_unpool(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_max_roi_pool(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_roi_align(const KernelInfo& info);

// out[j] = the MaxPool 3x3 stride-2 result of the window whose top-left input is window[2 * j], for j < count:
// taps window[a * in_w + 2 * j + b] (a, b < 3) in row-major order, NaN taps skipped unless all are NaN, ties
// keep the earlier tap. Reads no input outside those taps. Defined only on x86-64; call only when the CPU has
// avx512f.
void f32_max_pool_3x3s2_row__avx512(const float* window, int64_t in_w, int64_t count, float* out);

// Floats past 2 * out_w + 1 that f32_max_pool_3x3s2_plane__avx512's column scratch needs.
inline constexpr int64_t kMaxPoolPlaneSlack = 48;

// A whole [in_h, in_w] plane of MaxPool 3x3 stride 2 with pads pad_top / pad_left (<= 2) into y [out_h,
// out_w], every window holding at least one input tap (taps outside the input are absent). Computes plain
// maxima, rows first: exact unless a tap is NaN or -0 (where window order decides), so it returns false when the
// plane holds either, and the caller recomputes the plane in window order. `cols` is scratch of
// 2 * out_w + 1 + kMaxPoolPlaneSlack floats. Defined only on x86-64; call only when the CPU has avx512f and
// avx512dq.
bool f32_max_pool_3x3s2_plane__avx512(const float* x, int64_t in_h, int64_t in_w, float* y, int64_t out_h,
                                      int64_t out_w, int64_t pad_top, int64_t pad_left, float* cols);

}  // namespace nxrt::cpu::pool
