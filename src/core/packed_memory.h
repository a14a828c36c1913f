// Memory for the constant data that kernels prepare once and then read in full at every run: repacked weights,
// which a decoder step streams from memory. Arrays come from 2 MiB-aligned regions that ask the operating system
// for transparent huge pages (madvise), so a stream over them needs one page-table walk per 2 MiB instead of one
// per 4 KiB page (transparent huge pages set to `madvise`, Debian's default, give them to no other allocation).
// Arrays are carved one after the other from shared regions, so small matrices share huge pages; a region is
// returned once every array in it is gone.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

namespace nxrt {

namespace packed_memory {

struct Region;

constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` rounded up to whole 2 MiB pages, 2 MiB-aligned, advised to be transparent huge pages (advice only: where
// the system has none, ordinary memory); free with std::free. Null when the system has no memory.
void* huge_page_block(size_t bytes);

// `bytes` (a multiple of 64 is used), 64-byte aligned, zero-filled; *region receives the owner to pass to release.
// Throws std::bad_alloc when the system has no memory.
void* allocate(size_t bytes, Region** region);
void release(Region* region);

// Regions currently held (for tests).
size_t regions_held();

}  // namespace packed_memory

// A fixed-size, zero-initialized array of trivially copyable T in packed memory; movable, not copyable.
template <class T>
class PackedArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  PackedArray() = default;
  explicit PackedArray(size_t count) : size_(count) {
    if (count > 0) data_ = static_cast<T*>(packed_memory::allocate(count * sizeof(T), &region_));
  }
  PackedArray(PackedArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        region_(std::exchange(other.region_, nullptr)) {}
  PackedArray& operator=(PackedArray&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      region_ = std::exchange(other.region_, nullptr);
    }
    return *this;
  }
  PackedArray(const PackedArray&) = delete;
  PackedArray& operator=(const PackedArray&) = delete;
  ~PackedArray() { reset(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  void reset() {
    if (region_ != nullptr) packed_memory::release(region_);
    data_ = nullptr;
    size_ = 0;
    region_ = nullptr;
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  packed_memory::Region* region_ = nullptr;
};

}  // namespace nxrt
