#include "core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace nxrt {

std::string device_name(Device device) { return device.type == DeviceType::kCuda ? "Cuda" : "Cpu"; }

namespace {

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    const size_t rounded = (bytes + 63) / 64 * 64;
    return std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  }
  void deallocate(void* pointer) override { std::free(pointer); }
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
  const int bits = data_type_bits(dtype);
  if (bits == 0) return make_error(StatusCode::kInvalidArgument, "cannot allocate a tensor of undefined type");
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(*count), static_cast<size_t>(bits), &bytes) ||
      bytes > (size_t{1} << 62)) {
    return make_error(StatusCode::kInvalidArgument, "tensor of shape ", shape_to_string(shape), " is too large");
  }
  bytes = (bytes + 7) / 8;
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
