// AffineGrid, Col2Im, CenterCropPad.
#include "ep/cpu/image/image_ops.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nxrt::cpu {

namespace {

Expected<std::vector<int64_t>> read_ints(const Tensor* t, const std::string& description, const std::string& name) {
  if (t == nullptr) return make_error(StatusCode::kInvalidArgument, description, ": missing ", name);
  std::vector<int64_t> values;
  if (t->dtype() == DataType::kInt64) {
    values.assign(t->data<int64_t>(), t->data<int64_t>() + t->numel());
  } else if (t->dtype() == DataType::kInt32) {
    values.assign(t->data<int32_t>(), t->data<int32_t>() + t->numel());
  } else {
    return make_error(StatusCode::kInvalidArgument, description, ": ", name, " must be int32 or int64, got ",
                      data_type_name(t->dtype()));
  }
  if (t->rank() > 1) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", name, " must be 1-D, got shape ",
                      shape_to_string(t->shape()));
  }
  return values;
}

int64_t product(const std::vector<int64_t>& values) {
  int64_t p = 1;
  for (int64_t v : values) p *= v;
  return p;
}

// ---- AffineGrid ----

class AffineGridKernel final : public Kernel {
 public:
  AffineGridKernel(std::string description, bool align_corners)
      : description_(std::move(description)), align_corners_(align_corners) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const std::vector<int64_t> size, sizes(inputs));
    const size_t k = size.size() - 2;
    Shape out{size[0]};
    for (size_t d = 0; d < k; ++d) out.push_back(size[d + 2]);
    out.push_back(static_cast<int64_t>(k));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const std::vector<int64_t> size, sizes(inputs));
    const auto k = static_cast<int64_t>(size.size()) - 2;
    std::vector<int64_t> spatial(size.begin() + 2, size.end());
    const int64_t points = product(spatial);
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() {
      // Every type computes in double and rounds once: the base grid (2i + 1) / n - 1 (or -1 + 2i / (n - 1))
      // exactly as the spec's linspace defines it, and theta's row times (x, y[, z], 1) with IEEE products.
      using C = double;
      const T* theta = inputs[0]->data<T>();
      T* grid = outputs[0].data<T>();
      const auto base = [&](int64_t i, int64_t n) -> C {
        if (align_corners_) return n <= 1 ? C(-1) : C(-1) + C(2) * static_cast<C>(i) / static_cast<C>(n - 1);
        return (C(2) * static_cast<C>(i) + 1) / static_cast<C>(n) - 1;
      };
      pool.parallel_for(size[0] * points, 1024, [&](int64_t begin, int64_t end) {
        C homogeneous[4];
        for (int64_t item = begin; item < end; ++item) {
          const int64_t n = item / points;
          int64_t rest = item % points;
          // homogeneous = (x, y[, z], 1): the innermost spatial axis first.
          for (int64_t d = k; d-- > 0;) {
            const int64_t len = spatial[static_cast<size_t>(d)];
            homogeneous[k - 1 - d] = base(rest % len, len);
            rest /= len;
          }
          homogeneous[k] = 1;
          const T* m = theta + n * k * (k + 1);
          for (int64_t r = 0; r < k; ++r) {
            C sum = 0;
            for (int64_t c = 0; c <= k; ++c) sum += static_cast<C>(m[r * (k + 1) + c]) * homogeneous[c];
            grid[item * k + r] = T(sum);
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  Expected<std::vector<int64_t>> sizes(KernelInputs inputs) const {
    if (inputs.size() < 2 || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0 (theta)");
    }
    TRY_ASSIGN(std::vector<int64_t> size, read_ints(inputs[1], description_, "input 1 (size)"));
    const Tensor& theta = *inputs[0];
    if (size.size() != 4 && size.size() != 5) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (size) has ", size.size(),
                        " values, expected 4 or 5");
    }
    for (int64_t v : size) {
      if (v < 0) return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (size) value ", v, " < 0");
    }
    const auto k = static_cast<int64_t>(size.size()) - 2;
    if (theta.rank() != 3 || theta.shape()[0] != size[0] || theta.shape()[1] != k || theta.shape()[2] != k + 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (theta) shape ",
                        shape_to_string(theta.shape()), " does not match input 1 (size) ", shape_to_string(size));
    }
    return size;
  }

  std::string description_;
  bool align_corners_;
};

// ---- Col2Im ----

struct Col2ImGeometry {
  int64_t batch = 0;
  int64_t channels = 0;
  std::vector<int64_t> image;
  std::vector<int64_t> block;
  std::vector<int64_t> blocks;  // block positions per spatial axis
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
};

class Col2ImKernel final : public Kernel {
 public:
  Col2ImKernel(std::string description, std::vector<int64_t> dilations, std::vector<int64_t> pads,
               std::vector<int64_t> strides)
      : description_(std::move(description)), dilations_(std::move(dilations)), pads_(std::move(pads)),
        strides_(std::move(strides)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Col2ImGeometry g, geometry(inputs));
    Shape out{g.batch, g.channels};
    out.insert(out.end(), g.image.begin(), g.image.end());
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Col2ImGeometry g, geometry(inputs));
    if (outputs[0].numel() == 0) return Status::ok();
    const size_t k = g.image.size();
    const int64_t block_size = product(g.block);
    const int64_t positions = product(g.blocks);
    const int64_t image_size = product(g.image);
    visit_dtype<NumericTypes>(inputs[0]->dtype(), [&]<class T>() {
      using Acc = std::conditional_t<std::is_integral_v<T>, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>,
                                     std::conditional_t<std::is_same_v<T, double>, double, float>>;
      const T* x = inputs[0]->data<T>();
      T* y = outputs[0].data<T>();
      pool.parallel_for(g.batch * g.channels, 1, [&](int64_t begin, int64_t end) {
        std::vector<Acc> image(static_cast<size_t>(image_size));
        std::vector<int64_t> kernel_at(k);
        std::vector<int64_t> block_at(k);
        for (int64_t plane = begin; plane < end; ++plane) {
          std::fill(image.begin(), image.end(), Acc(0));
          const T* columns = x + plane * block_size * positions;
          for (int64_t b = 0; b < block_size; ++b) {
            int64_t rest = b;
            for (size_t d = k; d-- > 0;) {
              kernel_at[d] = rest % g.block[d];
              rest /= g.block[d];
            }
            for (int64_t l = 0; l < positions; ++l) {
              rest = l;
              int64_t offset = 0;
              bool inside = true;
              for (size_t d = k; d-- > 0;) {
                block_at[d] = rest % g.blocks[d];
                rest /= g.blocks[d];
              }
              for (size_t d = 0; d < k && inside; ++d) {
                const int64_t at = block_at[d] * g.strides[d] - g.pads[d] + kernel_at[d] * g.dilations[d];
                inside = at >= 0 && at < g.image[d];
                offset = offset * g.image[d] + at;
              }
              if (inside) image[static_cast<size_t>(offset)] += static_cast<Acc>(columns[b * positions + l]);
            }
          }
          T* out = y + plane * image_size;
          for (int64_t i = 0; i < image_size; ++i) out[i] = static_cast<T>(image[static_cast<size_t>(i)]);
        }
      });
    });
    return Status::ok();
  }

 private:
  Expected<Col2ImGeometry> geometry(KernelInputs inputs) const {
    if (inputs.size() < 3 || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": inputs 0, 1 and 2 are required");
    }
    Col2ImGeometry g;
    TRY_ASSIGN(g.image, read_ints(inputs[1], description_, "input 1 (image_shape)"));
    TRY_ASSIGN(g.block, read_ints(inputs[2], description_, "input 2 (block_shape)"));
    const size_t k = g.image.size();
    if (k == 0 || g.block.size() != k) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 2 (block_shape) has ", g.block.size(),
                        " values, input 1 (image_shape) has ", k);
    }
    g.dilations = dilations_.empty() ? std::vector<int64_t>(k, 1) : dilations_;
    g.strides = strides_.empty() ? std::vector<int64_t>(k, 1) : strides_;
    g.pads = pads_.empty() ? std::vector<int64_t>(2 * k, 0) : pads_;
    if (g.dilations.size() != k || g.strides.size() != k || g.pads.size() != 2 * k) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": attributes dilations, strides and pads must have ", k, ", ", k, " and ", 2 * k, " values");
    }
    const Tensor& x = *inputs[0];
    if (x.rank() != 3) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (input) shape ",
                        shape_to_string(x.shape()), " must be 3-D");
    }
    for (size_t d = 0; d < k; ++d) {
      int64_t span = 0;
      int64_t padded = 0;
      if (g.block[d] <= 0 || g.image[d] < 0 || g.dilations[d] <= 0 || g.strides[d] <= 0 || g.pads[d] < 0 ||
          g.pads[d + k] < 0 || __builtin_mul_overflow(g.dilations[d], g.block[d] - 1, &span) ||
          __builtin_add_overflow(g.image[d], g.pads[d], &padded) ||
          __builtin_add_overflow(padded, g.pads[d + k], &padded)) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input 2 (block_shape) ",
                          shape_to_string(g.block), ", input 1 (image_shape) ", shape_to_string(g.image),
                          " or attribute dilations, strides or pads has an invalid value on axis ", d);
      }
      const int64_t count = padded <= span ? 0 : (padded - span - 1) / g.strides[d] + 1;
      g.blocks.push_back(count);
    }
    if (!checked_numel(g.block) || !checked_numel(g.blocks) || !checked_numel(g.image)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": the element counts of block_shape ",
                        shape_to_string(g.block), " or image_shape ", shape_to_string(g.image), " overflow");
    }
    const int64_t block_size = product(g.block);
    if (x.shape()[1] % block_size != 0 || x.shape()[2] != product(g.blocks)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (input) shape ",
                        shape_to_string(x.shape()), " does not match block_shape ", shape_to_string(g.block),
                        " with ", product(g.blocks), " block positions");
    }
    g.batch = x.shape()[0];
    g.channels = x.shape()[1] / block_size;
    return g;
  }

  std::string description_;
  std::vector<int64_t> dilations_;
  std::vector<int64_t> pads_;
  std::vector<int64_t> strides_;
};

