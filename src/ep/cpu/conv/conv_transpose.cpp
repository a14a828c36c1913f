// ConvTranspose: per (batch, group) col = W^T * X, then col2im scatters the columns into the output.
// Output size per spatial dim: stride * (in - 1) + output_padding + dilated_kernel - pad_begin - pad_end.
// With output_shape (or SAME_* auto_pad, where output_shape defaults to in * stride) the total padding is
// derived from the requested size and split with the odd unit at the end for SAME_UPPER, at the begin
// otherwise; a negative total (requested size larger than the natural one) extends the output.
#include <algorithm>
#include <limits>
#include <string>

#include "ep/cpu/conv/conv_kernels.h"

namespace nxrt::cpu::conv {

namespace {

int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(std::string description, DataTypeMask types, WindowAttrs attrs,
                      std::vector<int64_t> output_padding, std::vector<int64_t> output_shape)
      : description_(std::move(description)),
        types_(types),
        attrs_(std::move(attrs)),
        output_padding_(std::move(output_padding)),
        output_shape_(std::move(output_shape)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input X or W");
    }
    const Tensor& x = *inputs[0];
    const Tensor& w = *inputs[1];
    if (!type_in(types_, x.dtype()) || w.dtype() != x.dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input types X ",
                        data_type_name(x.dtype()), ", W ", data_type_name(w.dtype()));
    }
    TRY_ASSIGN(const Problem p, problem(x.shape(), w.shape()));
    if (inputs.size() > 2 && inputs[2] != nullptr) {
      const Tensor& b = *inputs[2];
      if (b.dtype() != x.dtype() || b.rank() != 1 || b.shape()[0] != p.out_channels) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input B ", shape_to_string(b.shape()),
                          " must be 1-D with ", p.out_channels, " values");
      }
    }
    outputs.assign(1, OutputDesc{x.dtype(), p.y_shape});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const Tensor& w = *inputs[1];
    const Tensor* b = inputs.size() > 2 ? inputs[2] : nullptr;
    TRY_ASSIGN(const Problem p, problem(x.shape(), w.shape()));
    Tensor& y = outputs[0];
    if (y.numel() == 0) return Status::ok();
    const int64_t batch = x.shape()[0];
    const int64_t in_channels = x.shape()[1];
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      using Acc = AccOf<T>;
      if constexpr (std::is_same_v<T, Acc>) {
        conv_transpose_forward<Acc>(x.data<T>(), w.data<T>(), b ? b->data<T>() : nullptr, y.data<T>(), batch,
                                    in_channels, p.out_channels, attrs_.group, p.geometry, pool);
      } else {
        const auto xs = to_acc<Acc>(x.data<T>(), x.numel());
        const auto ws = to_acc<Acc>(w.data<T>(), w.numel());
        const auto bs = b ? to_acc<Acc>(b->data<T>(), b->numel()) : std::vector<Acc>{};
        std::vector<Acc> ys(static_cast<size_t>(y.numel()));
        conv_transpose_forward<Acc>(xs.data(), ws.data(), b ? bs.data() : nullptr, ys.data(), batch, in_channels,
                                    p.out_channels, attrs_.group, p.geometry, pool);
        from_acc(ys.data(), y.numel(), y.data<T>());
      }
    });
    return Status::ok();
  }

 private:
  struct Problem {
    int64_t out_channels = 0;
    Geometry geometry;
    Shape y_shape;
  };

  Expected<Problem> problem(const Shape& x, const Shape& w) const {
    if (x.size() < 3 || w.size() != x.size()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": X ", shape_to_string(x), " and W ",
                        shape_to_string(w), " must have the same rank >= 3");
    }
    const int64_t group = attrs_.group;
    const auto overflow = [&]() -> Status {
      return make_error(StatusCode::kInvalidArgument, description_, ": output size, pads or strides overflow 64 bits");
    };
    const auto fits_int64 = [](__int128 value) {
      return value >= std::numeric_limits<int64_t>::min() && value <= std::numeric_limits<int64_t>::max();
    };
    if (w[0] != x[1] || x[1] % group != 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": W dim 0 (", w[0], ") must equal X channels (",
                        x[1], ") and be divisible by group ", group);
    }
    const size_t rank = x.size() - 2;
    const std::vector<int64_t> kernel(w.begin() + 2, w.end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel) {
      return make_error(StatusCode::kInvalidArgument, description_, ": kernel_shape does not match W ",
                        shape_to_string(w));
    }
    TRY(check_attr_length(attrs_.strides, rank, "strides", description_));
    TRY(check_attr_length(attrs_.dilations, rank, "dilations", description_));
    TRY(check_attr_length(attrs_.pads, 2 * rank, "pads", description_));
    TRY(check_attr_length(output_padding_, rank, "output_padding", description_));
    std::vector<int64_t> requested;
    if (!output_shape_.empty()) {
      if (output_shape_.size() != rank && output_shape_.size() != rank + 2) {
        return make_error(StatusCode::kInvalidArgument, description_, ": output_shape has ", output_shape_.size(),
                          " values for ", rank, " spatial dims");
      }
      requested.assign(output_shape_.end() - static_cast<std::ptrdiff_t>(rank), output_shape_.end());
    } else if (attrs_.auto_pad == AutoPad::kSameUpper || attrs_.auto_pad == AutoPad::kSameLower) {
      const std::vector<int64_t> strides = attrs_.strides.empty() ? std::vector<int64_t>(rank, 1) : attrs_.strides;
      for (size_t i = 0; i < rank; ++i) {
        int64_t size = 0;
        if (__builtin_mul_overflow(x[i + 2], strides[i], &size)) return overflow();
        requested.push_back(size);
      }
    }
    Problem p;
    if (__builtin_mul_overflow(w[1], group, &p.out_channels)) return overflow();
    Geometry& g = p.geometry;
    g.out.assign(x.begin() + 2, x.end());
    g.kernel = kernel;
    g.stride = attrs_.strides.empty() ? std::vector<int64_t>(rank, 1) : attrs_.strides;
    g.dilation = attrs_.dilations.empty() ? std::vector<int64_t>(rank, 1) : attrs_.dilations;
    g.pad_begin.assign(rank, 0);
    g.pad_end.assign(rank, 0);
    g.in.assign(rank, 0);
    for (size_t i = 0; i < rank; ++i) {
      const int64_t extra = output_padding_.empty() ? 0 : output_padding_[i];
      if (extra < 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": output_padding must be >= 0");
      }
      // Sizes and pads come from the model: computed in 128 bits, and a result outside int64 is an error.
      using Wide = __int128;
      const Wide natural_wide = Wide{g.stride[i]} * (Wide{g.out[i]} - 1) + extra +
                                (Wide{g.kernel[i]} - 1) * g.dilation[i] + 1;
      if (!fits_int64(natural_wide)) return overflow();
      const auto natural = static_cast<int64_t>(natural_wide);
      if (!requested.empty()) {
        const Wide total_wide = Wide{natural} - requested[i];
        if (!fits_int64(total_wide)) return overflow();
        const auto total = static_cast<int64_t>(total_wide);
        const int64_t half = floor_half(total);
        const Wide begin = attrs_.auto_pad == AutoPad::kSameUpper ? Wide{half} : Wide{total} - half;
        if (!fits_int64(begin) || !fits_int64(Wide{total} - begin)) return overflow();
        g.pad_begin[i] = static_cast<int64_t>(begin);
        g.pad_end[i] = static_cast<int64_t>(Wide{total} - begin);
        g.in[i] = requested[i];
      } else {
        if (attrs_.auto_pad == AutoPad::kNotSet && !attrs_.pads.empty()) {
          g.pad_begin[i] = attrs_.pads[i];
          g.pad_end[i] = attrs_.pads[i + rank];
        }
        const Wide in = Wide{natural} - g.pad_begin[i] - g.pad_end[i];
        if (!fits_int64(in)) return overflow();
        g.in[i] = static_cast<int64_t>(in);
      }
      if (g.in[i] < 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": computed output spatial dim ", i,
                          " is negative (", g.in[i], ")");
      }
    }
    p.y_shape = {x[0], p.out_channels};
    p.y_shape.insert(p.y_shape.end(), g.in.begin(), g.in.end());
    return p;
  }

  std::string description_;
  DataTypeMask types_;
  WindowAttrs attrs_;
  std::vector<int64_t> output_padding_;
  std::vector<int64_t> output_shape_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_conv_transpose(const KernelInfo& info) {
  TRY_ASSIGN(WindowAttrs attrs, parse_window_attrs(info.node));
  TRY_ASSIGN(std::vector<int64_t> output_padding, info.node.attr_ints("output_padding", {}));
  TRY_ASSIGN(std::vector<int64_t> output_shape, info.node.attr_ints("output_shape", {}));
  const DataTypeMask types =
      info.opset() >= 22 ? type_mask(FloatTypes{}) : type_mask(TypeList<float, double, Float16>{});
  return std::unique_ptr<Kernel>(std::make_unique<ConvTransposeKernel>(
      info.node.describe(), types, std::move(attrs), std::move(output_padding), std::move(output_shape)));
}

}  // namespace nxrt::cpu::conv
