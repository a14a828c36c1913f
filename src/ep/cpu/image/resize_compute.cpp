#include "ep/cpu/image/resize_compute.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/dispatch.h"

namespace nxrt::cpu {

namespace {

constexpr int64_t kGrain = 16384;

bool close_to(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }

double source_coordinate(const ResizeSampling& sampling, const ResizeAxis& axis, double x) {
  const double in = static_cast<double>(axis.in_len);
  // The reference uses the real-valued output width scale * in, not the rounded output length.
  const double out_width = axis.scale * in;
  const bool single = close_to(out_width, 1.0);
  switch (sampling.coordinates) {
    case CoordinateMode::kHalfPixel:
      return (x + 0.5) / axis.scale - 0.5;
    case CoordinateMode::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(axis.out_len) / out_width;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (x + 0.5) / axis.scale - 0.5;
    }
    case CoordinateMode::kPytorchHalfPixel:
      return single ? -0.5 : (x + 0.5) / axis.scale - 0.5;
    case CoordinateMode::kAlignCorners:
      return single ? 0.0 : x * (in - 1) / (out_width - 1);
    case CoordinateMode::kAsymmetric:
      return x / axis.scale;
    case CoordinateMode::kTfHalfPixelForNn:
      return (x + 0.5) / axis.scale;
    case CoordinateMode::kTfCropAndResize: {
      const double span = axis.roi_end - axis.roi_start;
      const double local = single ? span * (in - 1) / 2 : x * span * (in - 1) / (out_width - 1);
      return local + axis.roi_start * (in - 1);
    }
  }
  return x;
}

int64_t nearest_index(NearestMode mode, double x, double scale) {
  const double below = std::floor(x);
  const double fraction = x - below;
  switch (mode) {
    case NearestMode::kRoundPreferFloor:
      return static_cast<int64_t>(fraction <= 0.5 ? below : below + 1);
    case NearestMode::kRoundPreferCeil:
      return static_cast<int64_t>(fraction < 0.5 ? below : below + 1);
    case NearestMode::kFloor:
      return static_cast<int64_t>(below);
    case NearestMode::kCeil:
      return static_cast<int64_t>(std::ceil(x));
    case NearestMode::kSimple:
      return static_cast<int64_t>(scale < 1.0 ? std::ceil(x) : below);
  }
  return static_cast<int64_t>(below);
}

double cubic_kernel(double t, double a) {
  t = std::fabs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0.0;
}

double linear_kernel(double t) { return std::max(0.0, 1.0 - std::fabs(t)); }

double clamp_coordinate(double x) {
  // Keeps the later int64 conversions defined for absurd scales.
  constexpr double kLimit = 4.0e18;
  return std::isnan(x) ? 0.0 : std::clamp(x, -kLimit, kLimit);
}

template <class T, class Acc>
T from_acc(Acc value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const double rounded = std::nearbyint(static_cast<double>(value));
    if (!(rounded > static_cast<double>(std::numeric_limits<T>::lowest()))) return std::numeric_limits<T>::lowest();
    if (rounded >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(rounded);
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

Shape output_shape(const std::vector<ResizeAxis>& axes) {
  Shape shape;
  for (const ResizeAxis& axis : axes) shape.push_back(axis.out_len);
  return shape;
}

template <class T>
void resize_nearest(const ResizeSampling& sampling, const std::vector<ResizeAxis>& axes, const T* x, T* y,
                    ThreadPool& pool) {
  const size_t rank = axes.size();
  const bool crop = sampling.coordinates == CoordinateMode::kTfCropAndResize;
  std::vector<std::vector<int64_t>> offsets(rank);
  std::vector<std::vector<uint8_t>> outside(rank);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    const ResizeAxis& axis = axes[d];
    offsets[d].resize(static_cast<size_t>(axis.out_len));
    outside[d].assign(static_cast<size_t>(axis.out_len), 0);
    const bool identity = is_identity_axis(axis, crop);
    const AxisTaps taps = identity ? AxisTaps{} : build_axis_taps(sampling, axis);
    for (int64_t o = 0; o < axis.out_len; ++o) {
      const auto k = static_cast<size_t>(o);
      offsets[d][k] = (identity ? o : taps.index[k]) * stride;
      if (!identity) outside[d][k] = taps.outside[k];
    }
    stride *= axis.in_len;
  }
  const T fill = from_acc<T>(sampling.extrapolation_value);
  // Trailing axes that map every output index to itself (the channel lanes of a blocked image, or C of NHWC) make
  // each output position a run of `inner` contiguous input elements: copied whole.
  size_t kept = rank;
  int64_t inner = 1;
  while (kept > 1 && is_identity_axis(axes[kept - 1], crop)) inner *= axes[--kept].out_len;
  const int64_t row_len = axes[kept - 1].out_len;
  Shape out = output_shape(axes);
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < kept; ++d) rows *= out[d];
  const int64_t row_work = std::max<int64_t>(1, row_len * inner);
  pool.parallel_for(rows, std::max<int64_t>(1, kGrain / row_work), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t base = 0;
      bool row_outside = false;
      int64_t rest = row;
      for (size_t d = kept - 1; d-- > 0;) {
        const auto k = static_cast<size_t>(rest % out[d]);
        rest /= out[d];
        base += offsets[d][k];
        row_outside = row_outside || outside[d][k] != 0;
      }
      T* dst = y + row * row_len * inner;
      const std::vector<int64_t>& last = offsets[kept - 1];
      const std::vector<uint8_t>& last_outside = outside[kept - 1];
      if (inner == 1) {
        for (int64_t o = 0; o < row_len; ++o) {
          const auto k = static_cast<size_t>(o);
          dst[o] = row_outside || last_outside[k] != 0 ? fill : x[base + last[k]];
        }
        continue;
      }
      for (int64_t o = 0; o < row_len; ++o) {
        const auto k = static_cast<size_t>(o);
        T* run = dst + o * inner;
        if (row_outside || last_outside[k] != 0) {
          std::fill_n(run, inner, fill);
        } else {
          std::copy_n(x + base + last[k], inner, run);
        }
      }
    }
  });
}

