// Concrete tensor shapes. Symbolic dims live in graph/type_info.h; a Tensor always has concrete dims.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nxrt {

// The dims of a tensor: a std::vector<int64_t>-like sequence that holds up to kInlineDims dims without touching the
// heap, so that creating, copying and comparing the shapes of ordinary tensors never allocates. Converts to and
// from std::vector<int64_t> (those conversions copy).
class Shape {
 public:
  static constexpr size_t kInlineDims = 8;

  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  Shape() noexcept = default;
  explicit Shape(size_t count, int64_t value = 0) { assign(count, value); }
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  template <std::input_iterator It>
  Shape(It first, It last) {
    assign(first, last);
  }
  Shape(const std::vector<int64_t>& dims) { assign(dims.begin(), dims.end()); }  // NOLINT: implicit by design
  explicit Shape(std::span<const int64_t> dims) { assign(dims.begin(), dims.end()); }
  Shape(const Shape& other) { assign(other.begin(), other.end()); }
  Shape(Shape&& other) noexcept { take(other); }
  Shape& operator=(const Shape& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> dims) {
    assign(dims.begin(), dims.end());
    return *this;
  }
  ~Shape() { release(); }

  operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }  // NOLINT

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  int64_t* data() { return heap_ ? heap_ : inline_; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
  int64_t& operator[](size_t i) { return data()[i]; }
  const int64_t& operator[](size_t i) const { return data()[i]; }
  int64_t& front() { return data()[0]; }
  const int64_t& front() const { return data()[0]; }
  int64_t& back() { return data()[size_ - 1]; }
  const int64_t& back() const { return data()[size_ - 1]; }

  void reserve(size_t count);
  void clear() { size_ = 0; }
  void resize(size_t count, int64_t value = 0);
  void push_back(int64_t value) {
    if (size_ == capacity_) reserve(size_ + 1);
    data()[size_++] = value;
  }
  int64_t& emplace_back(int64_t value) {
    push_back(value);
    return back();
  }
  void pop_back() { --size_; }
  void assign(size_t count, int64_t value);
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::forward_iterator<It>) reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  void assign(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  iterator insert(const_iterator position, int64_t value) { return insert(position, size_t{1}, value); }
  iterator insert(const_iterator position, size_t count, int64_t value);
  template <std::input_iterator It>
  iterator insert(const_iterator position, It first, It last) {
    // Buffered first (inline up to kInlineDims): the range may alias this shape.
    const Shape values(first, last);
    return insert_values(position, values.data(), values.size());
  }
  iterator insert(const_iterator position, std::initializer_list<int64_t> dims) {
    return insert_values(position, dims.begin(), dims.size());
  }
  iterator erase(const_iterator position) { return erase(position, position + 1); }
  iterator erase(const_iterator first, const_iterator last);
  void swap(Shape& other) noexcept {
    Shape held(std::move(other));
    other = std::move(*this);
    *this = std::move(held);
  }

  friend bool operator==(const Shape& a, const Shape& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend std::strong_ordering operator<=>(const Shape& a, const Shape& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  iterator insert_values(const_iterator position, const int64_t* values, size_t count);
  void release() noexcept {
    delete[] heap_;
    heap_ = nullptr;
    size_ = 0;
    capacity_ = kInlineDims;
  }
  // Takes other's dims (its heap block when it has one) and leaves it empty.
  void take(Shape& other) noexcept {
    if (other.heap_) {
      heap_ = other.heap_;
      capacity_ = other.capacity_;
      other.heap_ = nullptr;
      other.capacity_ = kInlineDims;
    } else {
      std::copy(other.inline_, other.inline_ + other.size_, inline_);
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  int64_t* heap_ = nullptr;  // dims beyond kInlineDims live here; null while they fit inline
  uint32_t size_ = 0;
  uint32_t capacity_ = kInlineDims;
  int64_t inline_[kInlineDims] = {};
};

// Per-dim integers that never outnumber a tensor's dims (strides, pads, permutations, index odometers): the same
// inline storage as Shape, so kernels build them per run without allocating.
using DimList = Shape;

// Product of dims; nullopt when a dim is negative or the product overflows int64.
std::optional<int64_t> checked_numel(std::span<const int64_t> dims);
// Product of dims; caller guarantees the shape was validated.
int64_t shape_numel(std::span<const int64_t> dims);
// "[2,3,4]"
std::string shape_to_string(std::span<const int64_t> dims);
// Row-major strides in elements.
std::vector<int64_t> row_major_strides(std::span<const int64_t> dims);

// Numpy-style multidirectional broadcast of two shapes; nullopt when incompatible.
std::optional<Shape> broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b);

}  // namespace nxrt
