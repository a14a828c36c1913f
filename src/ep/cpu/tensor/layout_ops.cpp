// Layout kernels: DepthToSpace, SpaceToDepth (DCR / CRD), ReverseSequence, Trilu, EyeLike.
// All but EyeLike move elements without reading them and dispatch on element size.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/tensor/data_movement.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

Status require_input(const std::string& description, KernelInputs inputs, size_t index) {
  if (inputs.size() <= index || inputs[index] == nullptr) {
    return make_error(StatusCode::kInvalidArgument, description, ": missing input ", index);
  }
  return Status::ok();
}

// DepthToSpace (to_space) and SpaceToDepth share one index mapping between the depth layout
// [b, C*bs*bs, h, w] and the space layout [b, C, h*bs, w*bs]. Depth channel of (c, i, j):
// DCR: (i*bs + j)*C + c; CRD: c*bs*bs + i*bs + j.
class BlockKernel final : public Kernel {
 public:
  BlockKernel(std::string description, bool to_space, bool crd, int64_t blocksize)
      : description_(std::move(description)), to_space_(to_space), crd_(crd), bs_(blocksize) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_input(description_, inputs, 0));
    const Tensor& x = *inputs[0];
    if (!movable_type(x.dtype())) return unsupported_type(description_, 0, x.dtype());
    if (x.rank() != 4) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(x.shape()),
                        " must have rank 4");
    }
    const Shape& s = x.shape();
    const int64_t area = bs_ * bs_;
    Shape out;
    if (to_space_) {
      if (s[1] % area != 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(s),
                          " has channels not divisible by blocksize^2 = ", area);
      }
      out = {s[0], s[1] / area, 0, 0};
      if (__builtin_mul_overflow(s[2], bs_, &out[2]) || __builtin_mul_overflow(s[3], bs_, &out[3])) {
        return make_error(StatusCode::kInvalidArgument, description_, ": output shape is too large");
      }
    } else {
      if (s[2] % bs_ != 0 || s[3] % bs_ != 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(s),
                          " has height or width not divisible by blocksize ", bs_);
      }
      out = {s[0], 0, s[2] / bs_, s[3] / bs_};
      if (__builtin_mul_overflow(s[1], area, &out[1])) {
        return make_error(StatusCode::kInvalidArgument, description_, ": output shape is too large");
      }
    }
    if (!checked_numel(out)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": output shape is too large");
    }
    outputs.assign(1, OutputDesc{x.dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    Tensor& y = outputs[0];
    if (y.numel() == 0) return Status::ok();
    const Shape& space = to_space_ ? y.shape() : x.shape();
    const int64_t batch = space[0], channels = space[1], height = space[2] / bs_, width = space[3] / bs_;
    const int64_t bs = bs_;
    visit_element_size(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      // One task per (b, c, h, i): a row of the space layout.
      const int64_t rows = batch * channels * height * bs;
      pool.parallel_for(rows, std::max<int64_t>(1, kMoveGrain / std::max<int64_t>(width * bs, 1)),
                        [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const int64_t i = row % bs;
          const int64_t h = (row / bs) % height;
          const int64_t c = (row / (bs * height)) % channels;
          const int64_t b = row / (bs * height * channels);
          const int64_t space_row = ((b * channels + c) * height * bs + h * bs + i) * width * bs;
          for (int64_t j = 0; j < bs; ++j) {
            const int64_t depth_channel = crd_ ? c * bs * bs + i * bs + j : (i * bs + j) * channels + c;
            const int64_t depth_row = ((b * channels * bs * bs + depth_channel) * height + h) * width;
            for (int64_t w = 0; w < width; ++w) {
              if (to_space_) out[space_row + w * bs + j] = in[depth_row + w];
              else out[depth_row + w] = in[space_row + w * bs + j];
            }
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  bool to_space_;
  bool crd_;
  int64_t bs_;
};

class ReverseSequenceKernel final : public Kernel {
 public:
  ReverseSequenceKernel(std::string description, int64_t batch_axis, int64_t time_axis)
      : description_(std::move(description)), batch_axis_(batch_axis), time_axis_(time_axis) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_input(description_, inputs, 0));
    TRY(require_input(description_, inputs, 1));
    const Tensor& x = *inputs[0];
    if (!movable_type(x.dtype())) return unsupported_type(description_, 0, x.dtype());
    if (x.rank() < 2) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(x.shape()),
                        " must have rank >= 2");
    }
    TRY_ASSIGN(const std::vector<int64_t> lens, read_int_values(*inputs[1], description_, 1, "sequence_lens"));
    const int64_t batch = x.shape()[static_cast<size_t>(batch_axis_)];
    const int64_t time = x.shape()[static_cast<size_t>(time_axis_)];
    if (inputs[1]->rank() != 1 || static_cast<int64_t>(lens.size()) != batch) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (sequence_lens) shape ",
                        shape_to_string(inputs[1]->shape()), " must be [", batch, "]");
    }
    for (const int64_t len : lens) {
      if (len < 0 || len > time) {
        return make_error(StatusCode::kInvalidArgument, description_, ": sequence length ", len,
                          " is outside [0, ", time, "]");
      }
    }
    outputs.assign(1, OutputDesc{x.dtype(), x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) return Status::ok();
    const std::vector<int64_t> strides = row_major_strides(x.shape());
    const int64_t batch = x.shape()[static_cast<size_t>(batch_axis_)];
    const int64_t time = x.shape()[static_cast<size_t>(time_axis_)];
    const int64_t batch_stride = strides[static_cast<size_t>(batch_axis_)];
    const int64_t time_stride = strides[static_cast<size_t>(time_axis_)];
    const int64_t inner = strides[1];
    const Tensor& lens_tensor = *inputs[1];
    visit_element_size(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      T* out = outputs[0].data<T>();
      pool.parallel_for(batch * time, std::max<int64_t>(1, kMoveGrain / inner), [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
          const int64_t b = task / time;
          const int64_t t = task % time;
          const int64_t len = lens_tensor.dtype() == DataType::kInt64 ? lens_tensor.data<int64_t>()[b]
                                                                      : lens_tensor.data<int32_t>()[b];
          const int64_t source_t = t < len ? len - 1 - t : t;
          copy_elements(in + b * batch_stride + source_t * time_stride, out + b * batch_stride + t * time_stride,
                        inner);
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  int64_t batch_axis_;
  int64_t time_axis_;
};

class TriluKernel final : public Kernel {
 public:
  TriluKernel(std::string description, bool upper) : description_(std::move(description)), upper_(upper) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_input(description_, inputs, 0));
    const Tensor& x = *inputs[0];
    if (!movable_type(x.dtype())) return unsupported_type(description_, 0, x.dtype());
    if (x.rank() < 2) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(x.shape()),
                        " must have rank >= 2");
    }
    if (inputs.size() > 1 && inputs[1] != nullptr) {
      TRY_ASSIGN(const std::vector<int64_t> k, read_int_values(*inputs[1], description_, 1, "k"));
      if (k.size() != 1) return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (k) must be a scalar");
    }
    outputs.assign(1, OutputDesc{x.dtype(), x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) return Status::ok();
    int64_t k = 0;
    if (inputs.size() > 1 && inputs[1] != nullptr) {
      k = inputs[1]->dtype() == DataType::kInt64 ? *inputs[1]->data<int64_t>() : *inputs[1]->data<int32_t>();
    }
    const int64_t rows = x.shape()[x.rank() - 2];
    const int64_t cols = x.shape()[x.rank() - 1];
    // Clamp so that j - i comparisons never overflow: any |k| beyond the matrix behaves the same.
    k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
    visit_element_size(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      T* out = outputs[0].data<T>();
      pool.parallel_for(x.numel() / cols, std::max<int64_t>(1, kMoveGrain / cols), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const int64_t i = row % rows;
          // Kept columns: upper j >= i + k; lower j <= i + k.
          const int64_t split = std::clamp<int64_t>(upper_ ? i + k : i + k + 1, 0, cols);
          const T* src = in + row * cols;
          T* dst = out + row * cols;
          if (upper_) {
            std::fill(dst, dst + split, T{});
            copy_elements(src + split, dst + split, cols - split);
          } else {
            copy_elements(src, dst, split);
            std::fill(dst + split, dst + cols, T{});
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  bool upper_;
};

using EyeLikeTypes = AllPodTypes;

class EyeLikeKernel final : public Kernel {
 public:
  EyeLikeKernel(std::string description, DataType dtype, int64_t k)
      : description_(std::move(description)), dtype_(dtype), k_(k) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_input(description_, inputs, 0));
    const Tensor& x = *inputs[0];
    if (x.rank() != 2) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(x.shape()),
                        " must have rank 2");
    }
    const DataType type = dtype_ == DataType::kUndefined ? x.dtype() : dtype_;
    if (!type_list_contains(EyeLikeTypes{}, type)) return unsupported_type(description_, 0, type);
    outputs.assign(1, OutputDesc{type, x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs, std::span<Tensor> outputs, ThreadPool&) const override {
    Tensor& y = outputs[0];
    const int64_t rows = y.shape()[0];
    const int64_t cols = y.shape()[1];
    visit_dtype<EyeLikeTypes>(y.dtype(), [&]<class T>() {
      T* out = y.data<T>();
      std::fill(out, out + y.numel(), T{});
      T one;
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) one = T(1.0f);
      else one = static_cast<T>(1);
      for (int64_t i = 0; i < rows; ++i) {
        if (k_ >= cols || k_ <= -rows) break;
        const int64_t j = i + k_;
        if (j >= 0 && j < cols) out[i * cols + j] = one;
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
  DataType dtype_;
  int64_t k_;
};

Expected<std::unique_ptr<Kernel>> create_block(const KernelInfo& info, bool to_space) {
  const graph::Node& node = info.node;
  if (node.find_attribute("blocksize") == nullptr) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": required attribute 'blocksize' is missing");
  }
  TRY_ASSIGN(const int64_t blocksize, node.attr_int("blocksize", 0));
  if (blocksize <= 0 || blocksize > (int64_t{1} << 20)) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": blocksize ", blocksize, " is invalid");
  }
  TRY_ASSIGN(const std::string mode, node.attr_string("mode", "DCR"));
  const bool mode_allowed = to_space ? info.opset() >= 11 : info.opset() >= 28;
  if ((mode != "DCR" && mode != "CRD") || (mode == "CRD" && !mode_allowed)) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": unsupported mode '", mode, "'");
  }
  return std::unique_ptr<Kernel>(std::make_unique<BlockKernel>(node.describe(), to_space, mode == "CRD", blocksize));
}

