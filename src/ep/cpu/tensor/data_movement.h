// Helpers shared by the data-movement kernel families (shape_ops, concat_split, slice_pad, layout, select):
// dispatch on element size, axis normalisation and reading small integer tensors that steer shapes.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dispatch.h"
#include "core/status.h"
#include "core/tensor.h"

namespace nxrt::cpu {

// 16-byte element (complex128) moved as an opaque value.
struct Bytes16 {
  uint64_t lo, hi;
  bool operator==(const Bytes16&) const = default;
};

// Calls fn.template operator()<T>() with an element type of the same size as `type` (uint8_t .. Bytes16) or
// std::string. Returns false for sub-byte and undefined types.
template <class Fn>
bool visit_element_size(DataType type, Fn&& fn) {
  if (type == DataType::kString) {
    fn.template operator()<std::string>();
    return true;
  }
  switch (data_type_bits(type)) {
    case 8: fn.template operator()<uint8_t>(); return true;
    case 16: fn.template operator()<uint16_t>(); return true;
    case 32: fn.template operator()<uint32_t>(); return true;
    case 64: fn.template operator()<uint64_t>(); return true;
    case 128: fn.template operator()<Bytes16>(); return true;
    default: return false;
  }
}

inline bool movable_type(DataType type) {
  return type == DataType::kString || (type != DataType::kUndefined && data_type_bits(type) >= 8);
}

inline Status unsupported_type(const std::string& description, int input, DataType type) {
  return make_error(StatusCode::kNotImplemented, description, ": input ", input, " type ", data_type_name(type),
                    " is not supported");
}

// Accepts axis in [-rank, rank-1] (or [-rank-1, rank] when `extra` is 1, as Unsqueeze and OneHot need).
inline Expected<int64_t> normalize_axis(int64_t axis, int64_t rank, const std::string& description,
                                        const char* what, int64_t extra = 0) {
  const int64_t limit = rank + extra;
  if (axis < -limit || axis >= limit) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", what, " ", axis,
                      " is out of range for rank ", rank);
  }
  return axis < 0 ? axis + limit : axis;
}

// A shape seen as [outer, n, inner] around one axis (outer = product of the dims before it, inner after it).
struct AxisSplit {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

inline AxisSplit split_at(const Shape& shape, size_t axis) {
  AxisSplit split;
  for (size_t d = 0; d < axis; ++d) split.outer *= shape[d];
  split.n = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) split.inner *= shape[d];
  return split;
}

// Reads an int32/int64 tensor of rank 0 or 1 (values of a shape-steering input such as axes or pads).
inline Expected<std::vector<int64_t>> read_int_values(const Tensor& tensor, const std::string& description,
                                                      int input, const char* name) {
  if (tensor.rank() > 1 || (tensor.dtype() != DataType::kInt64 && tensor.dtype() != DataType::kInt32)) {
    return make_error(StatusCode::kInvalidArgument, description, ": input ", input, " (", name,
                      ") must be a 1-D int64 or int32 tensor, got ", data_type_name(tensor.dtype()), " shape ",
                      shape_to_string(tensor.shape()));
  }
  std::vector<int64_t> values(static_cast<size_t>(tensor.numel()));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = tensor.dtype() == DataType::kInt64 ? tensor.data<int64_t>()[i] : tensor.data<int32_t>()[i];
  }
  return values;
}

// Copies `count` elements; memcpy for trivially copyable element types.
template <class T>
inline void copy_elements(const T* src, T* dst, int64_t count) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    if (count > 0) __builtin_memcpy(dst, src, static_cast<size_t>(count) * sizeof(T));
  } else {
    for (int64_t i = 0; i < count; ++i) dst[i] = src[i];
  }
}

inline constexpr int64_t kMoveGrain = 65536;

}  // namespace nxrt::cpu
