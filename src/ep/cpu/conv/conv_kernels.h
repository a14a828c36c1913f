// Create functions of the conv family, defined across conv*.cpp and listed in conv_kernels() (conv.cpp).
#pragma once

#include <string>

#include "ep/cpu/conv/conv_common.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu::conv {

Expected<std::unique_ptr<Kernel>> create_conv_transpose(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_deform_conv(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_causal_conv_with_state(const KernelInfo& info);

// Shapes of a forward convolution: x [N, C, spatial...], w [M, C / group, kernel...].
struct ConvProblem {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  Geometry geometry;
  Shape y_shape;
};

class DirectConvWeights;
// The direct-kernel weights a Conv / FusedConv kernel packed at creation (W constant, f32, 4-D, group 1), or null;
// they live as long as the kernel.
const DirectConvWeights* prepacked_direct_weights(const Kernel& conv_kernel);

// Validates x/w ranks and channel counts against group and kernel_shape, resolves the window geometry.
Expected<ConvProblem> conv_problem(const WindowAttrs& attrs, const Shape& x, const Shape& w,
                                   const std::string& description);

}  // namespace nxrt::cpu::conv
