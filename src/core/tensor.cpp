#include "core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>

#include "core/packed_memory.h"
#include "core/sanitizer.h"

namespace nxrt {

std::string device_name(Device device) {
  switch (device.type) {
    case DeviceType::kCuda: return "Cuda";
    case DeviceType::kTestDevice: return "TestDevice";
    case DeviceType::kCpu: break;
  }
  return "Cpu";
}

namespace {

// Blocks of 64 << c bytes for c < kClasses are cached per thread, at most kBlocksPerClass each. Sanitizer
// builds skip the cache so that use-after-free stays detectable.
constexpr size_t kClasses = 9;  // up to 16 KiB
constexpr size_t kBlocksPerClass = 8;
constexpr bool kCacheBlocks = !kAddressSanitizer;

size_t size_class_of(size_t bytes) {
  size_t c = 0;
  while (c < kClasses && (size_t{64} << c) < bytes) ++c;
  return c;
}

// Set once the thread's cache is destroyed (at thread exit; for the main thread before static destructors,
// which may still free tensors): later frees bypass the cache. Trivially destructible, so always readable.
thread_local bool block_cache_gone = false;

struct BlockCache {
  void* blocks[kClasses][kBlocksPerClass] = {};
  size_t counts[kClasses] = {};
  ~BlockCache() {
    for (size_t c = 0; c < kClasses; ++c) {
      for (size_t i = 0; i < counts[c]; ++i) std::free(blocks[c][i]);
    }
    block_cache_gone = true;
  }
};

// Null once the thread's cache is gone.
BlockCache* thread_block_cache() {
  if (block_cache_gone) return nullptr;
  thread_local BlockCache cache;
  return &cache;
}

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    const size_t c = size_class_of(bytes);
    if (kCacheBlocks && c < kClasses) {
      BlockCache* cache = thread_block_cache();
      if (cache && cache->counts[c] > 0) return cache->blocks[c][--cache->counts[c]];
      return std::aligned_alloc(64, size_t{64} << c);
    }
    // Blocks of a huge page or more are whole huge pages: a decoder's key / value caches are read in full at
    // every step, and a stream needs one page-table walk per 2 MiB instead of per 4 KiB.
    if (bytes >= packed_memory::kHugePageBytes) return packed_memory::huge_page_block(bytes);
    const size_t rounded = (bytes + 63) / 64 * 64;
    return std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  }
  void deallocate(void* pointer) override {
    if (kCacheBlocks && pointer) {
      // Blocks of this allocator are 64 << c bytes (cached sizes) or larger than the largest class; the usable
      // size is at least the requested one and less than twice it, so the class is the largest that fits.
      const size_t usable = malloc_usable_size(pointer);
      size_t c = 0;
      while (c + 1 < kClasses && (size_t{64} << (c + 1)) <= usable) ++c;
      if ((size_t{64} << c) > usable || usable >= (size_t{128} << c)) c = kClasses;
      BlockCache* cache = c < kClasses ? thread_block_cache() : nullptr;
      if (cache && cache->counts[c] < kBlocksPerClass) {
        cache->blocks[c][cache->counts[c]++] = pointer;
        return;
      }
    }
    std::free(pointer);
  }
  Device device() const override { return Device{}; }
};

}  // namespace

Allocator& cpu_allocator() {
  static CpuAllocator allocator;
  return allocator;
}

Buffer::Buffer(void* data, size_t bytes, Device device, Allocator* allocator, int64_t string_count)
    : data_(data), bytes_(bytes), device_(device), allocator_(allocator), string_count_(string_count) {}

Buffer::Buffer(void* data, size_t bytes, Device device, std::shared_ptr<void> owner)
    : data_(data), bytes_(bytes), device_(device), owner_(std::move(owner)) {}

Buffer::~Buffer() {
  auto* strings = static_cast<std::string*>(data_);
  for (int64_t i = 0; i < string_count_; ++i) strings[i].~basic_string();
  if (allocator_) allocator_->deallocate(data_);
}

Expected<Tensor> Tensor::allocate(DataType dtype, Shape shape, Allocator& allocator) {
  const auto count = checked_numel(shape);
  if (!count) return make_error(StatusCode::kInvalidArgument, "invalid tensor shape ", shape_to_string(shape));
  if (data_type_bits(dtype) == 0) {
    return make_error(StatusCode::kInvalidArgument, "cannot allocate a tensor of undefined type");
  }
  const std::optional<size_t> storage = checked_storage_bytes(dtype, *count);
  if (!storage || *storage > (size_t{1} << 59)) {  // 2^59 bytes: 2^62 bits
    return make_error(StatusCode::kInvalidArgument, "tensor of shape ", shape_to_string(shape), " is too large");
  }
  const size_t bytes = *storage;
  void* data = allocator.allocate(bytes);
  if (data == nullptr) {
    return make_error(StatusCode::kRuntimeException, "failed to allocate ", bytes, " bytes for a tensor of shape ",
                      shape_to_string(shape));
  }
  Tensor tensor;
  tensor.dtype_ = dtype;
  tensor.numel_ = *count;
  tensor.shape_ = std::move(shape);
  int64_t string_count = 0;
  if (dtype == DataType::kString) {
    auto* strings = static_cast<std::string*>(data);
    for (int64_t i = 0; i < *count; ++i) new (strings + i) std::string();
    string_count = *count;
  }
  tensor.buffer_ = std::make_shared<Buffer>(data, bytes, allocator.device(), &allocator, string_count);
  return tensor;
}

Tensor Tensor::wrap(DataType dtype, Shape shape, void* data, Device device, std::shared_ptr<void> owner) {
  Tensor tensor;
  tensor.dtype_ = dtype;
  tensor.numel_ = shape_numel(shape);
  tensor.shape_ = std::move(shape);
  const size_t bytes = data_type_storage_bytes(dtype, tensor.numel_);
  tensor.buffer_ = std::make_shared<Buffer>(data, bytes, device, std::move(owner));
  return tensor;
}

Tensor Tensor::in_buffer(std::shared_ptr<Buffer> buffer, size_t offset, DataType dtype, Shape shape) {
  Tensor tensor;
  tensor.dtype_ = dtype;
  tensor.numel_ = shape_numel(shape);
  tensor.shape_ = std::move(shape);
  tensor.buffer_ = std::move(buffer);
  tensor.offset_ = offset;
  return tensor;
}

Expected<Tensor> Tensor::copy_of(const Tensor& source, Allocator& allocator) {
  TRY_ASSIGN(Tensor copy, allocate(source.dtype(), source.shape(), allocator));
  if (source.dtype() == DataType::kString) {
    for (int64_t i = 0; i < source.numel(); ++i) copy.data<std::string>()[i] = source.data<std::string>()[i];
  } else if (source.storage_bytes() > 0) {
    std::memcpy(copy.raw_data(), source.raw_data(), source.storage_bytes());
  }
  return copy;
}

Tensor Tensor::reshaped(Shape shape) const {
  Tensor view = *this;
  view.shape_ = std::move(shape);
  return view;
}

}  // namespace nxrt
