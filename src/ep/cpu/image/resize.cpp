// Resize, Upsample.
// Opset differences: Resize-10 and Upsample take X and scales only and use asymmetric coordinates with the
// old "simple" nearest rule; Resize-11+ take (X, roi, scales, sizes); Resize-18 adds axes, antialias and
// keep_aspect_ratio_policy; Resize-19 adds half_pixel_symmetric. Modes from later opsets are accepted at any
// opset. Output sizes from scales are floor(in * scale); the geometry follows onnx.reference.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/image/resize_compute.h"

namespace nxrt::cpu {

namespace {

enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

// Where the op finds its scales and sizes.
struct InputLayout {
  int roi = -1;
  int scales = -1;
  int sizes = -1;
};

Expected<ResizeMode> parse_mode(const graph::Node& node, const std::string& text, bool allow_cubic) {
  if (text == "nearest") return ResizeMode::kNearest;
  if (text == "linear" || text == "bilinear" || text == "trilinear") return ResizeMode::kLinear;
  if (text == "cubic" && allow_cubic) return ResizeMode::kCubic;
  return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute mode = '", text, "' is not supported");
}

Expected<CoordinateMode> parse_coordinates(const graph::Node& node, const std::string& text) {
  if (text == "half_pixel") return CoordinateMode::kHalfPixel;
  if (text == "half_pixel_symmetric") return CoordinateMode::kHalfPixelSymmetric;
  if (text == "pytorch_half_pixel") return CoordinateMode::kPytorchHalfPixel;
  if (text == "align_corners") return CoordinateMode::kAlignCorners;
  if (text == "asymmetric") return CoordinateMode::kAsymmetric;
  if (text == "tf_half_pixel_for_nn") return CoordinateMode::kTfHalfPixelForNn;
  if (text == "tf_crop_and_resize") return CoordinateMode::kTfCropAndResize;
  return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute coordinate_transformation_mode = '",
                    text, "' is not supported");
}

Expected<NearestMode> parse_nearest(const graph::Node& node, const std::string& text) {
  if (text == "round_prefer_floor") return NearestMode::kRoundPreferFloor;
  if (text == "round_prefer_ceil") return NearestMode::kRoundPreferCeil;
  if (text == "floor") return NearestMode::kFloor;
  if (text == "ceil") return NearestMode::kCeil;
  return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute nearest_mode = '", text,
                    "' is not supported");
}

Expected<AspectPolicy> parse_policy(const graph::Node& node, const std::string& text) {
  if (text == "stretch") return AspectPolicy::kStretch;
  if (text == "not_larger") return AspectPolicy::kNotLarger;
  if (text == "not_smaller") return AspectPolicy::kNotSmaller;
  return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute keep_aspect_ratio_policy = '", text,
                    "' is not supported");
}

bool is_given(KernelInputs inputs, int index) {
  return index >= 0 && static_cast<size_t>(index) < inputs.size() && inputs[static_cast<size_t>(index)] != nullptr &&
         inputs[static_cast<size_t>(index)]->numel() > 0;
}

std::string input_name(int index, const char* name) {
  return "input " + std::to_string(index) + " (" + name + ")";
}

Expected<std::vector<double>> read_floats(const Tensor& t, const std::string& description, const std::string& what) {
  std::vector<double> values;
  const bool ok = visit_dtype<FloatTypes>(t.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < t.numel(); ++i) values.push_back(static_cast<double>(t.data<T>()[i]));
  });
  if (!ok || t.rank() > 1) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", what, " must be a 1-D float tensor, got ",
                      data_type_name(t.dtype()), " shape ", shape_to_string(t.shape()));
  }
  return values;
}

