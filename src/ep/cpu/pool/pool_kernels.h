// Create functions of the pool family defined in pool_roi.cpp and listed in pool_kernels() (pool.cpp).
#pragma once

#include "ep/cpu/conv/conv_common.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/cpu_features.h"

namespace nxrt::cpu::pool {

Expected<std::unique_ptr<Kernel>> create_max_unpool(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_max_roi_pool(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_roi_align(const KernelInfo& info);

// out[j] = the MaxPool 3x3 stride-2 result of the window whose top-left input is window[2 * j], for j < count:
// taps window[a * in_w + 2 * j + b] (a, b < 3) in row-major order, NaN taps skipped unless all are NaN, ties
// keep the earlier tap. Reads no input outside those taps. Defined only on x86-64; call only when the CPU has
// avx512f. f32_max_pool_3x3s2_row__avx2 has the same contract and results; call it only at the avx2 tier
// (ep/cpu/microkernels/cpu_features.h).
void f32_max_pool_3x3s2_row__avx512(const float* window, int64_t in_w, int64_t count, float* out);
void f32_max_pool_3x3s2_row__avx2(const float* window, int64_t in_w, int64_t count, float* out);

// Floats past 2 * out_w + 1 that the column scratch of f32_max_pool_3x3s2_plane__avx512 / __avx2 needs.
inline constexpr int64_t kMaxPoolPlaneSlack = 48;

// A whole [in_h, in_w] plane of MaxPool 3x3 stride 2 with pads pad_top / pad_left (<= 2) into y [out_h,
// out_w], every window holding at least one input tap (taps outside the input are absent). Computes plain
// maxima, rows first: exact unless a tap is NaN or -0 (where window order decides), so it returns false when the
// plane holds either, and the caller recomputes the plane in window order. `cols` is scratch of
// 2 * out_w + 1 + kMaxPoolPlaneSlack floats. Defined only on x86-64; call only when the CPU has avx512f and
// avx512dq. f32_max_pool_3x3s2_plane__avx2 has the same contract and results (the same return value too); call
// it only at the avx2 tier.
bool f32_max_pool_3x3s2_plane__avx512(const float* x, int64_t in_h, int64_t in_w, float* y, int64_t out_h,
                                      int64_t out_w, int64_t pad_top, int64_t pad_left, float* cols);
bool f32_max_pool_3x3s2_plane__avx2(const float* x, int64_t in_h, int64_t in_w, float* y, int64_t out_h,
                                    int64_t out_w, int64_t pad_top, int64_t pad_left, float* cols);

using MaxPool3x3s2Row = void (*)(const float* window, int64_t in_w, int64_t count, float* out);
using MaxPool3x3s2Plane = bool (*)(const float* x, int64_t in_h, int64_t in_w, float* y, int64_t out_h,
                                   int64_t out_w, int64_t pad_top, int64_t pad_left, float* cols);

// The row / plane kernel of the CPU's tier (NXRT_CPU_ISA lowers it); null below the avx2 tier and off x86-64.
inline MaxPool3x3s2Row max_pool_3x3s2_row_kernel() {
#if defined(__x86_64__)
  if (cpu_isa_at_least(CpuIsa::kAvx512)) return f32_max_pool_3x3s2_row__avx512;
  if (cpu_isa_at_least(CpuIsa::kAvx2)) return f32_max_pool_3x3s2_row__avx2;
#endif
  return nullptr;
}

inline MaxPool3x3s2Plane max_pool_3x3s2_plane_kernel() {
#if defined(__x86_64__)
  if (cpu_isa_at_least(CpuIsa::kAvx512)) return f32_max_pool_3x3s2_plane__avx512;
  if (cpu_isa_at_least(CpuIsa::kAvx2)) return f32_max_pool_3x3s2_plane__avx2;
#endif
  return nullptr;
}

}  // namespace nxrt::cpu::pool