// ---- CenterCropPad ----

class CenterCropPadKernel final : public Kernel {
 public:
  CenterCropPadKernel(std::string description, std::vector<int64_t> axes)
      : description_(std::move(description)), axes_(std::move(axes)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(Shape out, output_shape(inputs));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Shape out, output_shape(inputs));
    const Tensor& x = *inputs[0];
    Tensor& y = outputs[0];
    if (y.numel() == 0) return Status::ok();
    const bool strings = x.dtype() == DataType::kString;
    if (strings) {
      std::fill_n(y.data<std::string>(), y.numel(), std::string());  // the padding: empty strings
    } else {
      std::memset(y.raw_data(), 0, y.storage_bytes());
    }
    const Shape& in = x.shape();
    const size_t rank = in.size();
    if (rank == 0) {
      if (strings) {
        y.data<std::string>()[0] = x.data<std::string>()[0];
      } else {
        std::memcpy(y.raw_data(), x.raw_data(), x.storage_bytes());
      }
      return Status::ok();
    }
    Shape overlap(rank);
    Shape in_start(rank);
    Shape out_start(rank);
    for (size_t d = 0; d < rank; ++d) {
      overlap[d] = std::min(in[d], out[d]);
      in_start[d] = in[d] > out[d] ? (in[d] - out[d]) / 2 : 0;
      out_start[d] = out[d] > in[d] ? (out[d] - in[d]) / 2 : 0;
      if (overlap[d] == 0) return Status::ok();
    }
    const size_t element = data_type_storage_bytes(x.dtype(), 1);
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < rank; ++d) rows *= overlap[d];
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* dst = static_cast<char*>(y.raw_data());
    pool.parallel_for(rows, 256, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        int64_t rest = row;
        int64_t in_offset = in_start[rank - 1];
        int64_t out_offset = out_start[rank - 1];
        int64_t in_stride = in[rank - 1];
        int64_t out_stride = out[rank - 1];
        for (size_t d = rank - 1; d-- > 0;) {
          const int64_t i = rest % overlap[d];
          rest /= overlap[d];
          in_offset += (in_start[d] + i) * in_stride;
          out_offset += (out_start[d] + i) * out_stride;
          in_stride *= in[d];
          out_stride *= out[d];
        }
        if (strings) {
          std::copy_n(x.data<std::string>() + in_offset, overlap[rank - 1], y.data<std::string>() + out_offset);
        } else {
          std::memcpy(dst + static_cast<size_t>(out_offset) * element,
                      src + static_cast<size_t>(in_offset) * element, static_cast<size_t>(overlap[rank - 1]) * element);
        }
      }
    });
    return Status::ok();
  }

 private:
  Expected<Shape> output_shape(KernelInputs inputs) const {
    if (inputs.size() < 2 || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0 (input_data)");
    }
    const Tensor& x = *inputs[0];
    TRY_ASSIGN(const std::vector<int64_t> shape, read_ints(inputs[1], description_, "input 1 (shape)"));
    const auto rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> axes = axes_;
    if (axes.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    if (shape.size() != axes.size()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (shape) has ", shape.size(),
                        " values, expected ", axes.size());
    }
    Shape out = x.shape();
    std::vector<bool> seen(x.rank(), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t axis = axes[i];
      if (axis < -rank || axis >= rank || seen[static_cast<size_t>(axis < 0 ? axis + rank : axis)]) {
        return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis,
                          " is out of range or repeated for input 0 of rank ", rank);
      }
      seen[static_cast<size_t>(axis < 0 ? axis + rank : axis)] = true;
      if (shape[i] < 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (shape) value ", shape[i], " < 0");
      }
      out[static_cast<size_t>(axis < 0 ? axis + rank : axis)] = shape[i];
    }
    return out;
  }

  std::string description_;
  std::vector<int64_t> axes_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_affine_grid(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t align, info.node.attr_int("align_corners", 0));
  return std::unique_ptr<Kernel>(std::make_unique<AffineGridKernel>(info.node.describe(), align != 0));
}