class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(std::string description, ResizeSampling sampling, AspectPolicy policy, std::vector<int64_t> axes,
               InputLayout layout, std::vector<float> scale_attribute)
      : description_(std::move(description)), sampling_(sampling), policy_(policy), axes_(std::move(axes)),
        layout_(layout), scale_attribute_(std::move(scale_attribute)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(std::vector<ResizeAxis> axes, plan(inputs));
    Shape out;
    for (const ResizeAxis& axis : axes) out.push_back(axis.out_len);
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(std::vector<ResizeAxis> axes, plan(inputs));
    run_resize(sampling_, axes, *inputs[0], outputs[0], pool);
    return Status::ok();
  }

 private:
  Expected<std::vector<size_t>> resolved_axes(size_t rank) const {
    std::vector<size_t> result;
    std::vector<bool> seen(rank, false);
    if (axes_.empty()) {
      for (size_t d = 0; d < rank; ++d) result.push_back(d);
      return result;
    }
    const auto r = static_cast<int64_t>(rank);
    for (int64_t axis : axes_) {
      if (axis < -r || axis >= r) {
        return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis,
                          " is out of range for input 0 of rank ", r);
      }
      const auto d = static_cast<size_t>(axis < 0 ? axis + r : axis);
      if (seen[d]) return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis, " is repeated");
      seen[d] = true;
      result.push_back(d);
    }
    return result;
  }

  Expected<std::vector<ResizeAxis>> plan(KernelInputs inputs) const {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0 (X)");
    }
    const Tensor& x = *inputs[0];
    std::vector<ResizeAxis> axes(x.rank());
    for (size_t d = 0; d < x.rank(); ++d) {
      axes[d].in_len = x.shape()[d];
      axes[d].out_len = x.shape()[d];
    }
    TRY_ASSIGN(const std::vector<size_t> selected, resolved_axes(x.rank()));
    for (size_t i = 0; i < selected.size(); ++i) axes[selected[i]].pass = static_cast<int64_t>(i);
    const bool has_scales = is_given(inputs, layout_.scales);
    const bool has_sizes = is_given(inputs, layout_.sizes);
    if (has_scales && has_sizes) {
      return make_error(StatusCode::kInvalidArgument, description_, ": only one of ",
                        input_name(layout_.scales, "scales"), " and ", input_name(layout_.sizes, "sizes"),
                        " may be given");
    }
    if (has_sizes) {
      TRY(apply_sizes(*inputs[static_cast<size_t>(layout_.sizes)], selected, axes));
    } else if (has_scales || !scale_attribute_.empty()) {
      std::vector<double> scales;
      if (has_scales) {
        const Tensor& t = *inputs[static_cast<size_t>(layout_.scales)];
        TRY_ASSIGN(scales, read_floats(t, description_, input_name(layout_.scales, "scales")));
      } else {
        scales.assign(scale_attribute_.begin(), scale_attribute_.end());
      }
      TRY(apply_scales(scales, selected, axes));
    } else {
      return make_error(StatusCode::kInvalidArgument, description_, ": one of ",
                        layout_.sizes >= 0 ? input_name(layout_.scales, "scales") + " and " +
                                                 input_name(layout_.sizes, "sizes")
                                           : input_name(layout_.scales, "scales"),
                        " must be given");
    }
    if (sampling_.coordinates == CoordinateMode::kTfCropAndResize && is_given(inputs, layout_.roi)) {
      TRY_ASSIGN(const std::vector<double> roi,
                 read_floats(*inputs[static_cast<size_t>(layout_.roi)], description_, input_name(layout_.roi, "roi")));
      if (roi.size() != 2 * selected.size()) {
        return make_error(StatusCode::kInvalidArgument, description_, ": ", input_name(layout_.roi, "roi"), " has ",
                          roi.size(), " values, expected ", 2 * selected.size());
      }
      for (size_t i = 0; i < selected.size(); ++i) {
        axes[selected[i]].roi_start = roi[i];
        axes[selected[i]].roi_end = roi[selected.size() + i];
      }
    }
    bool input_empty = false;
    bool output_empty = false;
    for (const ResizeAxis& axis : axes) {
      input_empty = input_empty || axis.in_len == 0;
      output_empty = output_empty || axis.out_len == 0;
    }
    if (input_empty && !output_empty) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (X) shape ",
                        shape_to_string(x.shape()), " is empty but the output is not");
    }
    return axes;
  }

  Status apply_scales(const std::vector<double>& scales, const std::vector<size_t>& selected,
                      std::vector<ResizeAxis>& axes) const {
    const std::string name = layout_.scales >= 0 ? input_name(layout_.scales, "scales") : "attribute scales";
    if (scales.size() != selected.size()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " has ", scales.size(),
                        " values, expected ", selected.size());
    }
    for (size_t i = 0; i < selected.size(); ++i) {
      const double scale = scales[i];
      ResizeAxis& axis = axes[selected[i]];
      if (!(scale > 0) || !std::isfinite(scale)) {
        return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " value ", scale,
                          " must be positive and finite");
      }
      const double length = std::floor(scale * static_cast<double>(axis.in_len));
      if (length > 1e12) {
        return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " value ", scale,
                          " gives an output too large");
      }
      axis.scale = scale;
      axis.out_len = static_cast<int64_t>(length);
    }
    return Status::ok();
  }

  Status apply_sizes(const Tensor& t, const std::vector<size_t>& selected, std::vector<ResizeAxis>& axes) const {
    const std::string name = input_name(layout_.sizes, "sizes");
    if (t.dtype() != DataType::kInt64 || t.rank() != 1 || static_cast<size_t>(t.numel()) != selected.size()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " must be a 1-D int64 tensor of ",
                        selected.size(), " values, got ", data_type_name(t.dtype()), " shape ",
                        shape_to_string(t.shape()));
    }
    const int64_t* sizes = t.data<int64_t>();
    for (size_t i = 0; i < selected.size(); ++i) {
      const ResizeAxis& axis = axes[selected[i]];
      if (sizes[i] < 0 || sizes[i] > (int64_t{1} << 40) || (axis.in_len == 0 && sizes[i] != 0)) {
        return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " value ", sizes[i],
                          " is invalid for input 0 dimension ", axis.in_len);
      }
    }
    if (policy_ == AspectPolicy::kStretch) {
      for (size_t i = 0; i < selected.size(); ++i) {
        ResizeAxis& axis = axes[selected[i]];
        axis.out_len = sizes[i];
        axis.scale = axis.in_len == 0 ? 1.0 : static_cast<double>(sizes[i]) / static_cast<double>(axis.in_len);
      }
      return Status::ok();
    }
    // The one scale of the policy: min (not_larger) or max (not_smaller) of sizes[i] / in_size over the axes
    // that have elements; a size of 0 gives the scale 0 and empty outputs. Without such an axis every size is 0
    // (checked above) and the scale stays 1.
    double common = policy_ == AspectPolicy::kNotLarger ? std::numeric_limits<double>::infinity() : 0.0;
    bool any_elements = false;
    for (size_t i = 0; i < selected.size(); ++i) {
      const ResizeAxis& axis = axes[selected[i]];
      if (axis.in_len == 0) continue;
      any_elements = true;
      const double scale = static_cast<double>(sizes[i]) / static_cast<double>(axis.in_len);
      common = policy_ == AspectPolicy::kNotLarger ? std::min(common, scale) : std::max(common, scale);
    }
    if (!any_elements) common = 1.0;
    for (size_t d : selected) {
      axes[d].scale = common;
      axes[d].out_len = static_cast<int64_t>(common * static_cast<double>(axes[d].in_len) + 0.5);
    }
    return Status::ok();
  }

  std::string description_;
  ResizeSampling sampling_;
  AspectPolicy policy_;
  std::vector<int64_t> axes_;
  InputLayout layout_;
  std::vector<float> scale_attribute_;
};

