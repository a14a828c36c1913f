// Gather, GatherElements and GatherND: row copies addressed by index tensors, dispatched on element size.
// reshape validates every index value (negative values count from the end), so run can trust them.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/tensor/data_movement.h"
#include "ep/cpu/tensor/index_util.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

Status require_inputs(KernelInputs inputs, const std::string& description) {
  if (inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
    return make_error(StatusCode::kInvalidArgument, description, ": expects inputs 0 (data) and 1 (indices)");
  }
  if (!movable_type(inputs[0]->dtype())) return unsupported_type(description, 0, inputs[0]->dtype());
  if (inputs[1]->dtype() != DataType::kInt32 && inputs[1]->dtype() != DataType::kInt64) {
    return bad_index_type(description, 1, inputs[1]->dtype());
  }
  return Status::ok();
}

// Calls fn.template operator()<T, I>() for the data element size and index type of the inputs.
template <class Fn>
void visit_data_and_index(const Tensor& data, const Tensor& indices, Fn&& fn) {
  visit_element_size(data.dtype(), [&]<class T>() {
    visit_index_type(indices.dtype(), [&]<class I>() { fn.template operator()<T, I>(); });
  });
}

class GatherKernel final : public Kernel {
 public:
  GatherKernel(std::string description, int64_t axis) : description_(std::move(description)), axis_(axis) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, description_));
    const Tensor& data = *inputs[0];
    const Tensor& indices = *inputs[1];
    const int64_t rank = static_cast<int64_t>(data.rank());
    if (rank == 0) return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (data) must have rank >= 1");
    TRY_ASSIGN(const int64_t axis, normalize_axis(axis_, rank, description_, "axis"));
    TRY(check_index_values(indices, data.shape()[static_cast<size_t>(axis)], description_, 1));
    Shape out(data.shape().begin(), data.shape().begin() + axis);
    out.insert(out.end(), indices.shape().begin(), indices.shape().end());
    out.insert(out.end(), data.shape().begin() + axis + 1, data.shape().end());
    outputs.assign(1, OutputDesc{data.dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& data = *inputs[0];
    const Tensor& indices = *inputs[1];
    if (outputs[0].numel() == 0) return Status::ok();
    const int64_t axis = axis_ < 0 ? axis_ + static_cast<int64_t>(data.rank()) : axis_;
    const std::span<const int64_t> dims = data.shape();
    const int64_t outer = product(dims.first(static_cast<size_t>(axis)));
    const int64_t axis_dim = dims[static_cast<size_t>(axis)];
    const int64_t inner = product(dims.subspan(static_cast<size_t>(axis) + 1));
    const int64_t count = indices.numel();
    visit_data_and_index(data, indices, [&]<class T, class I>() {
      const T* src = data.data<T>();
      const I* idx = indices.data<I>();
      T* dst = outputs[0].data<T>();
      pool.parallel_for(outer * count, std::max<int64_t>(1, kMoveGrain / inner), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const int64_t o = row / count;
          const int64_t k = wrap_index(idx[row % count], axis_dim);
          copy_elements(src + (o * axis_dim + k) * inner, dst + row * inner, inner);
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  int64_t axis_;
};

class GatherElementsKernel final : public Kernel {
 public:
  GatherElementsKernel(std::string description, int64_t axis) : description_(std::move(description)), axis_(axis) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, description_));
    const Tensor& data = *inputs[0];
    const Tensor& indices = *inputs[1];
    const int64_t rank = static_cast<int64_t>(data.rank());
    if (rank == 0) return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (data) must have rank >= 1");
    if (indices.rank() != data.rank()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (indices) shape ",
                        shape_to_string(indices.shape()), " must have the rank of input 0 (data) shape ",
                        shape_to_string(data.shape()));
    }
    TRY_ASSIGN(const int64_t axis, normalize_axis(axis_, rank, description_, "axis"));
    TRY(check_element_indices(data, indices, axis, description_));
    outputs.assign(1, OutputDesc{data.dtype(), indices.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& data = *inputs[0];
    const Tensor& indices = *inputs[1];
    if (indices.numel() == 0) return Status::ok();
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + static_cast<int64_t>(data.rank()) : axis_);
    const std::span<const int64_t> idims = indices.shape();
    const std::vector<int64_t> strides = row_major_strides(data.shape());
    const std::span<const int64_t> sspan(strides);
    const std::vector<int64_t> outer_offsets = box_offsets(idims.first(axis), sspan.first(axis));
    const std::vector<int64_t> inner_offsets = box_offsets(idims.subspan(axis + 1), sspan.subspan(axis + 1));
    const int64_t axis_len = idims[axis];
    const int64_t axis_dim = data.shape()[axis];
    const int64_t axis_stride = strides[axis];
    const int64_t inner = static_cast<int64_t>(inner_offsets.size());
    const int64_t rows = static_cast<int64_t>(outer_offsets.size()) * axis_len;
    visit_data_and_index(data, indices, [&]<class T, class I>() {
      const T* src = data.data<T>();
      const I* idx = indices.data<I>();
      T* dst = outputs[0].data<T>();
      pool.parallel_for(rows, std::max<int64_t>(1, kMoveGrain / inner), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const T* base = src + outer_offsets[static_cast<size_t>(row / axis_len)];
          const I* row_idx = idx + row * inner;
          T* out = dst + row * inner;
          for (int64_t i = 0; i < inner; ++i) {
            out[i] = base[wrap_index(row_idx[i], axis_dim) * axis_stride + inner_offsets[static_cast<size_t>(i)]];
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  int64_t axis_;
};

class GatherNDKernel final : public Kernel {
 public:
  GatherNDKernel(std::string description, int64_t batch_dims)
      : description_(std::move(description)), batch_dims_(batch_dims) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, description_));
    const Tensor& data = *inputs[0];
    const Tensor& indices = *inputs[1];
    const int64_t r = static_cast<int64_t>(data.rank());
    const int64_t q = static_cast<int64_t>(indices.rank());
    if (r < 1 || q < 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": inputs 0 (data) shape ",
                        shape_to_string(data.shape()), " and 1 (indices) shape ", shape_to_string(indices.shape()),
                        " must both have rank >= 1");
    }
    const int64_t b = batch_dims_;
    if (b < 0 || b >= std::min(q, r)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": batch_dims ", b,
                        " must be in [0, min(rank(data), rank(indices)) - 1] = [0, ", std::min(q, r) - 1, "]");
    }
    for (size_t d = 0; d < static_cast<size_t>(b); ++d) {
      if (data.shape()[d] != indices.shape()[d]) {
        return make_error(StatusCode::kInvalidArgument, description_, ": batch dimension ", d, " differs: data shape ",
                          shape_to_string(data.shape()), ", indices shape ", shape_to_string(indices.shape()));
      }
    }
    const int64_t last = indices.shape().back();
    if (last > r - b) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (indices) shape ",
                        shape_to_string(indices.shape()), " has last dimension ", last, " > rank(data) - batch_dims = ",
                        r - b);
    }
    if (last > 0) {
      const std::span<const int64_t> dims(data.shape());
      TRY(check_index_tuples(indices, dims.subspan(static_cast<size_t>(b), static_cast<size_t>(last)), description_, 1));
    }
    Shape out(indices.shape().begin(), indices.shape().end() - 1);
    out.insert(out.end(), data.shape().begin() + b + last, data.shape().end());
    outputs.assign(1, OutputDesc{data.dtype(), std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& data = *inputs[0];
    const Tensor& indices = *inputs[1];
    if (outputs[0].numel() == 0) return Status::ok();
    const size_t b = static_cast<size_t>(batch_dims_);
    const std::span<const int64_t> dims(data.shape());
    const int64_t last = indices.shape().back();
    const std::span<const int64_t> addressed = dims.subspan(b, static_cast<size_t>(last));
    const int64_t slice = product(dims.subspan(b + static_cast<size_t>(last)));
    const int64_t batch_size = product(dims.subspan(b));
    const int64_t batches = product(dims.first(b));
    const int64_t rows = product(std::span<const int64_t>(indices.shape()).first(indices.rank() - 1));
    const int64_t per_batch = rows / batches;  // rows > 0 includes the batch dims, so batches > 0
    visit_data_and_index(data, indices, [&]<class T, class I>() {
      const T* src = data.data<T>();
      const I* idx = indices.data<I>();
      T* dst = outputs[0].data<T>();
      pool.parallel_for(rows, std::max<int64_t>(1, kMoveGrain / std::max<int64_t>(slice, 1)),
                        [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const I* tuple = idx + row * last;
          int64_t offset = 0;
          for (int64_t k = 0; k < last; ++k) {
            const int64_t bound = addressed[static_cast<size_t>(k)];
            offset = offset * bound + wrap_index(tuple[k], bound);
          }
          copy_elements(src + (row / per_batch) * batch_size + offset * slice, dst + row * slice, slice);
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  int64_t batch_dims_;
};

Expected<std::unique_ptr<Kernel>> create_gather(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", 0));
  return std::unique_ptr<Kernel>(std::make_unique<GatherKernel>(info.node.describe(), axis));
}

Expected<std::unique_ptr<Kernel>> create_gather_elements(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", 0));
  return std::unique_ptr<Kernel>(std::make_unique<GatherElementsKernel>(info.node.describe(), axis));
}

Expected<std::unique_ptr<Kernel>> create_gather_nd(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t batch_dims, info.node.attr_int("batch_dims", 0));
  if (batch_dims < 0) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": attribute batch_dims ", batch_dims,
                      " must be >= 0");
  }
  return std::unique_ptr<Kernel>(std::make_unique<GatherNDKernel>(info.node.describe(), batch_dims));
}

using GatherTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                             uint32_t, uint64_t, bool, std::string, std::complex<float>, std::complex<double>>;
constexpr DataTypeMask kGatherMask = type_mask(GatherTypes{});

const KernelDef kGatherScatterKernels[] = {
    {"Gather", graph::kOnnxDomain, 1, kLatestOpset, kGatherMask, 0, create_gather},
    {"GatherElements", graph::kOnnxDomain, 11, kLatestOpset, kGatherMask, 0, create_gather_elements},
    {"GatherND", graph::kOnnxDomain, 11, kLatestOpset, kGatherMask, 0, create_gather_nd},
};

}  // namespace

std::span<const KernelDef> gather_scatter_kernels() { return kGatherScatterKernels; }

}  // namespace nxrt::cpu
