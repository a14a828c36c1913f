// Kernel factories of the image family that live in image_ops.cpp; image.cpp registers them.
#pragma once

#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

Expected<std::unique_ptr<Kernel>> create_affine_grid(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_col2im(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_center_crop_pad(const KernelInfo& info);

}  // namespace nxrt::cpu
