// Create functions of the pool family defined in pool_roi.cpp and listed in pool_kernels() (pool.cpp).
#pragma once

#include "ep/cpu/conv_common.h"
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

}  // namespace nxrt::cpu::pool
