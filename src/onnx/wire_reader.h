// Zero-copy reader of the protobuf wire format. A WireReader walks the fields of one message whose bytes are a
// view into the model buffer; length-delimited payloads are returned as views into that same buffer, so
// strings and raw_data are never copied. Every read is bounds-checked against the enclosing message, and all
// errors are INVALID_PROTOBUF naming the message, the field and the absolute byte offset in the model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace nxrt::onnx::wire {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

inline constexpr uint32_t kMaxFieldNumber = (1u << 29) - 1;

// One decoded field. For varint/fixed fields `scalar` holds the raw 64-bit value; for length-delimited
// fields `payload` views the bytes.
struct Field {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t scalar = 0;
  std::string_view payload;
  size_t offset = 0;  // absolute offset of the field's tag in the model buffer
};

// Decodes a varint at `pos` (advanced past it). Fails on more than 10 bytes, on a 10th byte carrying bits
// beyond 64, and on running off the end of `bytes`.
bool decode_varint(std::string_view bytes, size_t& pos, uint64_t& value);

class WireReader {
 public:
  WireReader() = default;
  // `bytes` must be a view into the buffer starting at `origin` (used to report absolute offsets).
  WireReader(std::string_view bytes, const char* origin, std::string_view message);

  bool done() const { return pos_ >= bytes_.size(); }
  std::string_view message() const { return message_; }
  const char* origin() const { return origin_; }
  // Absolute offset of this message's first byte in the model buffer.
  size_t start_offset() const { return static_cast<size_t>(bytes_.data() - origin_); }

  // Reads the next field (tag and payload). Unknown fields are returned like any other; callers that do not
  // recognise a field simply ignore it, which skips it. Groups and wire types 6/7 are rejected.
  Status next(Field& field);

  // Typed accessors: each checks the wire type expected for the named field.
  Status read_string(const Field& field, std::string_view name, std::string_view& out) const;
  Status read_int64(const Field& field, std::string_view name, int64_t& out) const;
  Status read_int32(const Field& field, std::string_view name, int32_t& out) const;
  Status read_float(const Field& field, std::string_view name, float& out) const;
  Status read_message(const Field& field, std::string_view name, std::string_view sub_message,
                      WireReader& out) const;

  // Repeated scalars, packed or unpacked.
  Status append_int64s(const Field& field, std::string_view name, std::vector<int64_t>& out) const;
  Status append_int32s(const Field& field, std::string_view name, std::vector<int32_t>& out) const;
  Status append_uint64s(const Field& field, std::string_view name, std::vector<uint64_t>& out) const;
  Status append_floats(const Field& field, std::string_view name, std::vector<float>& out) const;
  Status append_doubles(const Field& field, std::string_view name, std::vector<double>& out) const;

  // INVALID_PROTOBUF "<message>.<name> (field N) at byte offset X: <detail>".
  template <class... Parts>
  Status error(const Field& field, std::string_view name, Parts&&... parts) const {
    return make_error(StatusCode::kInvalidProtobuf, message_, ".", name, " (field ", field.number,
                      ") at byte offset ", field.offset, ": ", std::forward<Parts>(parts)...);
  }

 private:
  size_t absolute(size_t pos) const { return static_cast<size_t>(bytes_.data() - origin_) + pos; }
  Status expect(const Field& field, std::string_view name, WireType type) const;
  template <class T, class Decode>
  Status append_packed(const Field& field, std::string_view name, WireType element_type, std::vector<T>& out,
                       Decode decode) const;

  std::string_view bytes_;
  const char* origin_ = nullptr;
  std::string_view message_;
  size_t pos_ = 0;
};

}  // namespace nxrt::onnx::wire
