// Create functions of the pool family defined in pool_roi.cpp and listed in pool_kernels() (pool.cpp).
#pragma once

#include "ep/cpu/conv_common.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu::pool {

Expected<std::unique_ptr<Kernel>> create_max_unpool(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_max_roi_pool(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_roi_align(const KernelInfo& info);

}  // namespace nxrt::cpu::pool
