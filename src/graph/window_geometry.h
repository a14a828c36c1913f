// Window geometry of the convolution and pooling ops (Conv, ConvTranspose, MaxPool, AveragePool, LpPool and the
// CPU provider's fused forms): the attributes as written on the node and their resolution against concrete
// spatial input sizes. Shape inference and every provider's window kernels share it, so an output size is worked
// out by one rule.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/shape.h"
#include "core/status.h"
#include "graph/graph.h"

namespace nxrt::graph {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// Attributes as written on the node; empty vectors mean "default for the spatial rank".
struct WindowAttrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;
  std::vector<int64_t> dilations;
  int64_t group = 1;
  bool ceil_mode = false;
};

// Parses auto_pad, kernel_shape, strides, pads, dilations, group, ceil_mode (absent ones keep defaults) and
// checks the values that do not depend on the input (positive strides/dilations/kernel, non-negative pads).
Expected<WindowAttrs> parse_window_attrs(const Node& node);

// The window geometry for one concrete input: per spatial dim sizes, kernel, stride, dilation and pads.
struct WindowGeometry {
  DimList in;
  DimList out;
  DimList kernel;
  DimList stride;
  DimList dilation;
  DimList pad_begin;
  DimList pad_end;

  size_t rank() const { return in.size(); }
  int64_t in_size() const;
  int64_t out_size() const;
  int64_t kernel_size() const;
};

// Resolves attrs for spatial dims `in` and kernel dims `kernel` (from W, or kernel_shape for pools).
// Output sizes follow ONNX: floor (or ceil with ceil_mode, where the last window must start inside the input
// or its begin padding) of (in + pads - dilated_kernel) / stride + 1; SAME_* gives ceil(in / stride) with the
// odd padding at the end (UPPER) or the begin (LOWER); VALID has no padding. Sizes, pads and dilations anywhere
// in int64 are accepted; a result outside int64 is INVALID_ARGUMENT.
Expected<WindowGeometry> resolve_geometry(const WindowAttrs& attrs, std::span<const int64_t> in,
                                          std::span<const int64_t> kernel, const std::string& description);

// Checks that an attribute list has either no entries or `expected` entries.
Status check_attr_length(const std::vector<int64_t>& values, size_t expected, const char* name,
                         const std::string& description);

}  // namespace nxrt::graph
