#include "onnx/wire_reader.h"

#include <gtest/gtest.h>

#include <limits>

#include "onnx/wire_writer.h"

namespace nxrt::onnx::wire {
namespace {

Status read_all(std::string_view bytes, std::vector<Field>& fields) {
  WireReader reader(bytes, bytes.data(), "Test");
  while (!reader.done()) TRY(reader.next(fields.emplace_back()));
  return Status::ok();
}

TEST(DecodeVarint, DecodesBoundaryValues) {
  for (uint64_t value : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{300},
                         uint64_t{1} << 35, std::numeric_limits<uint64_t>::max()}) {
    ProtoWriter writer;
    writer.raw_varint(value);
    size_t pos = 0;
    uint64_t decoded = 0;
    ASSERT_TRUE(decode_varint(writer.bytes(), pos, decoded)) << value;
    EXPECT_EQ(decoded, value);
    EXPECT_EQ(pos, writer.bytes().size());
  }
}

TEST(DecodeVarint, RejectsElevenBytesOverflowAndTruncation) {
  size_t pos = 0;
  uint64_t value = 0;
  const std::string eleven(10, '\x80');
  EXPECT_FALSE(decode_varint(eleven + '\x01', pos, value));
  pos = 0;
  const std::string overflow = std::string(9, '\xFF') + '\x02';  // bit 64 set
  EXPECT_FALSE(decode_varint(overflow, pos, value));
  pos = 0;
  EXPECT_FALSE(decode_varint(std::string("\x80\x80", 2), pos, value));
  pos = 0;
  const std::string max = std::string(9, '\xFF') + '\x01';
  EXPECT_TRUE(decode_varint(max, pos, value));
  EXPECT_EQ(value, std::numeric_limits<uint64_t>::max());
}

TEST(WireReader, ReadsEveryWireTypeAndSkipsUnknownFields) {
  ProtoWriter writer;
  writer.varint_field(1, 150);
  writer.fixed64_field(2, 0x0102030405060708ull);
  writer.bytes_field(3, "abc");
  writer.fixed32_field(4, 0xDEADBEEF);
  writer.varint_field(1000, 7);
  std::vector<Field> fields;
  ASSERT_TRUE(read_all(writer.bytes(), fields).is_ok());
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_EQ(fields[0].scalar, 150u);
  EXPECT_EQ(fields[1].type, WireType::kFixed64);
  EXPECT_EQ(fields[1].scalar, 0x0102030405060708ull);
  EXPECT_EQ(fields[2].payload, "abc");
  EXPECT_EQ(fields[2].payload.data(), writer.bytes().data() + fields[2].offset + 2);
  EXPECT_EQ(fields[3].scalar, 0xDEADBEEFu);
  EXPECT_EQ(fields[4].number, 1000u);
}

TEST(WireReader, RejectsGroupsInvalidWireTypesAndFieldZero) {
  for (uint32_t type : {3u, 4u, 6u, 7u}) {
    ProtoWriter writer;
    writer.raw_tag(5, type);
    writer.raw_varint(0);
    std::vector<Field> fields;
    const Status status = read_all(writer.bytes(), fields);
    EXPECT_EQ(status.code(), StatusCode::kInvalidProtobuf) << type;
  }
  ProtoWriter zero;
  zero.raw_tag(0, 0);
  zero.raw_varint(1);
  std::vector<Field> fields;
  const Status status = read_all(zero.bytes(), fields);
  EXPECT_EQ(status.code(), StatusCode::kInvalidProtobuf);
  EXPECT_NE(status.message().find("field number 0"), std::string::npos) << status.message();
}

TEST(WireReader, RejectsLengthPastEndAndTruncatedFixed) {
  ProtoWriter writer;
  writer.varint_field(1, 1);
  writer.raw_tag(2, 2);
  writer.raw_varint(100);
  writer.raw_bytes("short");
  std::vector<Field> fields;
  const Status status = read_all(writer.bytes(), fields);
  EXPECT_EQ(status.code(), StatusCode::kInvalidProtobuf);
  EXPECT_NE(status.message().find("byte offset 2"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("field 2"), std::string::npos) << status.message();

  ProtoWriter huge;
  huge.raw_tag(2, 2);
  huge.raw_varint(std::numeric_limits<uint64_t>::max());
  fields.clear();
  EXPECT_EQ(read_all(huge.bytes(), fields).code(), StatusCode::kInvalidProtobuf);

  for (uint32_t type : {1u, 5u}) {
    ProtoWriter fixed;
    fixed.raw_tag(3, type);
    fixed.raw_bytes("ab");
    fields.clear();
    EXPECT_EQ(read_all(fixed.bytes(), fields).code(), StatusCode::kInvalidProtobuf);
  }
}

TEST(WireReader, NestedMessageCannotReadPastItsParent) {
  ProtoWriter inner;
  inner.raw_tag(1, 2);
  inner.raw_varint(10);  // claims 10 bytes, parent holds 2 after it
  inner.raw_bytes("xy");
  ProtoWriter outer;
  outer.message_field(7, inner);
  outer.bytes_field(8, "trailing bytes that must not be read by the inner message");
  WireReader reader(outer.bytes(), outer.bytes().data(), "Outer");
  Field field;
  ASSERT_TRUE(reader.next(field).is_ok());
  WireReader sub;
  ASSERT_TRUE(reader.read_message(field, "inner", "Inner", sub).is_ok());
  Field inner_field;
  const Status status = sub.next(inner_field);
  EXPECT_EQ(status.code(), StatusCode::kInvalidProtobuf);
  EXPECT_NE(status.message().find("Inner"), std::string::npos) << status.message();
}

TEST(WireReader, AcceptsPackedAndUnpackedRepeatedScalars) {
  ProtoWriter writer;
  writer.packed_int64s(1, {1, -2, 300});
  writer.int64_field(1, 4);
  writer.packed_floats(2, {1.5f, -2.0f});
  writer.float_field(2, 3.0f);
  writer.packed_doubles(3, {0.25});
  writer.double_field(3, 8.0);
  WireReader reader(writer.bytes(), writer.bytes().data(), "Test");
  std::vector<int64_t> ints;
  std::vector<int32_t> int32s;
  std::vector<float> floats;
  std::vector<double> doubles;
  Field field;
  while (!reader.done()) {
    ASSERT_TRUE(reader.next(field).is_ok());
    if (field.number == 1) {
      ASSERT_TRUE(reader.append_int64s(field, "ints", ints).is_ok());
      ASSERT_TRUE(reader.append_int32s(field, "int32s", int32s).is_ok());
    }
    if (field.number == 2) {
      ASSERT_TRUE(reader.append_floats(field, "floats", floats).is_ok());
    }
    if (field.number == 3) {
      ASSERT_TRUE(reader.append_doubles(field, "doubles", doubles).is_ok());
    }
  }
  EXPECT_EQ(ints, (std::vector<int64_t>{1, -2, 300, 4}));
  EXPECT_EQ(int32s, (std::vector<int32_t>{1, -2, 300, 4}));
  EXPECT_EQ(floats, (std::vector<float>{1.5f, -2.0f, 3.0f}));
  EXPECT_EQ(doubles, (std::vector<double>{0.25, 8.0}));
}

TEST(WireReader, RejectsMalformedPackedData) {
  ProtoWriter writer;
  writer.bytes_field(2, "abcde");  // 5 bytes is not a whole number of floats
  writer.bytes_field(1, std::string("\x80", 1));  // truncated varint inside packed data
  WireReader reader(writer.bytes(), writer.bytes().data(), "Test");
  Field field;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  ASSERT_TRUE(reader.next(field).is_ok());
  EXPECT_EQ(reader.append_floats(field, "floats", floats).code(), StatusCode::kInvalidProtobuf);
  ASSERT_TRUE(reader.next(field).is_ok());
  EXPECT_EQ(reader.append_int64s(field, "ints", ints).code(), StatusCode::kInvalidProtobuf);
}

TEST(WireReader, TypedAccessorsCheckWireTypeAndRange) {
  ProtoWriter writer;
  writer.bytes_field(1, "text");
  writer.int64_field(2, int64_t{1} << 40);
  WireReader reader(writer.bytes(), writer.bytes().data(), "Msg");
  Field field;
  ASSERT_TRUE(reader.next(field).is_ok());
  int64_t value = 0;
  const Status status = reader.read_int64(field, "count", value);
  EXPECT_EQ(status.code(), StatusCode::kInvalidProtobuf);
  EXPECT_NE(status.message().find("Msg.count (field 1) at byte offset 0"), std::string::npos) << status.message();
  ASSERT_TRUE(reader.next(field).is_ok());
  int32_t small = 0;
  EXPECT_EQ(reader.read_int32(field, "small", small).code(), StatusCode::kInvalidProtobuf);
  std::string_view text;
  EXPECT_EQ(reader.read_string(field, "text", text).code(), StatusCode::kInvalidProtobuf);
  float f = 0;
  EXPECT_EQ(reader.read_float(field, "f", f).code(), StatusCode::kInvalidProtobuf);
}

}  // namespace
}  // namespace nxrt::onnx::wire
