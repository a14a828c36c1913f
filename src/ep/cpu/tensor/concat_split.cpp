// Concat and Split: copies of contiguous row blocks around one axis, dispatched on element size.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ep/cpu/tensor/data_movement.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

// Views the tensors around `axis` as [outer, axis_dim * inner] row blocks.
int64_t outer_size(const Shape& shape, int64_t axis) {
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  return outer;
}

int64_t inner_size(const Shape& shape, int64_t axis) {
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  return inner;
}

class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(std::string description, int64_t axis) : description_(std::move(description)), axis_(axis) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty()) return make_error(StatusCode::kInvalidArgument, description_, ": no inputs");
    TRY(require_inputs(inputs, inputs.size(), description_));
    const Tensor& first = *inputs[0];
    if (!movable_type(first.dtype())) return unsupported_type(description_, 0, first.dtype());
    const int64_t rank = static_cast<int64_t>(first.rank());
    if (rank == 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": cannot concatenate scalars (input 0)");
    }
    TRY_ASSIGN(const int64_t axis, normalize_axis(axis_, rank, description_, "axis"));
    Shape out = first.shape();
    for (size_t i = 1; i < inputs.size(); ++i) {
      const Tensor& x = *inputs[i];
      if (x.dtype() != first.dtype()) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " type ",
                          data_type_name(x.dtype()), " differs from input 0 type ", data_type_name(first.dtype()));
      }
      bool same = static_cast<int64_t>(x.rank()) == rank;
      for (int64_t d = 0; same && d < rank; ++d) {
        same = d == axis || x.shape()[static_cast<size_t>(d)] == first.shape()[static_cast<size_t>(d)];
      }
      if (!same) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " shape ",
                          shape_to_string(x.shape()), " does not match input 0 shape ", shape_to_string(first.shape()),
                          " outside axis ", axis);
      }
      if (__builtin_add_overflow(out[static_cast<size_t>(axis)], x.shape()[static_cast<size_t>(axis)],
                                 &out[static_cast<size_t>(axis)])) {
        return make_error(StatusCode::kInvalidArgument, description_, ": concatenated dimension overflows");
      }
    }
    outputs.assign(1, OutputDesc{first.dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    Tensor& y = outputs[0];
    if (y.numel() == 0) return Status::ok();
    const int64_t axis = axis_ < 0 ? axis_ + static_cast<int64_t>(y.rank()) : axis_;
    const int64_t inner = inner_size(y.shape(), axis);
    const int64_t out_row = y.shape()[static_cast<size_t>(axis)] * inner;
    // Output row o is input 0's row o, then input 1's, ...; the flat output is split into chunks of kMoveGrain
    // elements, so a concat of few long rows (channels of one image) also spreads over the threads. No allocation:
    // a chunk finds its input segment by walking the (few) inputs.
    const auto row_of = [&](size_t i) { return inputs[i]->shape()[static_cast<size_t>(axis)] * inner; };
    visit_element_size(y.dtype(), [&]<class T>() {
      T* out = y.data<T>();
      pool.parallel_for(y.numel(), kMoveGrain, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end;) {
          const int64_t o = p / out_row, r = p % out_row;
          size_t i = 0;
          int64_t start = 0;
          while (r >= start + row_of(i)) {  // r < out_row: stops at the input holding r, past empty ones
            start += row_of(i);
            ++i;
          }
          const int64_t row = row_of(i), within = r - start;
          const int64_t count = std::min(row - within, end - p);
          copy_elements(inputs[i]->data<T>() + o * row + within, out + p, count);
          p += count;
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  int64_t axis_;
};

class SplitKernel final : public Kernel {
 public:
  SplitKernel(std::string description, int64_t axis, size_t num_outputs, std::optional<std::vector<int64_t>> split,
              bool uneven_last)
      : description_(std::move(description)),
        axis_(axis),
        num_outputs_(num_outputs),
        split_(std::move(split)),
        uneven_last_(uneven_last) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    }
    const Tensor& x = *inputs[0];
    if (!movable_type(x.dtype())) return unsupported_type(description_, 0, x.dtype());
    TRY_ASSIGN(const int64_t axis, normalize_axis(axis_, static_cast<int64_t>(x.rank()), description_, "axis"));
    const int64_t dim = x.shape()[static_cast<size_t>(axis)];
    std::optional<std::vector<int64_t>> split = split_;
    if (!split && inputs.size() > 1 && inputs[1] != nullptr) {
      TRY_ASSIGN(split, read_int_values(*inputs[1], description_, 1, "split"));
    }
    const int64_t n = static_cast<int64_t>(num_outputs_);
    std::vector<int64_t> sizes;
    if (split) {
      if (split->size() != num_outputs_) {
        return make_error(StatusCode::kInvalidArgument, description_, ": split ", shape_to_string(*split), " has ",
                          split->size(), " entries for ", num_outputs_, " outputs");
      }
      int64_t total = 0;
      for (const int64_t s : *split) {
        if (s < 0 || __builtin_add_overflow(total, s, &total)) {
          return make_error(StatusCode::kInvalidArgument, description_, ": invalid split ", shape_to_string(*split));
        }
      }
      if (total != dim) {
        return make_error(StatusCode::kInvalidArgument, description_, ": split ", shape_to_string(*split),
                          " sums to ", total, " but input 0 shape ", shape_to_string(x.shape()), " has ", dim,
                          " on axis ", axis);
      }
      sizes = *split;
    } else if (uneven_last_) {
      const int64_t chunk = dim / n + (dim % n != 0 ? 1 : 0);
      const int64_t last = dim - chunk * (n - 1);
      if (last < 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": cannot split dimension ", dim, " of axis ",
                          axis, " into ", n, " outputs");
      }
      sizes.assign(num_outputs_, chunk);
      sizes.back() = last;
    } else {
      if (dim % n != 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(x.shape()),
                          " cannot be split evenly into ", n, " outputs on axis ", axis);
      }
      sizes.assign(num_outputs_, dim / n);
    }
    outputs.clear();
    for (const int64_t s : sizes) {
      Shape shape = x.shape();
      shape[static_cast<size_t>(axis)] = s;
      outputs.push_back(OutputDesc{x.dtype(), std::move(shape)});
    }
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) return Status::ok();
    const int64_t axis = axis_ < 0 ? axis_ + static_cast<int64_t>(x.rank()) : axis_;
    const int64_t outer = outer_size(x.shape(), axis);
    const int64_t inner = inner_size(x.shape(), axis);
    const int64_t in_row = x.shape()[static_cast<size_t>(axis)] * inner;
    visit_element_size(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      pool.parallel_for(outer, std::max<int64_t>(1, kMoveGrain / std::max<int64_t>(in_row, 1)),
                        [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          const T* src = in + o * in_row;
          for (Tensor& y : outputs) {
            const int64_t row = y.shape()[static_cast<size_t>(axis)] * inner;
            copy_elements(src, y.data<T>() + o * row, row);
            src += row;
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  int64_t axis_;
  size_t num_outputs_;
  std::optional<std::vector<int64_t>> split_;
  bool uneven_last_;
};

Expected<std::unique_ptr<Kernel>> create_concat(const KernelInfo& info) {
  if (info.opset() >= 4 && info.node.find_attribute("axis") == nullptr) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": required attribute 'axis' is missing");
  }
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", 1));
  return std::unique_ptr<Kernel>(std::make_unique<ConcatKernel>(info.node.describe(), axis));
}

Expected<std::unique_ptr<Kernel>> create_split(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const int64_t axis, node.attr_int("axis", 0));
  std::optional<std::vector<int64_t>> split;
  if (info.opset() < 13 && node.find_attribute("split") != nullptr) {
    TRY_ASSIGN(split, node.attr_ints("split", {}));
  }
  size_t outputs = node.outputs.size();
  bool uneven_last = false;
  if (info.opset() >= 18 && node.find_attribute("num_outputs") != nullptr) {
    TRY_ASSIGN(const int64_t num_outputs, node.attr_int("num_outputs", 0));
    if (num_outputs < 1 || static_cast<size_t>(num_outputs) != outputs) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": num_outputs ", num_outputs,
                        " does not match the node's ", outputs, " outputs");
    }
    uneven_last = true;
  }
  if (outputs == 0) return make_error(StatusCode::kInvalidGraph, node.describe(), ": has no outputs");
  return std::unique_ptr<Kernel>(
      std::make_unique<SplitKernel>(node.describe(), axis, outputs, std::move(split), uneven_last));
}

const KernelDef kConcatSplitKernels[] = {
    {"Concat", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_concat},
    {"Split", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_split},
};

}  // namespace

std::span<const KernelDef> concat_split_kernels() { return kConcatSplitKernels; }

}  // namespace nxrt::cpu
