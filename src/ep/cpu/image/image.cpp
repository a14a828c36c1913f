// GridSample, AffineGrid, Col2Im, CenterCropPad.
// GridSample samples X (N, C, D1..Dk) at the normalized grid points (N, O1..Ok, k), whose last dimension lists
// coordinates innermost axis first (x, y, z). Every axis is resolved on its own into weighted taps; a tap that
// falls outside the input under zeros padding contributes nothing. Coordinates, weights and sums are computed in
// double for every type and rounded once (integers half to even, saturating), as Resize does. A point whose
// coordinate is NaN (a NaN grid value, or inf * 0 on a one-pixel axis with align_corners), or infinite under
// reflection padding, has no position: it samples NaN (0 for integer data). An infinite coordinate is beyond the
// image: zeros padding gives 0, border padding the edge pixel.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ep/cpu/image/image_ops.h"
#include "ep/cpu/image/resize_compute.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

enum class SampleMode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

constexpr int kMaxTaps = 4;

template <class C>
C reflect_into(C x, C lo, C hi) {
  const C range = hi - lo;
  if (!(range > 0)) return lo;
  if (x >= lo && x <= hi) return x;
  const C distance = x < lo ? lo - x : x - hi;
  const C flips = std::floor(distance / range);
  const C rest = distance - flips * range;
  const bool even = std::fmod(flips, C(2)) == 0;
  if (x < lo) return even ? lo + rest : hi - rest;
  return even ? hi - rest : lo + rest;
}

