// Helpers shared by the indexing kernels (gather_scatter.cpp, scatter.cpp): index-type dispatch, validation of
// index values read from data, and the mixed-radix offsets those kernels walk.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace nxrt::cpu {

// Calls fn.template operator()<I>() with I = int32_t or int64_t; false for any other index type.
template <class Fn>
bool visit_index_type(DataType type, Fn&& fn) {
  if (type == DataType::kInt32) {
    fn.template operator()<int32_t>();
    return true;
  }
  if (type == DataType::kInt64) {
    fn.template operator()<int64_t>();
    return true;
  }
  return false;
}

inline Status bad_index_type(const std::string& description, int input, DataType type) {
  return make_error(StatusCode::kInvalidArgument, description, ": input ", input, " (indices) must be int32 or int64, got ",
                    data_type_name(type));
}

// Maps an index in [-bound, bound-1] to [0, bound-1]; the caller has validated it.
inline int64_t wrap_index(int64_t value, int64_t bound) { return value < 0 ? value + bound : value; }

// Every value must lie in [-bound, bound-1]. The error names the node, the input, the position, value and bound.
inline Status check_index_values(const Tensor& indices, int64_t bound, const std::string& description, int input) {
  Status status;
  visit_index_type(indices.dtype(), [&]<class I>() {
    const I* values = indices.data<I>();
    for (int64_t i = 0; i < indices.numel(); ++i) {
      const int64_t v = values[i];
      if (v < -bound || v >= bound) {
        status = make_error(StatusCode::kInvalidArgument, description, ": input ", input, " (indices) value ", v,
                            " at flat position ", i, " is out of range [", -bound, ", ", bound - 1, "]");
        return;
      }
    }
  });
  return status;
}

// GatherElements / ScatterElements: `indices` (rank of `data`, checked by the caller) may not exceed `data` in
// any dim but `axis` (already normalised), and its values must address `data` along `axis`.
inline Status check_element_indices(const Tensor& data, const Tensor& indices, int64_t axis,
                                    const std::string& description) {
  for (size_t d = 0; d < data.rank(); ++d) {
    if (static_cast<int64_t>(d) != axis && indices.shape()[d] > data.shape()[d]) {
      return make_error(StatusCode::kInvalidArgument, description, ": input 1 (indices) shape ",
                        shape_to_string(indices.shape()), " exceeds input 0 (data) shape ",
                        shape_to_string(data.shape()), " in dimension ", d);
    }
  }
  return check_index_values(indices, data.shape()[static_cast<size_t>(axis)], description, 1);
}

// Index tuples along the last axis of `indices` address the leading dims of `dims` (GatherND / ScatterND).
inline Status check_index_tuples(const Tensor& indices, std::span<const int64_t> dims, const std::string& description,
                                 int input) {
  const int64_t width = static_cast<int64_t>(dims.size());
  Status status;
  visit_index_type(indices.dtype(), [&]<class I>() {
    const I* values = indices.data<I>();
    for (int64_t i = 0; i < indices.numel(); ++i) {
      const int64_t v = values[i];
      const int64_t bound = dims[static_cast<size_t>(i % width)];
      if (v < -bound || v >= bound) {
        status = make_error(StatusCode::kInvalidArgument, description, ": input ", input, " (indices) value ", v,
                            " at flat position ", i, " is out of range [", -bound, ", ", bound - 1,
                            "] for dimension ", i % width);
        return;
      }
    }
  });
  return status;
}

inline int64_t product(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (const int64_t d : dims) n *= d;
  return n;
}

// Offsets, in a tensor with row-major `strides`, of every position of the box `dims` (row-major order).
// Used for the inner part of an index tensor whose dims may be smaller than the data's.
inline std::vector<int64_t> box_offsets(std::span<const int64_t> dims, std::span<const int64_t> strides) {
  std::vector<int64_t> offsets(static_cast<size_t>(product(dims)));
  std::vector<int64_t> counter(dims.size(), 0);
  int64_t offset = 0;
  for (size_t i = 0; i < offsets.size(); ++i) {
    offsets[i] = offset;
    for (size_t d = dims.size(); d-- > 0;) {
      if (++counter[d] < dims[d]) {
        offset += strides[d];
        break;
      }
      offset -= (dims[d] - 1) * strides[d];
      counter[d] = 0;
    }
  }
  return offsets;
}

}  // namespace nxrt::cpu
