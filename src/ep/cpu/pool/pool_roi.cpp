// MaxUnpool, MaxRoiPool, RoiAlign.
// MaxUnpool scatters X into zeros at the flat Indices of the shape MaxPool saw ((in - 1) * stride + kernel -
// pads); a larger output_shape keeps that block in its leading corner. MaxRoiPool is Caffe's ROI pooling
// (rounded box, bins with floor/ceil bounds, empty bins give 0; NaN counts as in MaxPool: skipped unless the
// whole bin is NaN), in float64 for float64 inputs. RoiAlign averages (or takes the max of) bilinear samples on
// a sampling_ratio grid per bin; opset 10 and coordinate_transformation_mode output_half_pixel use box corners
// as given, half_pixel shifts them by -0.5.
#include <algorithm>
#include <cmath>
#include <string>

#include "ep/cpu/pool/pool_kernels.h"

namespace nxrt::cpu::pool {

namespace {

using conv::AccOf;

class MaxUnpoolKernel final : public Kernel {
 public:
  MaxUnpoolKernel(std::string description, DataTypeMask types, conv::WindowAttrs attrs)
      : description_(std::move(description)), types_(types), attrs_(std::move(attrs)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    Shape inferred;
    TRY_ASSIGN(const Shape y_shape, shapes(inputs, inferred));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), y_shape});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    Shape inferred;
    TRY_ASSIGN(const Shape y_shape, shapes(inputs, inferred));
    const Tensor& x = *inputs[0];
    const int64_t* indices = inputs[1]->data<int64_t>();
    const int64_t inferred_numel = shape_numel(inferred);
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (indices[i] < 0 || indices[i] >= inferred_numel) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input I value ", indices[i], " at position ",
                          i, " is outside [0, ", inferred_numel, ")");
      }
    }
    Tensor& y = outputs[0];
    const size_t width = data_type_storage_bytes(x.dtype(), 1);
    std::fill_n(static_cast<char*>(y.raw_data()), y.storage_bytes(), char{0});
    // Position of each inferred-shape element inside y (identical when the shapes match).
    const std::vector<int64_t> inferred_strides = row_major_strides(inferred);
    const std::vector<int64_t> y_strides = row_major_strides(y_shape);
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* dst = static_cast<char*>(y.raw_data());
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t rest = indices[i];
      int64_t at = 0;
      for (size_t d = 0; d < inferred.size(); ++d) {
        at += (rest / inferred_strides[d]) * y_strides[d];
        rest %= inferred_strides[d];
      }
      std::copy_n(src + static_cast<size_t>(i) * width, width, dst + static_cast<size_t>(at) * width);
    }
    return Status::ok();
  }

 private:
  Expected<Shape> shapes(KernelInputs inputs, Shape& inferred) const {
    TRY(require_inputs(inputs, 2, description_));
    const Tensor& x = *inputs[0];
    const Tensor& indices = *inputs[1];
    if (!conv::type_in(types_, x.dtype()) || indices.dtype() != DataType::kInt64) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input types X ",
                        data_type_name(x.dtype()), ", I ", data_type_name(indices.dtype()));
    }
    if (x.rank() < 3 || indices.shape() != x.shape()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": X ", shape_to_string(x.shape()),
                        " must have rank >= 3 and I ", shape_to_string(indices.shape()), " the same shape");
    }
    const size_t rank = x.rank() - 2;
    if (attrs_.kernel_shape.size() != rank) {
      return make_error(StatusCode::kInvalidArgument, description_, ": kernel_shape has ", attrs_.kernel_shape.size(),
                        " values for ", rank, " spatial dims");
    }
    TRY(conv::check_attr_length(attrs_.strides, rank, "strides", description_));
    TRY(conv::check_attr_length(attrs_.pads, 2 * rank, "pads", description_));
    inferred = {x.shape()[0], x.shape()[1]};
    for (size_t d = 0; d < rank; ++d) {
      const int64_t stride = attrs_.strides.empty() ? 1 : attrs_.strides[d];
      const int64_t pads = attrs_.pads.empty() ? 0 : attrs_.pads[d] + attrs_.pads[d + rank];
      const int64_t size = (x.shape()[d + 2] - 1) * stride + attrs_.kernel_shape[d] - pads;
      if (size < 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": output spatial dim ", d, " is negative");
      }
      inferred.push_back(size);
    }
    const Tensor* output_shape = inputs.size() > 2 ? inputs[2] : nullptr;
    if (output_shape == nullptr) return inferred;
    if (output_shape->dtype() != DataType::kInt64 || output_shape->numel() != static_cast<int64_t>(x.rank())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": output_shape must be int64 with ", x.rank(),
                        " values");
    }
    const int64_t* values = output_shape->data<int64_t>();
    Shape result(values, values + x.rank());
    for (size_t d = 0; d < result.size(); ++d) {
      if (result[d] < inferred[d] || (d < 2 && result[d] != inferred[d])) {
        return make_error(StatusCode::kInvalidArgument, description_, ": output_shape ", shape_to_string(result),
                          " is smaller than the unpooled shape ", shape_to_string(inferred));
      }
    }
    return result;
  }

  std::string description_;
  DataTypeMask types_;
  conv::WindowAttrs attrs_;
};

