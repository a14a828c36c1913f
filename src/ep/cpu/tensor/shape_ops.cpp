// Shape kernels: Flatten, Squeeze, Unsqueeze (views of their input), Shape, Size, ConstantOfShape, CastLike.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ep/cpu/elementwise/cast_convert.h"
#include "ep/cpu/tensor/data_movement.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

Status missing_input(const std::string& description, int input) {
  return make_error(StatusCode::kInvalidArgument, description, ": missing input ", input);
}

class FlattenKernel final : public Kernel {
 public:
  FlattenKernel(std::string description, int64_t axis, bool allow_negative)
      : description_(std::move(description)), axis_(axis), allow_negative_(allow_negative) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) return missing_input(description_, 0);
    const Tensor& x = *inputs[0];
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (axis_ > rank || axis_ < (allow_negative_ ? -rank : 0)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis_, " is out of range for input 0 shape ",
                        shape_to_string(x.shape()));
    }
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[static_cast<size_t>(d)];
    int64_t inner = 1;
    for (int64_t d = axis; d < rank; ++d) inner *= x.shape()[static_cast<size_t>(d)];
    outputs.assign(1, OutputDesc{x.dtype(), Shape{outer, inner}});
    return Status::ok();
  }
  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    outputs[0] = inputs[0]->reshaped(outputs[0].shape());
    return Status::ok();
  }
  int alias_input() const override { return 0; }

 private:
  std::string description_;
  int64_t axis_;
  bool allow_negative_;
};

// Squeeze and Unsqueeze: axes from the attribute (before opset 13) or from input 1.
class SqueezeKernel final : public Kernel {
 public:
  SqueezeKernel(std::string description, bool unsqueeze, std::optional<std::vector<int64_t>> axes)
      : description_(std::move(description)), unsqueeze_(unsqueeze), axes_(std::move(axes)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) return missing_input(description_, 0);
    const Tensor& x = *inputs[0];
    std::optional<std::vector<int64_t>> axes = axes_;
    if (!axes && inputs.size() > 1 && inputs[1] != nullptr) {
      TRY_ASSIGN(axes, read_int_values(*inputs[1], description_, 1, "axes"));
    }
    const int64_t rank = static_cast<int64_t>(x.rank());
    Shape out;
    if (unsqueeze_) {
      if (!axes) return make_error(StatusCode::kInvalidArgument, description_, ": axes are required");
      const int64_t out_rank = rank + static_cast<int64_t>(axes->size());
      std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
      for (const int64_t axis : *axes) {
        TRY_ASSIGN(const int64_t a, normalize_axis(axis, out_rank, description_, "axes value"));
        if (inserted[static_cast<size_t>(a)]) {
          return make_error(StatusCode::kInvalidArgument, description_, ": axes ", shape_to_string(*axes),
                            " repeat axis ", axis);
        }
        inserted[static_cast<size_t>(a)] = true;
      }
      size_t next = 0;
      for (int64_t d = 0; d < out_rank; ++d) out.push_back(inserted[static_cast<size_t>(d)] ? 1 : x.shape()[next++]);
    } else {
      std::vector<bool> removed(static_cast<size_t>(rank), false);
      if (axes && !axes->empty()) {
        for (const int64_t axis : *axes) {
          TRY_ASSIGN(const int64_t a, normalize_axis(axis, rank, description_, "axes value"));
          if (x.shape()[static_cast<size_t>(a)] != 1) {
            return make_error(StatusCode::kInvalidArgument, description_, ": cannot squeeze axis ", axis,
                              " of input 0 shape ", shape_to_string(x.shape()), ": dimension is not 1");
          }
          removed[static_cast<size_t>(a)] = true;
        }
      } else {
        for (int64_t d = 0; d < rank; ++d) removed[static_cast<size_t>(d)] = x.shape()[static_cast<size_t>(d)] == 1;
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (!removed[static_cast<size_t>(d)]) out.push_back(x.shape()[static_cast<size_t>(d)]);
      }
    }
    outputs.assign(1, OutputDesc{x.dtype(), std::move(out)});
    return Status::ok();
  }
  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    outputs[0] = inputs[0]->reshaped(outputs[0].shape());
    return Status::ok();
  }
  int alias_input() const override { return 0; }

 private:
  std::string description_;
  bool unsqueeze_;
  std::optional<std::vector<int64_t>> axes_;
};