Expected<std::unique_ptr<Kernel>> create_col2im(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(std::vector<int64_t> dilations, node.attr_ints("dilations", {}));
  TRY_ASSIGN(std::vector<int64_t> pads, node.attr_ints("pads", {}));
  TRY_ASSIGN(std::vector<int64_t> strides, node.attr_ints("strides", {}));
  // The spatial rank comes from image_shape at run time; empty attributes mean the defaults for that rank.
  for (int64_t v : dilations) {
    if (v <= 0) return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute dilations must be > 0");
  }
  for (int64_t v : strides) {
    if (v <= 0) return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute strides must be > 0");
  }
  for (int64_t v : pads) {
    if (v < 0) return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute pads must be >= 0");
  }
  return std::unique_ptr<Kernel>(std::make_unique<Col2ImKernel>(node.describe(), std::move(dilations), std::move(pads),
                                                                std::move(strides)));
}

Expected<std::unique_ptr<Kernel>> create_center_crop_pad(const KernelInfo& info) {
  TRY_ASSIGN(std::vector<int64_t> axes, info.node.attr_ints("axes", {}));
  return std::unique_ptr<Kernel>(std::make_unique<CenterCropPadKernel>(info.node.describe(), std::move(axes)));
}

}  // namespace nxrt::cpu