// Shared checks of X [N, C, H, W] and rois for the two ROI ops.
Status check_roi_inputs(const Tensor& x, const Tensor& rois, int64_t box_cols, DataTypeMask types,
                        const std::string& description) {
  if (!conv::type_in(types, x.dtype()) || rois.dtype() != x.dtype()) {
    return make_error(StatusCode::kInvalidArgument, description, ": unsupported input types X ",
                      data_type_name(x.dtype()), ", rois ", data_type_name(rois.dtype()));
  }
  if (x.rank() != 4 || rois.rank() != 2 || rois.shape()[1] != box_cols) {
    return make_error(StatusCode::kInvalidArgument, description, ": X ", shape_to_string(x.shape()),
                      " must be 4-D and rois ", shape_to_string(rois.shape()), " (num_rois, ", box_cols, ")");
  }
  return Status::ok();
}

class MaxRoiPoolKernel final : public Kernel {
 public:
  MaxRoiPoolKernel(std::string description, DataTypeMask types, int64_t pooled_h, int64_t pooled_w, float scale)
      : description_(std::move(description)), types_(types), pooled_h_(pooled_h), pooled_w_(pooled_w), scale_(scale) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 2, description_));
    const Tensor& x = *inputs[0];
    TRY(check_roi_inputs(x, *inputs[1], 5, types_, description_));
    outputs.assign(1, OutputDesc{x.dtype(), {inputs[1]->shape()[0], x.shape()[1], pooled_h_, pooled_w_}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    Status status = Status::ok();
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() { status = run_typed<T>(inputs, outputs[0], pool); });
    return status;
  }

 private:
  template <class T>
  Status run_typed(KernelInputs inputs, Tensor& y, ThreadPool& pool) const {
    using Acc = AccOf<T>;  // float64 values stay float64
    const Tensor& x = *inputs[0];
    const T* rois = inputs[1]->data<T>();
    const int64_t num_rois = inputs[1]->shape()[0];
    const int64_t batch = x.shape()[0], channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
    for (int64_t r = 0; r < num_rois; ++r) {
      const float b = static_cast<float>(rois[r * 5]);
      if (!(b >= 0.0f) || b >= static_cast<float>(batch)) {
        return make_error(StatusCode::kInvalidArgument, description_, ": rois batch index ", b, " of roi ", r,
                          " is outside [0, ", batch, ")");
      }
      for (int i = 1; i < 5; ++i) {
        const float scaled = static_cast<float>(rois[r * 5 + i]) * scale_;
        if (!(std::abs(scaled) < 1e9f)) {
          return make_error(StatusCode::kInvalidArgument, description_, ": rois value ",
                            static_cast<float>(rois[r * 5 + i]), " of roi ", r, " is not a usable coordinate");
        }
      }
    }
    const T* xd = x.data<T>();
    T* yd = y.data<T>();
    pool.parallel_for(num_rois * channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t r = item / channels;
        const int64_t c = item % channels;
        const T* box = rois + r * 5;
        const auto n = static_cast<int64_t>(static_cast<float>(box[0]));
        auto coord = [&](int i) { return static_cast<int64_t>(std::round(static_cast<float>(box[i]) * scale_)); };
        const int64_t start_w = coord(1), start_h = coord(2), end_w = coord(3), end_h = coord(4);
        const float bin_h = static_cast<float>(std::max<int64_t>(end_h - start_h + 1, 1)) / pooled_h_;
        const float bin_w = static_cast<float>(std::max<int64_t>(end_w - start_w + 1, 1)) / pooled_w_;
        const T* plane = xd + (n * channels + c) * height * width;
        T* out = yd + item * pooled_h_ * pooled_w_;
        for (int64_t ph = 0; ph < pooled_h_; ++ph) {
          const int64_t h0 = std::clamp(static_cast<int64_t>(std::floor(ph * bin_h)) + start_h, int64_t{0}, height);
          const int64_t h1 =
              std::clamp(static_cast<int64_t>(std::ceil((ph + 1) * bin_h)) + start_h, int64_t{0}, height);
          for (int64_t pw = 0; pw < pooled_w_; ++pw) {
            const int64_t w0 = std::clamp(static_cast<int64_t>(std::floor(pw * bin_w)) + start_w, int64_t{0}, width);
            const int64_t w1 =
                std::clamp(static_cast<int64_t>(std::ceil((pw + 1) * bin_w)) + start_w, int64_t{0}, width);
            // MaxPool's rule: NaN is skipped unless every value of the bin is NaN; an empty bin gives 0.
            Acc best = 0;
            bool any = false;
            for (int64_t h = h0; h < h1; ++h) {
              for (int64_t w = w0; w < w1; ++w) {
                const auto v = static_cast<Acc>(plane[h * width + w]);
                if (!any || (v == v && !(v <= best))) best = v;
                any = true;
              }
            }
            out[ph * pooled_w_ + pw] = T(best);
          }
        }
      }
    });
    return Status::ok();
  }

  std::string description_;
  DataTypeMask types_;
  int64_t pooled_h_;
  int64_t pooled_w_;
  float scale_;
};

