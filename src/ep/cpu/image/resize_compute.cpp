#include "ep/cpu/image/resize_compute.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
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

// The weight of the tap at `offset` from the element below the source coordinate (ratio in (0, 1] above it).
// The formulas and their order of operations are onnx.reference's, so weights agree to the bit and integer
// results round alike at ties: without antialias linear is [1 - r, r] and cubic four fixed polynomials of r;
// with antialias the kernels are evaluated at (offset - r) * support_scale.
double tap_weight(const ResizeSampling& sampling, bool cubic, int64_t offset, double ratio, double support_scale) {
  const double a = sampling.cubic_a;
  if (!sampling.antialias) {
    if (!cubic) return offset == 0 ? 1 - ratio : ratio;
    switch (offset) {
      case -1: {
        const double t = ratio + 1;
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
      }
      case 0:
        return ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1;
      case 1: {
        const double t = 1 - ratio;
        return ((a + 2) * t - (a + 3)) * t * t + 1;
      }
      default: {
        const double t = (1 - ratio) + 1;
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
      }
    }
  }
  const double x = std::fabs((static_cast<double>(offset) - ratio) * support_scale);
  if (!cubic) return std::clamp(1 - x, 0.0, 1.0);
  const double x2 = x * x;
  const double x3 = x * x2;
  if (x <= 1) return (a + 2) * x3 - (a + 3) * x2 + 1;
  if (x < 2) return a * x3 - 5 * a * x2 + 8 * a * x - 4 * a;
  return 0.0;
}

// The sum of v[0..n) in numpy's order for a contiguous reduction (the reference's): sequential below 8 terms,
// else 8 interleaved partial sums combined pairwise, then the remainder.
double numpy_order_sum(const double* v, int64_t n) {
  if (n < 8) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += v[i];
    return sum;
  }
  std::array<double, 8> lanes{};
  for (int j = 0; j < 8; ++j) lanes[static_cast<size_t>(j)] = v[j];
  int64_t i = 8;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) lanes[static_cast<size_t>(j)] += v[i + j];
  }
  double sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (; i < n; ++i) sum += v[i];
  return sum;
}

double clamp_coordinate(double x) {
  // Keeps the later int64 conversions defined for absurd scales.
  constexpr double kLimit = 4.0e18;
  return std::isnan(x) ? 0.0 : std::clamp(x, -kLimit, kLimit);
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
  std::vector<std::vector<int64_t>> offsets(rank);
  std::vector<std::vector<uint8_t>> outside(rank);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    const ResizeAxis& axis = axes[d];
    offsets[d].resize(static_cast<size_t>(axis.out_len));
    outside[d].assign(static_cast<size_t>(axis.out_len), 0);
    const bool identity = is_identity_axis(axis, sampling);
    const AxisTaps taps = identity ? AxisTaps{} : build_axis_taps(sampling, axis);
    for (int64_t o = 0; o < axis.out_len; ++o) {
      const auto k = static_cast<size_t>(o);
      offsets[d][k] = (identity ? o : taps.index[k]) * stride;
      if (!identity) outside[d][k] = taps.outside[k];
    }
    stride *= axis.in_len;
  }
  const T fill = interpolated_element<T>(sampling.extrapolation_value);
  // Trailing axes that map every output index to itself (the channel lanes of a blocked image, or C of NHWC) make
  // each output position a run of `inner` contiguous input elements: copied whole.
  size_t kept = rank;
  int64_t inner = 1;
  while (kept > 1 && is_identity_axis(axes[kept - 1], sampling)) inner *= axes[--kept].out_len;
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
        // The taps lie along the reduced axis, contiguous in the reference: numpy's order of the sum.
        std::array<Acc, 64> products{};
        if (n <= 64) {
          for (int64_t t = 0; t < n; ++t) products[static_cast<size_t>(t)] = weight[t] * row[index[t]];
          *out = numpy_order_sum(products.data(), n);
        } else {
          Acc sum = 0;
          for (int64_t t = 0; t < n; ++t) sum += weight[t] * row[index[t]];
          *out = sum;
        }
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
  // Every type interpolates in double and rounds once, as onnx.reference does: float32 taps whose weights
  // cancel (cubic) would otherwise keep only float32's absolute accuracy of the sum.
  using Acc = double;
  std::vector<Acc> current(static_cast<size_t>(in_count));
  for (int64_t i = 0; i < in_count; ++i) current[static_cast<size_t>(i)] = static_cast<Acc>(x[i]);
  Shape shape;
  for (const ResizeAxis& axis : axes) shape.push_back(axis.in_len);
  std::vector<Acc> next;
  std::vector<size_t> order(axes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return axes[a].pass < axes[b].pass; });
  for (const size_t d : order) {
    const ResizeAxis& axis = axes[d];
    if (is_identity_axis(axis, sampling)) continue;
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
  for (size_t i = 0; i < current.size(); ++i) y[i] = interpolated_element<T>(current[i]);
}

using ResizeTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                             uint32_t, uint64_t, bool>;

}  // namespace

bool is_identity_axis(const ResizeAxis& axis, const ResizeSampling& sampling) {
  // tf_half_pixel_for_nn maps x to x + 0.5 even at scale 1: never the identity.
  if (sampling.coordinates == CoordinateMode::kTfHalfPixelForNn) return false;
  const bool crop = sampling.coordinates == CoordinateMode::kTfCropAndResize;
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
    // At an integral coordinate the taps are those of ratio 1 from the element below (onnx.reference's rule:
    // the ratio lies in (0, 1]), so the zero-weight tap is the left neighbour; its NaN or infinity makes the
    // result NaN (0 * inf) as IEEE arithmetic on the taps does.
    double below = std::floor(x);
    if (below == x) below -= 1;
    const double ratio = x - below;
    const auto base = static_cast<int64_t>(below);
    int64_t* index = result.index.data() + o * static_cast<size_t>(n);
    double* weight = result.weight.data() + o * static_cast<size_t>(n);
    for (int64_t t = 0; t < n; ++t) {
      const int64_t offset = first_offset + t;
      weight[t] = tap_weight(sampling, cubic, offset, ratio, support_scale);
      index[t] = std::clamp<int64_t>(base + offset, 0, last);
    }
    // Antialiased kernels are normalized to sum 1 (the reference sums in order); exclude_outside then zeroes
    // the taps outside the axis and normalizes again (numpy's sum), a zero sum left as it is.
    if (sampling.antialias) {
      double sum = 0;
      for (int64_t t = 0; t < n; ++t) sum += weight[t];
      for (int64_t t = 0; t < n; ++t) weight[t] /= sum;
    }
    if (sampling.exclude_outside) {
      for (int64_t t = 0; t < n; ++t) {
        const int64_t j = base + first_offset + t;
        if (j < 0 || j > last) weight[t] = 0;
      }
      const double sum = numpy_order_sum(weight, n);
      if (sum != 0) {
        for (int64_t t = 0; t < n; ++t) weight[t] /= sum;
      }
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
