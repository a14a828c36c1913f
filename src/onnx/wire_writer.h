// Minimal protobuf wire-format encoder used by the model writer and by tests that need hand-made (including
// deliberately malformed) messages. Fields are appended in call order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nxrt::onnx::wire {

class ProtoWriter {
 public:
  void varint_field(uint32_t number, uint64_t value);
  void int64_field(uint32_t number, int64_t value) { varint_field(number, static_cast<uint64_t>(value)); }
  void fixed32_field(uint32_t number, uint32_t value);
  void fixed64_field(uint32_t number, uint64_t value);
  void float_field(uint32_t number, float value);
  void double_field(uint32_t number, double value);
  void bytes_field(uint32_t number, std::string_view value);
  void message_field(uint32_t number, const ProtoWriter& message) { bytes_field(number, message.bytes()); }

  void packed_int64s(uint32_t number, const std::vector<int64_t>& values);
  void packed_floats(uint32_t number, const std::vector<float>& values);
  void packed_doubles(uint32_t number, const std::vector<double>& values);

  // Raw building blocks for malformed inputs.
  void raw_tag(uint32_t number, uint32_t wire_type);
  void raw_varint(uint64_t value);
  void raw_bytes(std::string_view bytes) { out_.append(bytes); }

  const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace nxrt::onnx::wire