struct RoiAlignOptions {
  bool half_pixel = true;
  bool max_mode = false;
  int64_t output_h = 1;
  int64_t output_w = 1;
  int64_t sampling_ratio = 0;
  float spatial_scale = 1.0f;
};

class RoiAlignKernel final : public Kernel {
 public:
  RoiAlignKernel(std::string description, DataTypeMask types, RoiAlignOptions opt)
      : description_(std::move(description)), types_(types), opt_(opt) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 3, description_));
    const Tensor& x = *inputs[0];
    TRY(check_roi_inputs(x, *inputs[1], 4, types_, description_));
    const Tensor& batch_indices = *inputs[2];
    if (batch_indices.dtype() != DataType::kInt64 || batch_indices.shape() != Shape{inputs[1]->shape()[0]}) {
      return make_error(StatusCode::kInvalidArgument, description_, ": batch_indices ",
                        shape_to_string(batch_indices.shape()), " must be int64 with one value per roi");
    }
    outputs.assign(1, OutputDesc{x.dtype(), {inputs[1]->shape()[0], x.shape()[1], opt_.output_h, opt_.output_w}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const int64_t* batch_indices = inputs[2]->data<int64_t>();
    const int64_t batch = inputs[0]->shape()[0];
    for (int64_t r = 0; r < inputs[2]->numel(); ++r) {
      if (batch_indices[r] < 0 || batch_indices[r] >= batch) {
        return make_error(StatusCode::kInvalidArgument, description_, ": batch_indices value ", batch_indices[r],
                          " is outside [0, ", batch, ")");
      }
    }
    Status status = Status::ok();
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() { status = check_rois<T>(*inputs[1]); });
    TRY(status);
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() { run_typed<T>(inputs, outputs[0], pool); });
    return Status::ok();
  }

 private:
  // Box corners must be finite and the adaptive sampling grid (ceil(box / output) per bin) bounded: each task keeps
  // the bilinear taps of one ROI (64 bytes per sampling point), so 2^22 points are 256 MiB per thread.
  template <class T>
  Status check_rois(const Tensor& rois) const {
    constexpr double kMaxSamples = static_cast<double>(int64_t{1} << 22);
    const T* data = rois.data<T>();
    for (int64_t r = 0; r < rois.shape()[0]; ++r) {
      double extent[2];
      for (int axis = 0; axis < 2; ++axis) {
        const double begin = static_cast<double>(static_cast<float>(data[r * 4 + axis])) * opt_.spatial_scale;
        const double end = static_cast<double>(static_cast<float>(data[r * 4 + axis + 2])) * opt_.spatial_scale;
        if (!std::isfinite(begin) || !std::isfinite(end)) {
          return make_error(StatusCode::kInvalidArgument, description_, ": roi ", r, " has a non-finite corner");
        }
        extent[axis] = std::abs(end - begin) + 1.0;
      }
      const double grid = opt_.sampling_ratio > 0
                              ? static_cast<double>(opt_.sampling_ratio) * static_cast<double>(opt_.sampling_ratio)
                              : std::ceil(extent[0] / static_cast<double>(opt_.output_w)) *
                                    std::ceil(extent[1] / static_cast<double>(opt_.output_h));
      if (grid * static_cast<double>(opt_.output_h * opt_.output_w) > kMaxSamples) {
        return make_error(StatusCode::kInvalidArgument, description_, ": roi ", r, " needs too many sampling points");
      }
    }
    return Status::ok();
  }

  struct Sample {
    int64_t pos[4];
    double weight[4];
  };

  template <class T>
  void run_typed(KernelInputs inputs, Tensor& y, ThreadPool& pool) const {
    using Acc = AccOf<T>;
    const Tensor& x = *inputs[0];
    const T* rois = inputs[1]->data<T>();
    const int64_t* batch_indices = inputs[2]->data<int64_t>();
    const int64_t num_rois = inputs[1]->shape()[0];
    const int64_t channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
    const T* xd = x.data<T>();
    T* yd = y.data<T>();
    const int64_t out_h = opt_.output_h, out_w = opt_.output_w;
    pool.parallel_for(num_rois, 1, [&](int64_t begin, int64_t end) {
      std::vector<Sample> samples;
      for (int64_t r = begin; r < end; ++r) {
        const double offset = opt_.half_pixel ? 0.5 : 0.0;
        const double start_w = static_cast<double>(static_cast<Acc>(rois[r * 4 + 0])) * opt_.spatial_scale - offset;
        const double start_h = static_cast<double>(static_cast<Acc>(rois[r * 4 + 1])) * opt_.spatial_scale - offset;
        const double end_w = static_cast<double>(static_cast<Acc>(rois[r * 4 + 2])) * opt_.spatial_scale - offset;
        const double end_h = static_cast<double>(static_cast<Acc>(rois[r * 4 + 3])) * opt_.spatial_scale - offset;
        double roi_w = end_w - start_w;
        double roi_h = end_h - start_h;
        if (!opt_.half_pixel) {
          roi_w = std::max(roi_w, 1.0);
          roi_h = std::max(roi_h, 1.0);
        }
        const double bin_h = roi_h / static_cast<double>(out_h);
        const double bin_w = roi_w / static_cast<double>(out_w);
        const int64_t grid_h =
            opt_.sampling_ratio > 0 ? opt_.sampling_ratio : static_cast<int64_t>(std::ceil(roi_h / out_h));
        const int64_t grid_w =
            opt_.sampling_ratio > 0 ? opt_.sampling_ratio : static_cast<int64_t>(std::ceil(roi_w / out_w));
        const int64_t gh = std::max<int64_t>(grid_h, 0), gw = std::max<int64_t>(grid_w, 0);
        const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
        samples.assign(static_cast<size_t>(out_h * out_w * gh * gw), Sample{});
        size_t s = 0;
        for (int64_t ph = 0; ph < out_h; ++ph) {
          for (int64_t pw = 0; pw < out_w; ++pw) {
            for (int64_t iy = 0; iy < gh; ++iy) {
              const double yy = start_h + ph * bin_h + (iy + 0.5) * bin_h / static_cast<double>(gh);
              for (int64_t ix = 0; ix < gw; ++ix, ++s) {
                double xx = start_w + pw * bin_w + (ix + 0.5) * bin_w / static_cast<double>(gw);
                double yv = yy;
                Sample& sample = samples[s];
                if (yv < -1.0 || yv > height || xx < -1.0 || xx > width) continue;
                yv = std::max(yv, 0.0);
                xx = std::max(xx, 0.0);
                auto y_low = static_cast<int64_t>(yv), x_low = static_cast<int64_t>(xx);
                int64_t y_high = y_low + 1, x_high = x_low + 1;
                if (y_low >= height - 1) {
                  y_high = y_low = height - 1;
                  yv = static_cast<double>(y_low);
                }
                if (x_low >= width - 1) {
                  x_high = x_low = width - 1;
                  xx = static_cast<double>(x_low);
                }
                const double ly = yv - y_low, lx = xx - x_low, hy = 1.0 - ly, hx = 1.0 - lx;
                sample = Sample{
                    {y_low * width + x_low, y_low * width + x_high, y_high * width + x_low, y_high * width + x_high},
                    {hy * hx, hy * lx, ly * hx, ly * lx}};
              }
            }
          }
        }
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = xd + (batch_indices[r] * channels + c) * height * width;
          T* out = yd + (r * channels + c) * out_h * out_w;
          size_t at = 0;
          for (int64_t bin = 0; bin < out_h * out_w; ++bin) {
            Acc value{0};
            for (int64_t i = 0; i < gh * gw; ++i, ++at) {
              const Sample& sp = samples[at];
              if (opt_.max_mode) {
                Acc v = static_cast<Acc>(sp.weight[0]) * static_cast<Acc>(plane[sp.pos[0]]);
                for (int q = 1; q < 4; ++q)
                  v = std::max(v, static_cast<Acc>(sp.weight[q]) * static_cast<Acc>(plane[sp.pos[q]]));
                value = i == 0 ? v : std::max(value, v);
              } else {
                for (int q = 0; q < 4; ++q)
                  value += static_cast<Acc>(sp.weight[q]) * static_cast<Acc>(plane[sp.pos[q]]);
              }
            }
            if (!opt_.max_mode) value /= static_cast<Acc>(count);
            out[bin] = T(value);
          }
        }
      }
    });
  }

  std::string description_;
  DataTypeMask types_;
  RoiAlignOptions opt_;
};

