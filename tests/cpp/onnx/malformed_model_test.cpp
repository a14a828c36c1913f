// Malformed models: every one must produce INVALID_PROTOBUF (never a crash or an accepted model). Nesting past
// the bounds of graph/model_limits.h is INVALID_ARGUMENT and is tested in nesting_limits_test.cpp.
#include <gtest/gtest.h>

#include <set>

#include "onnx/model_proto.h"
#include "onnx/model_writer.h"
#include "onnx/onnx_test_models.h"
#include "onnx/wire_reader.h"
#include "onnx/wire_writer.h"

namespace nxrt::onnx {
namespace {

using wire::ProtoWriter;

void expect_invalid(const std::string& bytes, std::string_view needle = {}) {
  auto parsed = parse_model(bytes);
  ASSERT_FALSE(parsed.has_value()) << "accepted a malformed model";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidProtobuf) << parsed.status().to_string();
  if (!needle.empty()) {
    EXPECT_NE(parsed.status().message().find(needle), std::string::npos) << parsed.status().message();
  }
}

std::string model_with_graph(const ProtoWriter& graph) {
  ProtoWriter model;
  model.int64_field(1, 9);
  model.message_field(7, graph);
  return model.take();
}

std::string model_with_initializer(const ProtoWriter& tensor) {
  ProtoWriter graph;
  graph.message_field(5, tensor);
  return model_with_graph(graph);
}

// Offsets at which a top-level ModelProto field starts: cutting there leaves a valid, shorter model.
std::set<size_t> top_level_boundaries(const std::string& bytes) {
  std::set<size_t> boundaries{0, bytes.size()};
  wire::WireReader reader(bytes, bytes.data(), "ModelProto");
  wire::Field field;
  while (!reader.done()) {
    EXPECT_TRUE(reader.next(field).is_ok());
    boundaries.insert(field.offset);
  }
  return boundaries;
}

TEST(MalformedModel, TruncationAtEveryByteFailsUnlessAtATopLevelBoundary) {
  write::Model model = testing::sample_model();
  write::Graph body;
  body.nodes.push_back({"Identity", {"a"}, {"b"}, {write::attr_ints("x", {1, 2})}, "", ""});
  model.graph.nodes[0].attributes.push_back(write::attr_graph("body", body));
  const std::string bytes = write::encode_model(model);
  const std::set<size_t> boundaries = top_level_boundaries(bytes);
  size_t failures = 0;
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    auto parsed = parse_model(std::string_view(bytes).substr(0, cut));
    if (boundaries.count(cut)) {
      EXPECT_TRUE(parsed.has_value()) << "cut at " << cut << ": " << parsed.status().to_string();
    } else {
      ASSERT_FALSE(parsed.has_value()) << "cut at " << cut << " accepted";
      EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidProtobuf);
      ++failures;
    }
  }
  EXPECT_GT(failures, bytes.size() / 2);
}

TEST(MalformedModel, CorruptingEveryByteNeverCrashes) {
  const std::string bytes = write::encode_model(testing::sample_model());
  size_t rejected = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char value : {0x00, 0x7F, 0x80, 0xFF}) {
      std::string corrupt = bytes;
      corrupt[i] = static_cast<char>(value);
      auto parsed = parse_model(corrupt);
      if (!parsed.has_value()) {
        EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidProtobuf);
        EXPECT_NE(parsed.status().message().find("byte offset"), std::string::npos) << parsed.status().message();
        ++rejected;
      }
    }
  }
  EXPECT_GT(rejected, 0u);
}

TEST(MalformedModel, BadVarints) {
  ProtoWriter eleven;
  eleven.raw_tag(1, 0);
  eleven.raw_bytes(std::string(10, '\x80') + '\x01');
  expect_invalid(eleven.bytes(), "varint");
  ProtoWriter overflow;
  overflow.raw_tag(1, 0);
  overflow.raw_bytes(std::string(9, '\xFF') + '\x7F');
  expect_invalid(overflow.bytes());
  expect_invalid(std::string(10, '\xFF') + '\x01', "tag");
  expect_invalid(std::string("\x08\x80", 2));
}

TEST(MalformedModel, LengthsPastTheEnd) {
  ProtoWriter model;
  model.raw_tag(7, 2);
  model.raw_varint(1000);
  model.raw_bytes("abc");
  expect_invalid(model.bytes(), "ModelProto.length (field 7) at byte offset 0");

  ProtoWriter huge;
  huge.raw_tag(2, 2);
  huge.raw_varint(uint64_t{1} << 62);
  expect_invalid(huge.bytes());

  ProtoWriter node;
  node.raw_tag(1, 2);
  node.raw_varint(50);  // input string claims more than the node holds
  node.raw_bytes("x");
  ProtoWriter graph;
  graph.message_field(1, node);
  graph.bytes_field(2, std::string(100, 'n'));
  expect_invalid(model_with_graph(graph), "NodeProto");
}

