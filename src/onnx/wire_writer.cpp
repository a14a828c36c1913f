#include "onnx/wire_writer.h"

#include <bit>

namespace nxrt::onnx::wire {
namespace {

void append_le(std::string& out, uint64_t value, int size) {
  for (int i = 0; i < size; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

}  // namespace

void ProtoWriter::raw_varint(uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void ProtoWriter::raw_tag(uint32_t number, uint32_t wire_type) {
  raw_varint((static_cast<uint64_t>(number) << 3) | wire_type);
}

void ProtoWriter::varint_field(uint32_t number, uint64_t value) {
  raw_tag(number, 0);
  raw_varint(value);
}

void ProtoWriter::fixed32_field(uint32_t number, uint32_t value) {
  raw_tag(number, 5);
  append_le(out_, value, 4);
}

void ProtoWriter::fixed64_field(uint32_t number, uint64_t value) {
  raw_tag(number, 1);
  append_le(out_, value, 8);
}

void ProtoWriter::float_field(uint32_t number, float value) {
  fixed32_field(number, std::bit_cast<uint32_t>(value));
}

void ProtoWriter::double_field(uint32_t number, double value) {
  fixed64_field(number, std::bit_cast<uint64_t>(value));
}

void ProtoWriter::bytes_field(uint32_t number, std::string_view value) {
  raw_tag(number, 2);
  raw_varint(value.size());
  out_.append(value);
}

void ProtoWriter::packed_int64s(uint32_t number, const std::vector<int64_t>& values) {
  ProtoWriter body;
  for (int64_t v : values) body.raw_varint(static_cast<uint64_t>(v));
  bytes_field(number, body.bytes());
}

void ProtoWriter::packed_floats(uint32_t number, const std::vector<float>& values) {
  std::string body;
  for (float v : values) append_le(body, std::bit_cast<uint32_t>(v), 4);
  bytes_field(number, body);
}

void ProtoWriter::packed_doubles(uint32_t number, const std::vector<double>& values) {
  std::string body;
  for (double v : values) append_le(body, std::bit_cast<uint64_t>(v), 8);
  bytes_field(number, body);
}

}  // namespace nxrt::onnx::wire