Expected<std::unique_ptr<Kernel>> create_resize(const KernelInfo& info) {
  const graph::Node& node = info.node;
  const bool old = info.opset() < 11;
  ResizeSampling sampling;
  TRY_ASSIGN(const std::string mode, node.attr_string("mode", "nearest"));
  TRY_ASSIGN(sampling.mode, parse_mode(node, mode, !old));
  InputLayout layout;
  AspectPolicy policy = AspectPolicy::kStretch;
  std::vector<int64_t> axes;
  if (old) {
    sampling.coordinates = CoordinateMode::kAsymmetric;
    sampling.nearest = NearestMode::kSimple;
    layout.scales = 1;
  } else {
    layout = InputLayout{1, 2, 3};
    TRY_ASSIGN(const std::string coordinates, node.attr_string("coordinate_transformation_mode", "half_pixel"));
    TRY_ASSIGN(sampling.coordinates, parse_coordinates(node, coordinates));
    TRY_ASSIGN(const std::string nearest, node.attr_string("nearest_mode", "round_prefer_floor"));
    TRY_ASSIGN(sampling.nearest, parse_nearest(node, nearest));
    TRY_ASSIGN(const float cubic_a, node.attr_float("cubic_coeff_a", -0.75f));
    TRY_ASSIGN(const int64_t exclude_outside, node.attr_int("exclude_outside", 0));
    TRY_ASSIGN(const float extrapolation, node.attr_float("extrapolation_value", 0.0f));
    TRY_ASSIGN(const int64_t antialias, node.attr_int("antialias", 0));
    TRY_ASSIGN(const std::string policy_text, node.attr_string("keep_aspect_ratio_policy", "stretch"));
    TRY_ASSIGN(policy, parse_policy(node, policy_text));
    TRY_ASSIGN(axes, node.attr_ints("axes", {}));
    sampling.cubic_a = cubic_a;
    sampling.exclude_outside = exclude_outside != 0;
    sampling.extrapolation_value = extrapolation;
    sampling.antialias = antialias != 0 && sampling.mode != ResizeMode::kNearest;
  }
  return std::unique_ptr<Kernel>(std::make_unique<ResizeKernel>(node.describe(), sampling, policy, std::move(axes),
                                                                layout, std::vector<float>{}));
}

Expected<std::unique_ptr<Kernel>> create_upsample(const KernelInfo& info) {
  const graph::Node& node = info.node;
  ResizeSampling sampling;
  TRY_ASSIGN(const std::string mode, node.attr_string("mode", "nearest"));
  TRY_ASSIGN(sampling.mode, parse_mode(node, mode, false));
  sampling.coordinates = CoordinateMode::kAsymmetric;
  sampling.nearest = NearestMode::kSimple;
  InputLayout layout;
  std::vector<float> scales;
  if (info.opset() < 9) {
    TRY_ASSIGN(scales, node.attr_floats("scales", {}));
    if (scales.empty()) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": required attribute 'scales' is missing");
    }
  } else {
    layout.scales = 1;
  }
  return std::unique_ptr<Kernel>(std::make_unique<ResizeKernel>(node.describe(), sampling, AspectPolicy::kStretch,
                                                                std::vector<int64_t>{}, layout, std::move(scales)));
}

constexpr DataTypeMask kResizeTypes =
    type_mask(TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                       uint32_t, uint64_t, bool>{});

const KernelDef kResizeKernels[] = {
    {"Resize", graph::kOnnxDomain, 10, kLatestOpset, kResizeTypes, 0, create_resize},
    {"Upsample", graph::kOnnxDomain, 7, kLatestOpset, kResizeTypes, 0, create_upsample},
};

}  // namespace

std::span<const KernelDef> resize_kernels() { return kResizeKernels; }

}  // namespace nxrt::cpu
