#include "onnx/wire_reader.h"

#include <bit>
#include <limits>

namespace nxrt::onnx::wire {
namespace {

std::string_view wire_type_name(WireType type) {
  switch (type) {
    case WireType::kVarint: return "varint";
    case WireType::kFixed64: return "fixed64";
    case WireType::kLengthDelimited: return "length-delimited";
    case WireType::kStartGroup: return "start-group";
    case WireType::kEndGroup: return "end-group";
    case WireType::kFixed32: return "fixed32";
  }
  return "invalid";
}

uint64_t load_le(const char* data, size_t size) {
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i) value |= static_cast<uint64_t>(static_cast<unsigned char>(data[i])) << (8 * i);
  return value;
}

}  // namespace

bool decode_varint(std::string_view bytes, size_t& pos, uint64_t& value) {
  uint64_t result = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos >= bytes.size()) return false;
    const auto byte = static_cast<unsigned char>(bytes[pos++]);
    if (i == 9 && (byte & 0xFE) != 0) return false;  // the 10th byte may only carry bit 63
    result |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
    if ((byte & 0x80) == 0) {
      value = result;
      return true;
    }
  }
  return false;
}

WireReader::WireReader(std::string_view bytes, const char* origin, std::string_view message)
    : bytes_(bytes), origin_(origin), message_(message) {}

Status WireReader::next(Field& field) {
  field = Field{};
  field.offset = absolute(pos_);
  uint64_t tag = 0;
  if (!decode_varint(bytes_, pos_, tag)) {
    return make_error(StatusCode::kInvalidProtobuf, message_, ": malformed or truncated field tag at byte offset ",
                      field.offset);
  }
  const uint64_t number = tag >> 3;
  if (number == 0 || number > kMaxFieldNumber) {
    return make_error(StatusCode::kInvalidProtobuf, message_, ": invalid field number ", number,
                      " at byte offset ", field.offset);
  }
  field.number = static_cast<uint32_t>(number);
  const auto raw_type = static_cast<uint8_t>(tag & 7);
  switch (raw_type) {
    case 0:
      field.type = WireType::kVarint;
      if (!decode_varint(bytes_, pos_, field.scalar)) return error(field, "varint", "malformed or truncated varint");
      return Status::ok();
    case 1:
    case 5: {
      const size_t size = raw_type == 1 ? 8 : 4;
      field.type = raw_type == 1 ? WireType::kFixed64 : WireType::kFixed32;
      if (bytes_.size() - pos_ < size) {
        return error(field, wire_type_name(field.type), "value runs past the end of the message");
      }
      field.scalar = load_le(bytes_.data() + pos_, size);
      pos_ += size;
      return Status::ok();
    }
    case 2: {
      field.type = WireType::kLengthDelimited;
      uint64_t length = 0;
      if (!decode_varint(bytes_, pos_, length)) return error(field, "length", "malformed or truncated length");
      if (length > bytes_.size() - pos_) {
        return error(field, "length", "length ", length, " runs past the end of the enclosing message (",
                     bytes_.size() - pos_, " bytes left)");
      }
      field.payload = bytes_.substr(pos_, static_cast<size_t>(length));
      pos_ += static_cast<size_t>(length);
      return Status::ok();
    }
    case 3:
    case 4:
      return error(field, "group", "groups are not supported");
    default:
      return error(field, "tag", "invalid wire type ", static_cast<int>(raw_type));
  }
}

Status WireReader::expect(const Field& field, std::string_view name, WireType type) const {
  if (field.type == type) return Status::ok();
  return error(field, name, "wire type ", wire_type_name(field.type), ", expected ", wire_type_name(type));
}

Status WireReader::read_string(const Field& field, std::string_view name, std::string_view& out) const {
  TRY(expect(field, name, WireType::kLengthDelimited));
  out = field.payload;
  return Status::ok();
}

Status WireReader::read_int64(const Field& field, std::string_view name, int64_t& out) const {
  TRY(expect(field, name, WireType::kVarint));
  out = static_cast<int64_t>(field.scalar);
  return Status::ok();
}

Status WireReader::read_int32(const Field& field, std::string_view name, int32_t& out) const {
  TRY(expect(field, name, WireType::kVarint));
  const auto value = static_cast<int64_t>(field.scalar);
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return error(field, name, "value ", value, " does not fit in int32");
  }
  out = static_cast<int32_t>(value);
  return Status::ok();
}

Status WireReader::read_float(const Field& field, std::string_view name, float& out) const {
  TRY(expect(field, name, WireType::kFixed32));
  out = std::bit_cast<float>(static_cast<uint32_t>(field.scalar));
  return Status::ok();
}

Status WireReader::read_message(const Field& field, std::string_view name, std::string_view sub_message,
                                WireReader& out) const {
  TRY(expect(field, name, WireType::kLengthDelimited));
  out = WireReader(field.payload, origin_, sub_message);
  return Status::ok();
}

template <class T, class Decode>
Status WireReader::append_packed(const Field& field, std::string_view name, WireType element_type,
                                 std::vector<T>& out, Decode decode) const {
  if (field.type == element_type) {
    out.push_back(decode(field.scalar));
    return Status::ok();
  }
  TRY(expect(field, name, WireType::kLengthDelimited));
  const std::string_view data = field.payload;
  if (element_type == WireType::kVarint) {
    size_t pos = 0;
    while (pos < data.size()) {
      uint64_t value = 0;
      if (!decode_varint(data, pos, value)) {
        return error(field, name, "malformed varint in packed data at element ", out.size());
      }
      out.push_back(decode(value));
    }
    return Status::ok();
  }
  const size_t size = element_type == WireType::kFixed64 ? 8 : 4;
  if (data.size() % size != 0) {
    return error(field, name, "packed data of ", data.size(), " bytes is not a multiple of ", size);
  }
  out.reserve(out.size() + data.size() / size);
  for (size_t pos = 0; pos < data.size(); pos += size) out.push_back(decode(load_le(data.data() + pos, size)));
  return Status::ok();
}

Status WireReader::append_int64s(const Field& field, std::string_view name, std::vector<int64_t>& out) const {
  return append_packed(field, name, WireType::kVarint, out, [](uint64_t v) { return static_cast<int64_t>(v); });
}

Status WireReader::append_int32s(const Field& field, std::string_view name, std::vector<int32_t>& out) const {
  return append_packed(field, name, WireType::kVarint, out,
                       [](uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); });
}

Status WireReader::append_uint64s(const Field& field, std::string_view name, std::vector<uint64_t>& out) const {
  return append_packed(field, name, WireType::kVarint, out, [](uint64_t v) { return v; });
}

Status WireReader::append_floats(const Field& field, std::string_view name, std::vector<float>& out) const {
  return append_packed(field, name, WireType::kFixed32, out,
                       [](uint64_t v) { return std::bit_cast<float>(static_cast<uint32_t>(v)); });
}

Status WireReader::append_doubles(const Field& field, std::string_view name, std::vector<double>& out) const {
  return append_packed(field, name, WireType::kFixed64, out, [](uint64_t v) { return std::bit_cast<double>(v); });
}

}  // namespace nxrt::onnx::wire
