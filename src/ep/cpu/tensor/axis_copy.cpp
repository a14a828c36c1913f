#include "ep/cpu/tensor/axis_copy.h"

#include <vector>

#include "ep/cpu/tensor/data_movement.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu {

namespace {

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= shape[i];
  return n;
}

}  // namespace

Expected<Tensor> join_along_axis(std::span<const Tensor> parts, int64_t axis, bool new_axis, const std::string& what) {
  if (parts.empty()) return make_error(StatusCode::kInvalidArgument, what, ": nothing to join");
  const Tensor& first = parts[0];
  const int64_t rank = static_cast<int64_t>(first.rank());
  if (axis < 0 || axis > rank || (!new_axis && axis == rank)) {
    return make_error(StatusCode::kInvalidArgument, what, ": axis ", axis, " is out of range for rank ", rank);
  }
  Shape out_shape = first.shape();
  if (new_axis) {
    out_shape.insert(out_shape.begin() + axis, static_cast<int64_t>(parts.size()));
  } else {
    out_shape[axis] = 0;
  }
  for (size_t p = 0; p < parts.size(); ++p) {
    const Tensor& part = parts[p];
    bool compatible = part.dtype() == first.dtype() && part.rank() == first.rank();
    for (int64_t d = 0; compatible && d < rank; ++d) {
      compatible = part.shape()[d] == first.shape()[d] || (!new_axis && d == axis);
    }
    if (!compatible) {
      return make_error(StatusCode::kInvalidArgument, what, ": element ", p, " (", data_type_name(part.dtype()), " ",
                        shape_to_string(part.shape()), ") does not match element 0 (", data_type_name(first.dtype()),
                        " ", shape_to_string(first.shape()), ")");
    }
    if (!new_axis && __builtin_add_overflow(out_shape[axis], part.shape()[axis], &out_shape[axis])) {
      return make_error(StatusCode::kInvalidArgument, what, ": the joined axis ", axis, " overflows 64 bits");
    }
  }
  const RunLimits no_limits;
  const RunLimits* limits = current_run_limits();
  TRY((limits != nullptr ? *limits : no_limits).check_tensor_bytes(first.dtype(), out_shape, what));
  TRY_ASSIGN(Tensor out, Tensor::allocate(first.dtype(), out_shape));
  const int64_t outer = product(first.shape(), 0, static_cast<size_t>(axis));
  bool supported = visit_element_size(first.dtype(), [&]<class T>() {
    T* dst = out.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (const Tensor& part : parts) {
        const int64_t block = part.numel() / (outer == 0 ? 1 : outer);
        copy_elements(part.data<T>() + o * block, dst, block);
        dst += block;
      }
    }
  });
  if (!supported) return unsupported_type(what, 0, first.dtype());
  return out;
}

Expected<Tensor> slice_along_axis(const Tensor& source, int64_t axis, int64_t start, int64_t length, bool keep_axis,
                                  const std::string& what) {
  const int64_t rank = static_cast<int64_t>(source.rank());
  if (axis < 0 || axis >= rank || start < 0 || length < 0 || start + length > source.shape()[axis] ||
      (!keep_axis && length != 1)) {
    return make_error(StatusCode::kInvalidArgument, what, ": cannot take [", start, ", ", start + length,
                      ") of axis ", axis, " of shape ", shape_to_string(source.shape()));
  }
  Shape out_shape = source.shape();
  if (keep_axis) {
    out_shape[axis] = length;
  } else {
    out_shape.erase(out_shape.begin() + axis);
  }
  TRY_ASSIGN(Tensor out, Tensor::allocate(source.dtype(), out_shape));
  const int64_t outer = product(source.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = product(source.shape(), static_cast<size_t>(axis) + 1, source.rank());
  const int64_t dim = source.shape()[axis];
  bool supported = visit_element_size(source.dtype(), [&]<class T>() {
    const T* src = source.data<T>();
    T* dst = out.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      copy_elements(src + (o * dim + start) * inner, dst + o * length * inner, length * inner);
    }
  });
  if (!supported) return unsupported_type(what, 0, source.dtype());
  return out;
}

}  // namespace nxrt::cpu