Expected<std::unique_ptr<Kernel>> create_depth_to_space(const KernelInfo& info) { return create_block(info, true); }
Expected<std::unique_ptr<Kernel>> create_space_to_depth(const KernelInfo& info) { return create_block(info, false); }

Expected<std::unique_ptr<Kernel>> create_reverse_sequence(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t batch_axis, info.node.attr_int("batch_axis", 1));
  TRY_ASSIGN(const int64_t time_axis, info.node.attr_int("time_axis", 0));
  if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) || batch_axis == time_axis) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": batch_axis ", batch_axis, " and time_axis ",
                      time_axis, " must be 0 and 1 in some order");
  }
  return std::unique_ptr<Kernel>(std::make_unique<ReverseSequenceKernel>(info.node.describe(), batch_axis, time_axis));
}

Expected<std::unique_ptr<Kernel>> create_trilu(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t upper, info.node.attr_int("upper", 1));
  return std::unique_ptr<Kernel>(std::make_unique<TriluKernel>(info.node.describe(), upper != 0));
}

Expected<std::unique_ptr<Kernel>> create_eye_like(const KernelInfo& info) {
  DataType dtype = DataType::kUndefined;
  if (info.node.find_attribute("dtype") != nullptr) {
    TRY_ASSIGN(const int64_t value, info.node.attr_int("dtype", 0));
    const auto type = data_type_from_int(value);
    if (!type || !type_list_contains(EyeLikeTypes{}, *type)) {
      return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": dtype ", value, " is not supported");
    }
    dtype = *type;
  }
  TRY_ASSIGN(const int64_t k, info.node.attr_int("k", 0));
  return std::unique_ptr<Kernel>(std::make_unique<EyeLikeKernel>(info.node.describe(), dtype, k));
}

const KernelDef kLayoutKernels[] = {
    {"DepthToSpace", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_depth_to_space},
    {"SpaceToDepth", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_space_to_depth},
    {"ReverseSequence", graph::kOnnxDomain, 10, kLatestOpset, kAnyType, 0, create_reverse_sequence},
    {"Trilu", graph::kOnnxDomain, 14, kLatestOpset, kAnyType, 0, create_trilu},
    {"Trilu", graph::kMsDomain, 1, kLatestOpset, kAnyType, 0, create_trilu},  // ONNX Trilu's semantics
    {"EyeLike", graph::kOnnxDomain, 9, kLatestOpset, kAnyType, 0, create_eye_like},
};

}  // namespace

std::span<const KernelDef> layout_kernels() { return kLayoutKernels; }

}  // namespace nxrt::cpu
