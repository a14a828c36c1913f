// GridSample, AffineGrid, Col2Im, CenterCropPad.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> image_kernels() { return {}; }

}  // namespace nxrt::cpu