DataTypeMask float_types(int opset) {
  return opset >= 22 ? type_mask(FloatTypes{}) : type_mask(TypeList<float, double, Float16>{});
}

}  // namespace

Expected<std::unique_ptr<Kernel>> create_max_unpool(const KernelInfo& info) {
  TRY_ASSIGN(conv::WindowAttrs attrs, conv::parse_window_attrs(info.node));
  if (attrs.kernel_shape.empty()) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": attribute kernel_shape is required");
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<MaxUnpoolKernel>(info.node.describe(), float_types(info.opset()), std::move(attrs)));
}

Expected<std::unique_ptr<Kernel>> create_max_roi_pool(const KernelInfo& info) {
  TRY_ASSIGN(const std::vector<int64_t> pooled, info.node.attr_ints("pooled_shape", {}));
  TRY_ASSIGN(const float scale, info.node.attr_float("spatial_scale", 1.0f));
  if (pooled.size() != 2 || pooled[0] <= 0 || pooled[1] <= 0) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(),
                      ": attribute pooled_shape must hold two positive values");
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<MaxRoiPoolKernel>(info.node.describe(), float_types(info.opset()), pooled[0], pooled[1], scale));
}

Expected<std::unique_ptr<Kernel>> create_roi_align(const KernelInfo& info) {
  const graph::Node& node = info.node;
  RoiAlignOptions opt;
  TRY_ASSIGN(const std::string mode, node.attr_string("mode", "avg"));
  if (mode != "avg" && mode != "max") {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": unsupported mode '", mode, "'");
  }
  opt.max_mode = mode == "max";
  TRY_ASSIGN(const std::string transform, node.attr_string("coordinate_transformation_mode",
                                                           info.opset() >= 16 ? "half_pixel" : "output_half_pixel"));
  if (transform != "half_pixel" && transform != "output_half_pixel") {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": unsupported coordinate_transformation_mode '",
                      transform, "'");
  }
  opt.half_pixel = transform == "half_pixel";
  TRY_ASSIGN(opt.output_h, node.attr_int("output_height", 1));
  TRY_ASSIGN(opt.output_w, node.attr_int("output_width", 1));
  TRY_ASSIGN(opt.sampling_ratio, node.attr_int("sampling_ratio", 0));
  TRY_ASSIGN(opt.spatial_scale, node.attr_float("spatial_scale", 1.0f));
  if (opt.output_h <= 0 || opt.output_w <= 0 || opt.sampling_ratio < 0) {
    return make_error(StatusCode::kInvalidGraph, node.describe(),
                      ": output_height/output_width must be > 0 and sampling_ratio >= 0");
  }
  return std::unique_ptr<Kernel>(std::make_unique<RoiAlignKernel>(node.describe(), float_types(info.opset()), opt));
}

}  // namespace nxrt::cpu::pool
