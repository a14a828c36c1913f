// Tensor: dtype + concrete shape + a shared, contiguous buffer on one device (+ byte offset for views).
// Copying a Tensor shares the buffer; views (reshape) share it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/data_type.h"
#include "core/shape.h"
#include "core/status.h"

namespace nxrt {

// kTestDevice: the memory of the test execution provider (ep/test_device), host memory that the runtime treats as
// a separate device so that device paths are tested on every machine.
enum class DeviceType : int { kCpu = 0, kCuda = 1, kTestDevice = 2 };

struct Device {
  DeviceType type = DeviceType::kCpu;
  int id = 0;
  bool operator==(const Device&) const = default;
};

std::string device_name(Device device);  // "Cpu", "Cuda", "TestDevice"

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns nullptr when out of memory. Alignment is at least 64 bytes.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* pointer) = 0;
  virtual Device device() const = 0;
};

// Process-wide CPU allocator (64-byte aligned).
Allocator& cpu_allocator();

// A block of memory that either the runtime owns (freed through its allocator) or that somebody else owns
// (kept alive by `owner`, e.g. a memory-mapped model file or a caller's array).
class Buffer {
 public:
  // Runtime-owned: `data` came from `allocator`; `string_count` std::string objects live in it (0 for POD data).
  Buffer(void* data, size_t bytes, Device device, Allocator* allocator, int64_t string_count = 0);
  // Borrowed: nothing is freed; `owner` (may be null) is released with the buffer.
  Buffer(void* data, size_t bytes, Device device, std::shared_ptr<void> owner);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  void* data_;
  size_t bytes_;
  Device device_;
  Allocator* allocator_ = nullptr;
  int64_t string_count_ = 0;
  std::shared_ptr<void> owner_;
};

class Tensor {
 public:
  Tensor() = default;

  // Allocates uninitialised storage (strings are default-constructed). Fails on overflow or out of memory.
  static Expected<Tensor> allocate(DataType dtype, Shape shape, Allocator& allocator = cpu_allocator());
  // Zero-copy: refers to `data` (at least storage_bytes long); `owner` keeps it alive (may be null when the
  // caller guarantees the lifetime). String tensors cannot wrap foreign memory.
  static Tensor wrap(DataType dtype, Shape shape, void* data, Device device = {}, std::shared_ptr<void> owner = {});
  // Zero-copy: `dtype` x `shape` at byte `offset` of `buffer` (which must hold storage_bytes from there). Never
  // allocates: the tensor shares the buffer, as views do.
  static Tensor in_buffer(std::shared_ptr<Buffer> buffer, size_t offset, DataType dtype, Shape shape);
  // Allocates and copies `bytes` (or copies strings element by element).
  static Expected<Tensor> copy_of(const Tensor& source, Allocator& allocator = cpu_allocator());

  bool is_valid() const { return dtype_ != DataType::kUndefined; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return numel_; }
  size_t storage_bytes() const { return data_type_storage_bytes(dtype_, numel_); }
  Device device() const { return buffer_ ? buffer_->device() : Device{}; }

  void* raw_data() const { return buffer_ ? static_cast<char*>(buffer_->data()) + offset_ : nullptr; }
  template <class T>
  T* data() const { return static_cast<T*>(raw_data()); }

  // Same buffer, new shape with the same element count (caller checks the count).
  Tensor reshaped(Shape shape) const;
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }

 private:
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;
};

}  // namespace nxrt