// Shape (start/end clamp into [0, rank]) and Size.
class ShapeKernel final : public Kernel {
 public:
  ShapeKernel(std::string description, bool size, int64_t start, std::optional<int64_t> end)
      : description_(std::move(description)), size_(size), start_(start), end_(end) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) return missing_input(description_, 0);
    if (size_) {
      outputs.assign(1, OutputDesc{DataType::kInt64, Shape{}});
    } else {
      const auto [begin, end] = range(inputs[0]->rank());
      outputs.assign(1, OutputDesc{DataType::kInt64, Shape{end - begin}});
    }
    return Status::ok();
  }
  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    int64_t* out = outputs[0].data<int64_t>();
    if (size_) {
      out[0] = x.numel();
      return Status::ok();
    }
    const auto [begin, end] = range(x.rank());
    for (int64_t d = begin; d < end; ++d) out[d - begin] = x.shape()[static_cast<size_t>(d)];
    return Status::ok();
  }

 private:
  std::pair<int64_t, int64_t> range(size_t rank_in) const {
    const int64_t rank = static_cast<int64_t>(rank_in);
    const auto clamp = [rank](int64_t axis) { return std::clamp(axis < 0 ? axis + rank : axis, int64_t{0}, rank); };
    const int64_t begin = clamp(start_);
    const int64_t end = end_ ? clamp(*end_) : rank;
    return {begin, std::max(begin, end)};
  }

  std::string description_;
  bool size_;
  int64_t start_;
  std::optional<int64_t> end_;
};

