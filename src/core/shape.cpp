#include "core/shape.h"

#include <algorithm>

namespace nxrt {

std::optional<int64_t> checked_numel(std::span<const int64_t> dims) {
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) total = 0;
    else if (total != 0 && __builtin_mul_overflow(total, d, &total)) return std::nullopt;
  }
  return total;
}

int64_t shape_numel(std::span<const int64_t> dims) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  return total;
}

std::string shape_to_string(std::span<const int64_t> dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) text += ",";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

std::vector<int64_t> row_major_strides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

std::optional<Shape> broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else return std::nullopt;
  }
  return out;
}

}  // namespace nxrt
