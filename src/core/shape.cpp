#include "core/shape.h"

#include <algorithm>

namespace nxrt {

void Shape::reserve(size_t count) {
  if (count <= capacity_) return;
  const size_t grown = std::max<size_t>(count, size_t{2} * capacity_);
  auto* block = new int64_t[grown];
  std::copy(begin(), end(), block);
  delete[] heap_;
  heap_ = block;
  capacity_ = static_cast<uint32_t>(grown);
}

void Shape::resize(size_t count, int64_t value) {
  reserve(count);
  if (count > size_) std::fill(data() + size_, data() + count, value);
  size_ = static_cast<uint32_t>(count);
}

void Shape::assign(size_t count, int64_t value) {
  clear();
  resize(count, value);
}

Shape::iterator Shape::insert(const_iterator position, size_t count, int64_t value) {
  const size_t at = static_cast<size_t>(position - begin());
  reserve(size_ + count);
  int64_t* base = data();
  std::move_backward(base + at, base + size_, base + size_ + count);
  std::fill(base + at, base + at + count, value);
  size_ += static_cast<uint32_t>(count);
  return base + at;
}

Shape::iterator Shape::insert_values(const_iterator position, const int64_t* values, size_t count) {
  const size_t at = static_cast<size_t>(position - begin());
  reserve(size_ + count);
  int64_t* base = data();
  std::move_backward(base + at, base + size_, base + size_ + count);
  std::copy(values, values + count, base + at);
  size_ += static_cast<uint32_t>(count);
  return base + at;
}

Shape::iterator Shape::erase(const_iterator first, const_iterator last) {
  const size_t from = static_cast<size_t>(first - begin());
  const size_t to = static_cast<size_t>(last - begin());
  int64_t* base = data();
  std::move(base + to, base + size_, base + from);
  size_ -= static_cast<uint32_t>(to - from);
  return base + from;
}

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