class ConstantOfShapeKernel final : public Kernel {
 public:
  ConstantOfShapeKernel(std::string description, Tensor value)
      : description_(std::move(description)), value_(std::move(value)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) return missing_input(description_, 0);
    const Tensor& shape_tensor = *inputs[0];
    if (shape_tensor.dtype() != DataType::kInt64 || shape_tensor.rank() != 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (shape) must be a 1-D int64 tensor, got ",
                        data_type_name(shape_tensor.dtype()), " shape ", shape_to_string(shape_tensor.shape()));
    }
    const int64_t* dims = shape_tensor.data<int64_t>();
    Shape out(dims, dims + shape_tensor.numel());
    if (!checked_numel(out)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (shape) ", shape_to_string(out),
                        " has a negative dimension or too many elements");
    }
    outputs.assign(1, OutputDesc{value_.dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    Tensor& y = outputs[0];
    const int64_t n = y.numel();
    if (n == 0) return Status::ok();
    const DataType type = value_.dtype();
    if (is_sub_byte_type(type)) {
      const int bits = data_type_bits(type);
      const uint8_t element = static_cast<uint8_t>(*value_.data<uint8_t>() & ((1u << bits) - 1u));
      uint8_t pattern = 0;
      for (int shift = 0; shift < 8; shift += bits) pattern = static_cast<uint8_t>(pattern | (element << shift));
      std::memset(y.raw_data(), pattern, y.storage_bytes());
      return Status::ok();
    }
    visit_element_size(type, [&]<class T>() {
      const T value = *value_.data<T>();
      T* out = y.data<T>();
      pool.parallel_for(n, kMoveGrain, [&](int64_t begin, int64_t end) { std::fill(out + begin, out + end, value); });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  Tensor value_;
};

class CastLikeKernel final : public Kernel {
 public:
  CastLikeKernel(std::string description, bool saturate, E8M0Rounding rounding)
      : description_(std::move(description)), saturate_(saturate), rounding_(rounding) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    for (int i = 0; i < 2; ++i) {
      if (inputs.size() <= static_cast<size_t>(i) || inputs[static_cast<size_t>(i)] == nullptr) {
        return missing_input(description_, i);
      }
      if (!castable(inputs[static_cast<size_t>(i)]->dtype())) {
        return unsupported_type(description_, i, inputs[static_cast<size_t>(i)]->dtype());
      }
    }
    outputs.assign(1, OutputDesc{inputs[1]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }
  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    return cast_tensor(*inputs[0], outputs[0], saturate_, rounding_, description_, pool);
  }

 private:
  std::string description_;
  bool saturate_;
  E8M0Rounding rounding_;
};

Expected<std::unique_ptr<Kernel>> create_flatten(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", 1));
  return std::unique_ptr<Kernel>(std::make_unique<FlattenKernel>(info.node.describe(), axis, info.opset() >= 11));
}

Expected<std::unique_ptr<Kernel>> create_squeeze_like(const KernelInfo& info, bool unsqueeze) {
  std::optional<std::vector<int64_t>> axes;
  if (info.opset() < 13 && info.node.find_attribute("axes") != nullptr) {
    TRY_ASSIGN(axes, info.node.attr_ints("axes", {}));
  }
  if (unsqueeze && info.opset() < 13 && !axes) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": required attribute 'axes' is missing");
  }
  return std::unique_ptr<Kernel>(std::make_unique<SqueezeKernel>(info.node.describe(), unsqueeze, std::move(axes)));
}

Expected<std::unique_ptr<Kernel>> create_squeeze(const KernelInfo& info) { return create_squeeze_like(info, false); }
Expected<std::unique_ptr<Kernel>> create_unsqueeze(const KernelInfo& info) { return create_squeeze_like(info, true); }

Expected<std::unique_ptr<Kernel>> create_shape(const KernelInfo& info) {
  int64_t start = 0;
  std::optional<int64_t> end;
  if (info.opset() >= 15) {
    TRY_ASSIGN(start, info.node.attr_int("start", 0));
    if (info.node.find_attribute("end") != nullptr) {
      TRY_ASSIGN(end, info.node.attr_int("end", 0));
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<ShapeKernel>(info.node.describe(), false, start, end));
}

Expected<std::unique_ptr<Kernel>> create_size(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<ShapeKernel>(info.node.describe(), true, 0, std::nullopt));
}

Expected<std::unique_ptr<Kernel>> create_constant_of_shape(const KernelInfo& info) {
  Tensor value;
  if (const graph::Attribute* attribute = info.node.find_attribute("value")) {
    if (attribute->type != graph::Attribute::Type::kTensor || !attribute->t.is_valid() || attribute->t.numel() != 1) {
      return make_error(StatusCode::kInvalidGraph, info.node.describe(),
                        ": attribute 'value' must be a one-element tensor");
    }
    if (!movable_type(attribute->t.dtype()) && !is_sub_byte_type(attribute->t.dtype())) {
      return make_error(StatusCode::kNotImplemented, info.node.describe(), ": value type ",
                        data_type_name(attribute->t.dtype()), " is not supported");
    }
    value = attribute->t;
  } else {
    TRY_ASSIGN(value, Tensor::allocate(DataType::kFloat32, Shape{1}));
    *value.data<float>() = 0.0f;
  }
  return std::unique_ptr<Kernel>(std::make_unique<ConstantOfShapeKernel>(info.node.describe(), std::move(value)));
}

Expected<std::unique_ptr<Kernel>> create_cast_like(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t saturate, info.node.attr_int("saturate", 1));
  TRY_ASSIGN(const E8M0Rounding rounding, cast_rounding_of(info.node));
  return std::unique_ptr<Kernel>(
      std::make_unique<CastLikeKernel>(info.node.describe(), info.opset() < 19 || saturate != 0, rounding));
}

const KernelDef kShapeOpsKernels[] = {
    {"Flatten", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_flatten},
    {"Squeeze", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_squeeze},
    {"Unsqueeze", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_unsqueeze},
    {"Shape", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_shape},
    {"Size", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_size},
    {"ConstantOfShape", graph::kOnnxDomain, 9, kLatestOpset, type_mask(TypeList<int64_t>{}), 0,
     create_constant_of_shape},
    {"CastLike", graph::kOnnxDomain, 15, kLatestOpset, kAnyType, 0, create_cast_like},
};

}  // namespace

std::span<const KernelDef> shape_ops_kernels() { return kShapeOpsKernels; }

}  // namespace nxrt::cpu