template <class Acc>
void interpolate_axis(const AxisTaps& taps, Acc fill, const Acc* src, Acc* dst, int64_t outer, int64_t in_len,
                      int64_t out_len, int64_t inner, ThreadPool& pool) {
  const int64_t n = taps.taps;
  const std::vector<Acc> weights(taps.weight.begin(), taps.weight.end());
  const int64_t work = std::max<int64_t>(1, inner * n);
  pool.parallel_for(outer * out_len, std::max<int64_t>(1, kGrain / work), [&](int64_t begin, int64_t end) {
    int64_t ob = begin / out_len;
    int64_t o = begin % out_len;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t* index = taps.index.data() + o * n;
      const Acc* weight = weights.data() + o * n;
      const Acc* row = src + ob * in_len * inner;
      Acc* out = dst + item * inner;
      if (taps.outside[static_cast<size_t>(o)] != 0) {
        std::fill(out, out + inner, fill);
      } else if (inner == 1) {
        Acc sum = 0;
        for (int64_t t = 0; t < n; ++t) sum += weight[t] * row[index[t]];
        *out = sum;
      } else {
        std::fill(out, out + inner, Acc(0));
        for (int64_t t = 0; t < n; ++t) {
          const Acc w = weight[t];
          const Acc* in = row + index[t] * inner;
          for (int64_t j = 0; j < inner; ++j) out[j] += w * in[j];
        }
      }
      if (++o == out_len) {
        o = 0;
        ++ob;
      }
    }
  });
}

template <class T>
void resize_interpolate(const ResizeSampling& sampling, const std::vector<ResizeAxis>& axes, const T* x, T* y,
                        int64_t in_count, ThreadPool& pool) {
  using Acc = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, Float16> ||
                                     std::is_same_v<T, BFloat16> || sizeof(T) <= 2,
                                 float, double>;
  const bool crop = sampling.coordinates == CoordinateMode::kTfCropAndResize;
  std::vector<Acc> current(static_cast<size_t>(in_count));
  for (int64_t i = 0; i < in_count; ++i) current[static_cast<size_t>(i)] = static_cast<Acc>(x[i]);
  Shape shape;
  for (const ResizeAxis& axis : axes) shape.push_back(axis.in_len);
  std::vector<Acc> next;
  for (size_t d = 0; d < axes.size(); ++d) {
    const ResizeAxis& axis = axes[d];
    if (is_identity_axis(axis, crop)) continue;
    int64_t outer = 1;
    int64_t inner = 1;
    for (size_t i = 0; i < d; ++i) outer *= shape[i];
    for (size_t i = d + 1; i < shape.size(); ++i) inner *= shape[i];
    const AxisTaps taps = build_axis_taps(sampling, axis);
    next.assign(static_cast<size_t>(outer * axis.out_len * inner), Acc(0));
    interpolate_axis<Acc>(taps, static_cast<Acc>(sampling.extrapolation_value), current.data(), next.data(), outer,
                          axis.in_len, axis.out_len, inner, pool);
    current.swap(next);
    shape[d] = axis.out_len;
  }
  for (size_t i = 0; i < current.size(); ++i) y[i] = from_acc<T>(current[i]);
}

using ResizeTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                             uint32_t, uint64_t, bool>;

}  // namespace

bool is_identity_axis(const ResizeAxis& axis, bool crop) {
  return axis.out_len == axis.in_len && close_to(axis.scale, 1.0) &&
         (!crop || (close_to(axis.roi_start, 0.0) && close_to(axis.roi_end, 1.0)));
}

AxisTaps build_axis_taps(const ResizeSampling& sampling, const ResizeAxis& axis) {
  AxisTaps result;
  const bool crop = sampling.coordinates == CoordinateMode::kTfCropAndResize;
  const auto out_len = static_cast<size_t>(axis.out_len);
  const int64_t last = axis.in_len - 1;
  result.outside.assign(out_len, 0);
  if (sampling.mode == ResizeMode::kNearest) {
    result.taps = 1;
    result.index.resize(out_len);
    result.weight.assign(out_len, 1.0);
    for (size_t o = 0; o < out_len; ++o) {
      const double x = clamp_coordinate(source_coordinate(sampling, axis, static_cast<double>(o)));
      if (crop && (x < 0 || x > static_cast<double>(last))) result.outside[o] = 1;
      result.index[o] = std::clamp<int64_t>(nearest_index(sampling.nearest, x, axis.scale), 0, last);
    }
    return result;
  }
  const bool cubic = sampling.mode == ResizeMode::kCubic;
  const double radius = cubic ? 2.0 : 1.0;
  const double support_scale = sampling.antialias ? std::min(axis.scale, 1.0) : 1.0;
  const auto first_offset = static_cast<int64_t>(std::floor(-radius / support_scale) + 1);
  const int64_t n = 2 - 2 * first_offset;
  result.taps = n;
  result.index.resize(out_len * static_cast<size_t>(n));
  result.weight.resize(out_len * static_cast<size_t>(n));
  for (size_t o = 0; o < out_len; ++o) {
    const double x = clamp_coordinate(source_coordinate(sampling, axis, static_cast<double>(o)));
    if (crop && (x < 0 || x > static_cast<double>(last))) result.outside[o] = 1;
    const double below = std::floor(x);
    const double ratio = x - below;
    const auto base = static_cast<int64_t>(below);
    int64_t* index = result.index.data() + o * static_cast<size_t>(n);
    double* weight = result.weight.data() + o * static_cast<size_t>(n);
    double sum = 0;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t offset = first_offset + t;
      const double distance = (static_cast<double>(offset) - ratio) * support_scale;
      double w = cubic ? cubic_kernel(distance, sampling.cubic_a) : linear_kernel(distance);
      const int64_t j = base + offset;
      if (sampling.exclude_outside && (j < 0 || j > last)) w = 0;
      index[t] = std::clamp<int64_t>(j, 0, last);
      weight[t] = w;
      sum += w;
    }
    if ((sampling.antialias || sampling.exclude_outside) && sum != 0) {
      for (int64_t t = 0; t < n; ++t) weight[t] /= sum;
    }
  }
  return result;
}

void run_resize(const ResizeSampling& sampling, const std::vector<ResizeAxis>& axes, const Tensor& x, Tensor& y,
                ThreadPool& pool) {
  if (y.numel() == 0) return;
  if (axes.empty()) {
    std::memcpy(y.raw_data(), x.raw_data(), x.storage_bytes());
    return;
  }
  visit_dtype<ResizeTypes>(x.dtype(), [&]<class T>() {
    if (sampling.mode == ResizeMode::kNearest || std::is_same_v<T, bool>) {
      resize_nearest<T>(sampling, axes, x.data<T>(), y.data<T>(), pool);
    } else {
      resize_interpolate<T>(sampling, axes, x.data<T>(), y.data<T>(), x.numel(), pool);
    }
  });
}

}  // namespace nxrt::cpu
