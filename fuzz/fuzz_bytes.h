// The two readers of a fuzz case (fuzz_model_builder.h describes the format): structure from the front, tensor
// values from the back. Neither reads past the other; an exhausted reader yields zeros.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace nxrt::fuzz {

// small(v): v itself below 64, else 0..8. Keeps counts and dims small for random bytes while seeds may spell
// exact values up to 63.
inline int64_t small_value(uint8_t v) { return v < 64 ? v : (v - 64) % 9; }

class FuzzBytes {
 public:
  explicit FuzzBytes(std::span<const uint8_t> bytes) : data_(bytes.data()), back_(bytes.size()) {}

  uint8_t u8() { return front_ < back_ ? data_[front_++] : 0; }

  // Zigzag LEB128, at most 10 bytes.
  int64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t byte = u8();
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    return static_cast<int64_t>((value >> 1) ^ (~(value & 1) + 1));
  }

  float f32() {
    uint32_t bits = 0;
    for (int shift = 0; shift < 32; shift += 8) bits |= static_cast<uint32_t>(u8()) << shift;
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }

  std::string text(size_t length) {
    length = std::min(length, back_ - front_);
    std::string result(reinterpret_cast<const char*>(data_ + front_), length);
    front_ += length;
    return result;
  }

  // One byte from the data section (the back).
  uint8_t tail_u8() { return back_ > front_ ? data_[--back_] : 0; }

  // The last `length` unread bytes (fewer when the readers meet), in their stored order.
  std::span<const uint8_t> tail(size_t length) {
    length = std::min(length, back_ - front_);
    back_ -= length;
    return {data_ + back_, length};
  }

 private:
  const uint8_t* data_;
  size_t front_ = 0;
  size_t back_;
};

}  // namespace nxrt::fuzz