TEST(MalformedModel, WrongWireTypesForKnownFields) {
  ProtoWriter graph_as_varint;
  graph_as_varint.varint_field(7, 1);
  expect_invalid(graph_as_varint.bytes(), "ModelProto.graph (field 7)");
  ProtoWriter ir_as_bytes;
  ir_as_bytes.bytes_field(1, "x");
  expect_invalid(ir_as_bytes.bytes(), "ir_version");
  ProtoWriter name_as_fixed;
  name_as_fixed.fixed32_field(2, 0);
  expect_invalid(name_as_fixed.bytes(), "producer_name");

  ProtoWriter float_as_varint;
  float_as_varint.bytes_field(1, "alpha");
  float_as_varint.varint_field(2, 1);
  ProtoWriter node;
  node.message_field(5, float_as_varint);
  ProtoWriter graph;
  graph.message_field(1, node);
  expect_invalid(model_with_graph(graph), "AttributeProto.f (field 2)");

  ProtoWriter dims_as_fixed;
  dims_as_fixed.fixed64_field(1, 3);
  expect_invalid(model_with_initializer(dims_as_fixed), "TensorProto.dims");
}

TEST(MalformedModel, GroupsAreRejected) {
  ProtoWriter model;
  model.raw_tag(30, 3);
  model.raw_tag(30, 4);
  expect_invalid(model.bytes(), "group");
}

TEST(MalformedModel, HugeCountsAndSizes) {
  ProtoWriter overflow;
  overflow.packed_int64s(1, {int64_t{1} << 40, int64_t{1} << 40});
  overflow.int64_field(2, 1);
  expect_invalid(model_with_initializer(overflow), "overflows");

  ProtoWriter packed_claim;
  packed_claim.raw_tag(1, 2);
  packed_claim.raw_varint(uint64_t{1} << 40);
  packed_claim.raw_bytes("\x01\x02");
  expect_invalid(model_with_initializer(packed_claim));
}

TEST(MalformedModel, TensorValueChecks) {
  ProtoWriter negative;
  negative.packed_int64s(1, {2, -3});
  negative.int64_field(2, 1);
  negative.bytes_field(8, "neg");
  expect_invalid(model_with_initializer(negative), "'neg'");

  ProtoWriter bad_type;
  bad_type.int64_field(2, 99);
  expect_invalid(model_with_initializer(bad_type), "data type 99");
  ProtoWriter negative_type;
  negative_type.int64_field(2, -1);
  expect_invalid(model_with_initializer(negative_type), "data type -1");

  ProtoWriter bad_location;
  bad_location.int64_field(2, 1);
  bad_location.int64_field(14, 2);
  expect_invalid(model_with_initializer(bad_location), "data_location");

  ProtoWriter short_raw;
  short_raw.packed_int64s(1, {4});
  short_raw.int64_field(2, 1);
  short_raw.bytes_field(8, "short");
  short_raw.bytes_field(9, std::string(12, '\0'));
  expect_invalid(model_with_initializer(short_raw), "raw_data has 12 bytes, expected 16");

  ProtoWriter string_raw;
  string_raw.int64_field(2, 8);
  string_raw.bytes_field(9, "abc");
  expect_invalid(model_with_initializer(string_raw), "raw_data is not allowed");
}

TEST(MalformedModel, EnumValuesOutOfRange) {
  ProtoWriter attribute;
  attribute.bytes_field(1, "a");
  attribute.int64_field(20, 15);
  ProtoWriter node;
  node.message_field(5, attribute);
  ProtoWriter graph;
  graph.message_field(1, node);
  expect_invalid(model_with_graph(graph), "unknown attribute type 15");

  ProtoWriter tensor_type;
  tensor_type.int64_field(1, 27);
  ProtoWriter type;
  type.message_field(1, tensor_type);
  ProtoWriter info;
  info.message_field(2, type);
  ProtoWriter graph2;
  graph2.message_field(12, info);
  expect_invalid(model_with_graph(graph2), "elem_type");

  ProtoWriter map;
  map.int64_field(1, 1000);
  ProtoWriter map_type;
  map_type.message_field(5, map);
  ProtoWriter info2;
  info2.message_field(2, map_type);
  ProtoWriter graph3;
  graph3.message_field(13, info2);
  expect_invalid(model_with_graph(graph3), "key_type");

  ProtoWriter int32_overflow;
  int32_overflow.int64_field(2, int64_t{1} << 33);
  expect_invalid(model_with_initializer(int32_overflow), "does not fit in int32");
}

}  // namespace
}  // namespace nxrt::onnx
