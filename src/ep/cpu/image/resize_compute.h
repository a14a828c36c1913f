// Resize/Upsample geometry and execution shared by resize.cpp.
// A resize is separable: every axis maps each output index to a fixed number of weighted input taps (edge
// indices already clamped) and, for tf_crop_and_resize, a flag that the output position lies outside the input.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/half.h"
#include "core/tensor.h"
#include "core/thread_pool.h"

namespace nxrt::cpu {

// An interpolated value (computed in double) as element type T, rounded once: integers half to even, saturating
// (NaN to the lowest value); the half types through float. Resize and GridSample store their results with it.
template <class T>
T interpolated_element(double value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const double rounded = std::nearbyint(value);
    if (!(rounded > static_cast<double>(std::numeric_limits<T>::lowest()))) return std::numeric_limits<T>::lowest();
    if (rounded >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(rounded);
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class CoordinateMode {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
// kSimple: the opset < 11 rule (floor when upsampling, ceil when downsampling).
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeSampling {
  ResizeMode mode = ResizeMode::kNearest;
  CoordinateMode coordinates = CoordinateMode::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation_value = 0.0;
};

// One axis: `scale` as the op defines it (output / input), the crop window for tf_crop_and_resize.
struct ResizeAxis {
  int64_t in_len = 0;
  int64_t out_len = 0;
  double scale = 1.0;
  double roi_start = 0.0;
  double roi_end = 1.0;
  // Interpolation passes run axis by axis in increasing `pass` (ties in axis order): the order of the axes
  // attribute, as the reference resamples them, so rounding between the passes matches.
  int64_t pass = 0;
};

struct AxisTaps {
  int64_t taps = 1;
  std::vector<int64_t> index;    // out_len * taps, each in [0, in_len)
  std::vector<double> weight;    // out_len * taps
  std::vector<uint8_t> outside;  // out_len; 1: the output is extrapolation_value
};

// True when the axis leaves its data unchanged (the reference skips such axes): length and scale 1 kept, the
// crop window the whole axis, and a coordinate mode that maps x to x at scale 1.
bool is_identity_axis(const ResizeAxis& axis, const ResizeSampling& sampling);

AxisTaps build_axis_taps(const ResizeSampling& sampling, const ResizeAxis& axis);

// x: input of shape in_shape; y: output allocated with the axes' out_len. Same dtype.
void run_resize(const ResizeSampling& sampling, const std::vector<ResizeAxis>& axes, const Tensor& x, Tensor& y,
                ThreadPool& pool);

}  // namespace nxrt::cpu