template <class C>
void cubic_weights(C t, C* w) {
  constexpr C a = C(-0.75);
  const auto near = [](C s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };
  const auto far = [](C s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// Taps of one axis: input index (-1: zero padding) and weight.
template <class C>
struct AxisSample {
  bool undefined = false;  // the coordinate has no position (see the file comment)
  int count = 0;
  std::array<int64_t, kMaxTaps> index{};
  std::array<C, kMaxTaps> weight{};
};

struct SampleConfig {
  SampleMode mode = SampleMode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

template <class C>
int64_t resolve_index(int64_t i, int64_t length, Padding padding, C lo, C hi) {
  if (i >= 0 && i < length) return i;
  if (padding == Padding::kZeros) return -1;
  if (padding == Padding::kBorder) return std::clamp<int64_t>(i, 0, length - 1);
  const auto reflected = static_cast<int64_t>(reflect_into<C>(static_cast<C>(i), lo, hi));
  return std::clamp<int64_t>(reflected, 0, length - 1);
}

template <class C>
AxisSample<C> sample_axis(C normalized, int64_t length, const SampleConfig& config) {
  const C size = static_cast<C>(length);
  C x = config.align_corners ? (normalized + 1) / 2 * (size - 1) : ((normalized + 1) * size - 1) / 2;
  AxisSample<C> s;
  if (std::isnan(x) || (std::isinf(x) && config.padding == Padding::kReflection)) {
    s.undefined = true;
    return s;
  }
  const C lo = config.align_corners ? C(0) : C(-0.5);
  const C hi = config.align_corners ? size - 1 : size - C(0.5);
  if (config.mode == SampleMode::kNearest) x = std::nearbyint(x);
  if (x < lo || x > hi) {
    if (config.padding == Padding::kBorder) x = std::clamp(x, C(0), size - 1);
    if (config.padding == Padding::kReflection) x = reflect_into(x, lo, hi);
  }
  // Beyond this every tap is outside the image; the limit keeps the integer conversions below defined.
  constexpr C kLimit = C(1e9);
  x = std::clamp(x, -kLimit, kLimit);
  if (config.mode == SampleMode::kNearest) {
    s.count = 1;
    s.index[0] = resolve_index<C>(static_cast<int64_t>(x), length, config.padding, lo, hi);
    s.weight[0] = 1;
    return s;
  }
  const C below = std::floor(x);
  const C t = x - below;
  const auto base = static_cast<int64_t>(below);
  if (config.mode == SampleMode::kLinear) {
    s.count = 2;
    s.weight[0] = 1 - t;
    s.weight[1] = t;
    for (int k = 0; k < 2; ++k) s.index[k] = resolve_index<C>(base + k, length, config.padding, lo, hi);
    return s;
  }
  s.count = 4;
  cubic_weights<C>(t, s.weight.data());
  for (int k = 0; k < 4; ++k) s.index[k] = resolve_index<C>(base - 1 + k, length, config.padding, lo, hi);
  return s;
}

template <class T, class G>
void grid_sample_typed(const Tensor& x, const Tensor& grid, Tensor& y, const SampleConfig& config, ThreadPool& pool) {
  using C = double;
  using Acc = double;
  const Shape& xs = x.shape();
  const size_t k = xs.size() - 2;
  const int64_t batch = xs[0];
  const int64_t channels = xs[1];
  int64_t in_points = 1;
  for (size_t d = 0; d < k; ++d) in_points *= xs[d + 2];
  int64_t out_points = 1;
  for (size_t d = 0; d < k; ++d) out_points *= grid.shape()[d + 1];
  std::vector<int64_t> strides(k, 1);
  for (size_t d = k - 1; d-- > 0;) strides[d] = strides[d + 1] * xs[d + 3];
  const T* xd = x.data<T>();
  const G* gd = grid.data<G>();
  T* yd = y.data<T>();
  // What a point without a position samples: NaN, or 0 for integer data.
  const T undefined_value =
      std::is_integral_v<T> ? T(0) : interpolated_element<T>(std::numeric_limits<double>::quiet_NaN());
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, channels));
  pool.parallel_for(batch * out_points, grain, [&](int64_t begin, int64_t end) {
    std::vector<AxisSample<C>> samples(k);
    std::vector<int64_t> offsets;
    std::vector<Acc> weights;
    std::vector<int64_t> next_offsets;
    std::vector<Acc> next_weights;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t n = item / out_points;
      const int64_t p = item % out_points;
      const G* g = gd + item * static_cast<int64_t>(k);
      bool undefined = false;
      for (size_t d = 0; d < k; ++d) {
        samples[d] = sample_axis<C>(static_cast<C>(g[k - 1 - d]), xs[d + 2], config);
        undefined = undefined || samples[d].undefined;
      }
      if (undefined) {
        for (int64_t c = 0; c < channels; ++c) {
          yd[(n * channels + c) * out_points + p] = undefined_value;
        }
        continue;
      }
      offsets.assign(1, 0);
      weights.assign(1, Acc(1));
      for (size_t d = 0; d < k; ++d) {
        const AxisSample<C>& s = samples[d];
        next_offsets.clear();
        next_weights.clear();
        for (size_t j = 0; j < offsets.size(); ++j) {
          for (int t = 0; t < s.count; ++t) {
            if (s.index[t] < 0) continue;
            next_offsets.push_back(offsets[j] + s.index[t] * strides[d]);
            next_weights.push_back(weights[j] * static_cast<Acc>(s.weight[t]));
          }
        }
        offsets.swap(next_offsets);
        weights.swap(next_weights);
      }
      for (int64_t c = 0; c < channels; ++c) {
        const T* plane = xd + (n * channels + c) * in_points;
        Acc sum = 0;
        for (size_t j = 0; j < offsets.size(); ++j) sum += weights[j] * static_cast<Acc>(plane[offsets[j]]);
        yd[(n * channels + c) * out_points + p] = interpolated_element<T>(sum);
      }
    }
  });
}

using GridDataTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                               uint16_t, uint32_t, uint64_t>;

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(std::string description, SampleConfig config, bool only_4d)
      : description_(std::move(description)), config_(config), only_4d_(only_4d) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": inputs 0 (X) and 1 (grid) are required");
    }
    const Tensor& x = *inputs[0];
    const Tensor& grid = *inputs[1];
    if (x.rank() < 3 || (only_4d_ && x.rank() != 4)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (X) shape ",
                        shape_to_string(x.shape()), only_4d_ ? " must be 4-D" : " must have rank >= 3");
    }
    const auto k = static_cast<int64_t>(x.rank()) - 2;
    if (grid.rank() != x.rank() || grid.shape()[0] != x.shape()[0] || grid.shape().back() != k) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (grid) shape ",
                        shape_to_string(grid.shape()), " does not match input 0 (X) shape ",
                        shape_to_string(x.shape()));
    }
    if (!type_list_contains(FloatTypes{}, grid.dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (grid) type ",
                        data_type_name(grid.dtype()), " is not a float type");
    }
    Shape out{x.shape()[0], x.shape()[1]};
    for (int64_t d = 0; d < k; ++d) out.push_back(grid.shape()[static_cast<size_t>(d + 1)]);
    int64_t out_points = 1;
    for (size_t d = 2; d < out.size(); ++d) out_points *= out[d];
    int64_t in_points = 1;
    for (size_t d = 2; d < x.rank(); ++d) in_points *= x.shape()[d];
    if (in_points == 0 && out_points > 0 && x.shape()[0] * x.shape()[1] > 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (X) shape ",
                        shape_to_string(x.shape()), " has no spatial elements to sample");
    }
    outputs.assign(1, OutputDesc{x.dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    if (outputs[0].numel() == 0) return Status::ok();
    const Tensor& x = *inputs[0];
    const Tensor& grid = *inputs[1];
    visit_dtype<GridDataTypes>(x.dtype(), [&]<class T>() {
      visit_dtype<FloatTypes>(grid.dtype(), [&]<class G>() {
        grid_sample_typed<T, G>(x, grid, outputs[0], config_, pool);
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  SampleConfig config_;
  bool only_4d_;
};

Expected<std::unique_ptr<Kernel>> create_grid_sample(const KernelInfo& info) {
  const graph::Node& node = info.node;
  SampleConfig config;
  TRY_ASSIGN(const std::string mode, node.attr_string("mode", info.opset() < 20 ? "bilinear" : "linear"));
  TRY_ASSIGN(const std::string padding, node.attr_string("padding_mode", "zeros"));
  TRY_ASSIGN(const int64_t align, node.attr_int("align_corners", 0));
  if (mode == "nearest") {
    config.mode = SampleMode::kNearest;
  } else if (mode == "linear" || mode == "bilinear") {
    config.mode = SampleMode::kLinear;
  } else if (mode == "cubic" || mode == "bicubic") {
    config.mode = SampleMode::kCubic;
  } else {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute mode = '", mode, "' is not supported");
  }
  if (padding == "zeros") {
    config.padding = Padding::kZeros;
  } else if (padding == "border") {
    config.padding = Padding::kBorder;
  } else if (padding == "reflection") {
    config.padding = Padding::kReflection;
  } else {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute padding_mode = '", padding,
                      "' is not supported");
  }
  config.align_corners = align != 0;
  return std::unique_ptr<Kernel>(std::make_unique<GridSampleKernel>(node.describe(), config, info.opset() < 20));
}

constexpr DataTypeMask kGridSampleTypes = type_mask(GridDataTypes{});
constexpr DataTypeMask kAffineGridTypes = type_mask(FloatTypes{});
constexpr DataTypeMask kImageCopyTypes = type_mask(AllPodTypes{});
constexpr DataTypeMask kCopyTypesAndStrings = kImageCopyTypes | type_mask(TypeList<std::string>{});
constexpr DataTypeMask kCol2ImTypes = type_mask(NumericTypes{});

const KernelDef kImageKernels[] = {
    {"GridSample", graph::kOnnxDomain, 16, kLatestOpset, kGridSampleTypes, 0, create_grid_sample},
    {"AffineGrid", graph::kOnnxDomain, 20, kLatestOpset, kAffineGridTypes, 0, create_affine_grid},
    {"Col2Im", graph::kOnnxDomain, 18, kLatestOpset, kCol2ImTypes, 0, create_col2im},
    {"CenterCropPad", graph::kOnnxDomain, 18, kLatestOpset, kCopyTypesAndStrings, 0, create_center_crop_pad},
};

}  // namespace

std::span<const KernelDef> image_kernels() { return kImageKernels; }

}  // namespace nxrt::cpu
