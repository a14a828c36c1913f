// Writer -> parser round trips for every message kind and attribute type.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "onnx/model_proto.h"
#include "onnx/model_writer.h"
#include "onnx/onnx_test_models.h"
#include "onnx/wire_writer.h"

namespace nxrt::onnx {
namespace {

using wire::ProtoWriter;

// The parsed model views `bytes`, which must outlive it.
ModelProto parse_ok(const std::string& bytes) {
  auto parsed = parse_model(bytes);
  EXPECT_TRUE(parsed.has_value()) << parsed.status().to_string();
  return parsed.has_value() ? std::move(parsed).value() : ModelProto{};
}

bool points_into(std::string_view view, const std::string& buffer) {
  return view.data() >= buffer.data() && view.data() + view.size() <= buffer.data() + buffer.size();
}

// A model whose graph holds the single node given as encoded bytes.
std::string model_with_node(const ProtoWriter& node) {
  ProtoWriter graph;
  graph.message_field(1, node);
  graph.bytes_field(2, "g");
  ProtoWriter model;
  model.int64_field(1, 9);
  model.message_field(7, graph);
  return model.take();
}

TEST(ModelRoundTrip, ModelGraphNodesAndMetadata) {
  const std::string bytes = write::encode_model(testing::sample_model());
  const ModelProto model = parse_ok(bytes);
  EXPECT_EQ(model.ir_version, 10);
  EXPECT_EQ(model.producer_name, "nxrt-test");
  EXPECT_EQ(model.producer_version, "1.2");
  EXPECT_EQ(model.doc_string, "sample");
  ASSERT_EQ(model.opset_import.size(), 2u);
  EXPECT_EQ(model.opset_import[0].domain, "");
  EXPECT_EQ(model.opset_import[0].version, 21);
  EXPECT_EQ(model.opset_import[1].domain, "com.example");
  ASSERT_EQ(model.metadata_props.size(), 2u);
  EXPECT_EQ(model.metadata_props[1].key, "license");
  EXPECT_EQ(model.metadata_props[1].value, "MIT");
  EXPECT_TRUE(points_into(model.producer_name, bytes));

  ASSERT_TRUE(model.graph);
  const GraphProto& graph = *model.graph;
  EXPECT_EQ(graph.name, "main");
  ASSERT_EQ(graph.node.size(), 2u);
  EXPECT_EQ(graph.node[0].op_type, "Add");
  EXPECT_EQ(graph.node[0].name, "add0");
  EXPECT_EQ(graph.node[0].input, (std::vector<std::string_view>{"X", "W"}));
  EXPECT_EQ(graph.node[0].output, (std::vector<std::string_view>{"S"}));
  ASSERT_EQ(graph.node[1].attribute.size(), 1u);
  EXPECT_EQ(graph.node[1].attribute[0].name, "alpha");
  EXPECT_EQ(graph.node[1].attribute[0].type, AttributeProto::kFloat);
  EXPECT_FLOAT_EQ(graph.node[1].attribute[0].f, 0.5f);

  ASSERT_EQ(graph.input.size(), 1u);
  const ValueInfoProto& x = graph.input[0];
  EXPECT_EQ(x.name, "X");
  ASSERT_TRUE(x.has_type);
  EXPECT_EQ(x.type.kind, TypeProto::Kind::kTensor);
  EXPECT_EQ(x.type.elem_type, 1);
  ASSERT_TRUE(x.type.has_shape);
  ASSERT_EQ(x.type.shape.size(), 2u);
  EXPECT_FALSE(x.type.shape[0].has_value);
  EXPECT_EQ(x.type.shape[0].dim_param, "N");
  EXPECT_TRUE(x.type.shape[1].has_value);
  EXPECT_EQ(x.type.shape[1].dim_value, 3);
  ASSERT_EQ(graph.value_info.size(), 1u);
  EXPECT_TRUE(graph.value_info[0].has_type);
  EXPECT_FALSE(graph.value_info[0].type.has_shape);
  ASSERT_EQ(graph.output.size(), 1u);
  EXPECT_EQ(graph.output[0].name, "Y");
}

TEST(ModelRoundTrip, InitializerRawDataPointsIntoTheBuffer) {
  const std::string bytes = write::encode_model(testing::sample_model());
  const ModelProto model = parse_ok(bytes);
  ASSERT_EQ(model.graph->initializer.size(), 1u);
  const TensorProto& w = model.graph->initializer[0];
  EXPECT_EQ(w.name, "W");
  EXPECT_EQ(w.data_type, 1);
  EXPECT_EQ(w.dims, (std::vector<int64_t>{2, 3}));
  ASSERT_TRUE(w.has_raw_data);
  ASSERT_EQ(w.raw_data.size(), 6 * sizeof(float));
  EXPECT_TRUE(points_into(w.raw_data, bytes));
  float values[6];
  std::memcpy(values, w.raw_data.data(), sizeof(values));
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[5], 6.0f);
}

TEST(ModelRoundTrip, Functions) {
  const std::string bytes = write::encode_model(testing::sample_model());
  const ModelProto model = parse_ok(bytes);
  ASSERT_EQ(model.functions.size(), 1u);
  const FunctionProto& fn = model.functions[0];
  EXPECT_EQ(fn.name, "MyFn");
  EXPECT_EQ(fn.domain, "com.example");
  EXPECT_EQ(fn.input, (std::vector<std::string_view>{"a"}));
  EXPECT_EQ(fn.output, (std::vector<std::string_view>{"b"}));
  EXPECT_EQ(fn.attribute, (std::vector<std::string_view>{"k"}));
  ASSERT_EQ(fn.node.size(), 1u);
  EXPECT_EQ(fn.node[0].op_type, "Identity");
  ASSERT_EQ(fn.opset_import.size(), 1u);
  EXPECT_EQ(fn.opset_import[0].version, 21);
}

TEST(ModelRoundTrip, FunctionAttributeProtoOverloadAndValueInfo) {
  ProtoWriter attribute;
  attribute.bytes_field(1, "k");
  attribute.int64_field(20, AttributeProto::kInt);
  attribute.int64_field(3, 4);
  ProtoWriter value_info;
  value_info.bytes_field(1, "a");
  value_info.bytes_field(3, "doc");
  ProtoWriter function;
  function.bytes_field(1, "F");
  function.message_field(11, attribute);
  function.bytes_field(13, "v2");
  function.message_field(12, value_info);
  ProtoWriter model;
  model.message_field(25, function);
  const ModelProto parsed = parse_ok(model.bytes());
  ASSERT_EQ(parsed.functions.size(), 1u);
  const FunctionProto& fn = parsed.functions[0];
  EXPECT_EQ(fn.overload, "v2");
  ASSERT_EQ(fn.attribute_proto.size(), 1u);
  EXPECT_EQ(fn.attribute_proto[0].i, 4);
  ASSERT_EQ(fn.value_info.size(), 1u);
  EXPECT_EQ(fn.value_info[0].doc_string, "doc");
  EXPECT_FALSE(fn.value_info[0].has_type);
}

TEST(ModelRoundTrip, EveryWriterAttributeType) {
  write::Graph body;
  body.name = "body";
  body.nodes.push_back({"Identity", {"a"}, {"b"}, {}, "", ""});
  write::Attribute strings;
  strings.name = "strs";
  strings.type = AttributeProto::kStrings;
  strings.strings = {"x", "", "yz"};
  write::Attribute tensors;
  tensors.name = "ts";
  tensors.type = AttributeProto::kTensors;
  tensors.tensors = {write::int64_tensor("t0", {2}, {7, 8}), write::double_tensor("t1", {}, {2.5})};
  write::Attribute graphs;
  graphs.name = "gs";
  graphs.type = AttributeProto::kGraphs;
  graphs.graphs = {std::make_shared<write::Graph>(body), std::make_shared<write::Graph>(body)};
  write::Attribute ref;
  ref.name = "r";
  ref.type = AttributeProto::kInt;
  ref.ref_attr_name = "outer";

  write::Model model;
  model.graph.nodes.push_back({"Custom",
                               {"a"},
                               {"b"},
                               {write::attr_int("i", -5), write::attr_float("f", 1.25f), write::attr_string("s", "hi"),
                                write::attr_ints("is", {1, -2, 3}), write::attr_floats("fs", {0.5f, -1.5f}),
                                write::attr_tensor("t", write::float_tensor("c", {1}, {9.0f})),
                                write::attr_graph("g", body), strings, tensors, graphs, ref},
                               "n",
                               "com.custom"});
  const std::string bytes = write::encode_model(model);
  const ModelProto parsed = parse_ok(bytes);
  const NodeProto& node = parsed.graph->node.at(0);
  EXPECT_EQ(node.domain, "com.custom");
  ASSERT_EQ(node.attribute.size(), 11u);
  const auto& a = node.attribute;
  EXPECT_EQ(a[0].type, AttributeProto::kInt);
  EXPECT_EQ(a[0].i, -5);
  EXPECT_EQ(a[1].type, AttributeProto::kFloat);
  EXPECT_EQ(a[1].f, 1.25f);
  EXPECT_EQ(a[2].type, AttributeProto::kString);
  EXPECT_EQ(a[2].s, "hi");
  EXPECT_EQ(a[3].type, AttributeProto::kInts);
  EXPECT_EQ(a[3].ints, (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(a[4].type, AttributeProto::kFloats);
  EXPECT_EQ(a[4].floats, (std::vector<float>{0.5f, -1.5f}));
  EXPECT_EQ(a[5].type, AttributeProto::kTensor);
  ASSERT_TRUE(a[5].t);
  EXPECT_EQ(a[5].t->name, "c");
  EXPECT_TRUE(points_into(a[5].t->raw_data, bytes));
  EXPECT_EQ(a[6].type, AttributeProto::kGraph);
  ASSERT_TRUE(a[6].g);
  EXPECT_EQ(a[6].g->name, "body");
  EXPECT_EQ(a[6].g->node.at(0).op_type, "Identity");
  EXPECT_EQ(a[7].type, AttributeProto::kStrings);
  EXPECT_EQ(a[7].strings, (std::vector<std::string_view>{"x", "", "yz"}));
  EXPECT_EQ(a[8].type, AttributeProto::kTensors);
  ASSERT_EQ(a[8].tensors.size(), 2u);
  EXPECT_EQ(a[8].tensors[0].data_type, 7);
  EXPECT_EQ(a[8].tensors[1].dims.size(), 0u);
  EXPECT_EQ(a[8].tensors[1].raw_data.size(), 8u);
  EXPECT_EQ(a[9].type, AttributeProto::kGraphs);
  ASSERT_EQ(a[9].graphs.size(), 2u);
  EXPECT_EQ(a[9].graphs[1]->name, "body");
  EXPECT_EQ(a[10].ref_attr_name, "outer");
}

TEST(ModelRoundTrip, TypeProtoAttributesAndSparseTensorTag) {
  ProtoWriter tensor_type;
  tensor_type.int64_field(1, 7);
  ProtoWriter tp;
  tp.message_field(1, tensor_type);
  ProtoWriter attr_tp;
  attr_tp.bytes_field(1, "tp");
  attr_tp.int64_field(20, AttributeProto::kTypeProto);
  attr_tp.message_field(14, tp);
  ProtoWriter attr_tps;
  attr_tps.bytes_field(1, "tps");
  attr_tps.int64_field(20, AttributeProto::kTypeProtos);
  attr_tps.message_field(15, tp);
  attr_tps.message_field(15, tp);
  ProtoWriter sparse;
  sparse.bytes_field(1, "sp");
  sparse.int64_field(20, AttributeProto::kSparseTensor);
  sparse.bytes_field(22, "");
  ProtoWriter doc;
  doc.bytes_field(1, "d");
  doc.bytes_field(13, "attribute doc");
  doc.int64_field(3, 1);  // no type: inferred from the value field (IR version 1)
  ProtoWriter node;
  node.bytes_field(4, "Op");
  node.message_field(5, attr_tp);
  node.message_field(5, attr_tps);
  node.message_field(5, sparse);
  node.message_field(5, doc);
  node.bytes_field(6, "node doc");
  node.bytes_field(8, "overload1");
  const std::string bytes = model_with_node(node);
  const ModelProto model = parse_ok(bytes);
  const NodeProto& n = model.graph->node.at(0);
  EXPECT_EQ(n.doc_string, "node doc");
  EXPECT_EQ(n.overload, "overload1");
  ASSERT_EQ(n.attribute.size(), 4u);
  ASSERT_TRUE(n.attribute[0].tp);
  EXPECT_EQ(n.attribute[0].tp->kind, TypeProto::Kind::kTensor);
  EXPECT_EQ(n.attribute[0].tp->elem_type, 7);
  EXPECT_FALSE(n.attribute[0].tp->has_shape);
  ASSERT_EQ(n.attribute[1].type_protos.size(), 2u);
  EXPECT_EQ(n.attribute[1].type_protos[1].elem_type, 7);
  EXPECT_EQ(n.attribute[2].type, AttributeProto::kSparseTensor);
  EXPECT_EQ(n.attribute[3].type, AttributeProto::kInt);
  EXPECT_EQ(n.attribute[3].doc_string, "attribute doc");
}

TEST(ModelRoundTrip, SequenceMapOptionalAndSparseTypes) {
  ProtoWriter shape_dim;
  shape_dim.int64_field(1, 4);
  shape_dim.bytes_field(3, "denotation");
  ProtoWriter shape;
  shape.message_field(1, shape_dim);
  ProtoWriter float_tensor;
  float_tensor.int64_field(1, 1);
  float_tensor.message_field(2, shape);
  ProtoWriter tensor_tp;
  tensor_tp.message_field(1, float_tensor);
  ProtoWriter sequence;
  sequence.message_field(1, tensor_tp);
  ProtoWriter sequence_tp;
  sequence_tp.message_field(4, sequence);
  ProtoWriter map;
  map.int64_field(1, 8);
  map.message_field(2, sequence_tp);
  ProtoWriter map_tp;
  map_tp.message_field(5, map);
  map_tp.bytes_field(6, "MAP_DENOTATION");
  ProtoWriter optional;
  optional.message_field(1, map_tp);
  ProtoWriter optional_tp;
  optional_tp.message_field(9, optional);
  ProtoWriter sparse_tp;
  sparse_tp.message_field(8, float_tensor);

  ProtoWriter graph;
  for (const ProtoWriter* type : {&optional_tp, &sparse_tp}) {
    ProtoWriter info;
    info.bytes_field(1, "v");
    info.message_field(2, *type);
    graph.message_field(11, info);
  }
  ProtoWriter model;
  model.message_field(7, graph);
  const ModelProto parsed = parse_ok(model.bytes());
  ASSERT_EQ(parsed.graph->input.size(), 2u);
  const TypeProto& opt = parsed.graph->input[0].type;
  EXPECT_EQ(opt.kind, TypeProto::Kind::kOptional);
  ASSERT_TRUE(opt.element);
  const TypeProto& m = *opt.element;
  EXPECT_EQ(m.kind, TypeProto::Kind::kMap);
  EXPECT_EQ(m.map_key_type, 8);
  EXPECT_EQ(m.denotation, "MAP_DENOTATION");
  ASSERT_TRUE(m.element);
  EXPECT_EQ(m.element->kind, TypeProto::Kind::kSequence);
  ASSERT_TRUE(m.element->element);
  const TypeProto& t = *m.element->element;
  EXPECT_EQ(t.kind, TypeProto::Kind::kTensor);
  EXPECT_EQ(t.elem_type, 1);
  ASSERT_EQ(t.shape.size(), 1u);
  EXPECT_EQ(t.shape[0].dim_value, 4);
  const TypeProto& sparse_type = parsed.graph->input[1].type;
  EXPECT_EQ(sparse_type.kind, TypeProto::Kind::kSparseTensor);
  EXPECT_EQ(sparse_type.elem_type, 1);
  EXPECT_TRUE(sparse_type.has_shape);
}

TEST(ModelRoundTrip, TensorTypedDataFieldsAndExternalEntries) {
  ProtoWriter tensor;
  tensor.int64_field(1, 2);  // unpacked dims
  tensor.int64_field(1, 2);
  tensor.int64_field(2, 1);
  tensor.packed_floats(4, {1, 2});
  tensor.float_field(4, 3);
  tensor.packed_int64s(5, {-1, 2});
  tensor.bytes_field(6, "s0");
  tensor.bytes_field(6, "s1");
  tensor.packed_int64s(7, {int64_t{1} << 40});
  tensor.bytes_field(8, "typed");
  tensor.packed_doubles(10, {0.5});
  tensor.packed_int64s(11, {-1});
  tensor.bytes_field(12, "tensor doc");
  ProtoWriter segment;
  segment.int64_field(1, 0);
  segment.int64_field(2, 4);
  tensor.message_field(3, segment);
  ProtoWriter entry;
  entry.bytes_field(1, "location");
  entry.bytes_field(2, "w.bin");
  tensor.message_field(13, entry);
  tensor.int64_field(14, 0);
  ProtoWriter graph;
  graph.message_field(5, tensor);
  ProtoWriter model;
  model.message_field(7, graph);
  const ModelProto parsed = parse_ok(model.bytes());
  const TensorProto& t = parsed.graph->initializer.at(0);
  EXPECT_EQ(t.name, "typed");
  EXPECT_EQ(t.dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.float_data, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(t.int32_data, (std::vector<int32_t>{-1, 2}));
  EXPECT_EQ(t.string_data, (std::vector<std::string_view>{"s0", "s1"}));
  EXPECT_EQ(t.int64_data, (std::vector<int64_t>{int64_t{1} << 40}));
  EXPECT_EQ(t.double_data, (std::vector<double>{0.5}));
  EXPECT_EQ(t.uint64_data, (std::vector<uint64_t>{~uint64_t{0}}));
  EXPECT_EQ(t.doc_string, "tensor doc");
  EXPECT_FALSE(t.has_raw_data);
  ASSERT_EQ(t.external_data.size(), 1u);
  EXPECT_EQ(t.external_data[0].key, "location");
  EXPECT_EQ(t.external_data[0].value, "w.bin");
}

TEST(ModelRoundTrip, WriterExternalDataTensor) {
  write::Model model;
  write::Tensor w{"W", 1, {4}, "", {{"location", "w.bin"}, {"offset", "0"}, {"length", "16"}}};
  model.graph.initializers.push_back(w);
  const std::string bytes = write::encode_model(model);
  const ModelProto parsed = parse_ok(bytes);
  const TensorProto& t = parsed.graph->initializer.at(0);
  EXPECT_EQ(t.data_location, 1);
  EXPECT_FALSE(t.has_raw_data);
  ASSERT_EQ(t.external_data.size(), 3u);
  EXPECT_EQ(t.external_data[2].key, "length");
  EXPECT_EQ(t.external_data[2].value, "16");
}

TEST(ModelRoundTrip, UnknownFieldsOfEveryWireTypeAreSkipped) {
  std::string bytes = write::encode_model(testing::sample_model());
  ProtoWriter extra;
  extra.varint_field(100, 5);
  extra.fixed64_field(101, 1);
  extra.bytes_field(102, "unknown");
  extra.fixed32_field(103, 2);
  extra.bytes_field(20, "training info is ignored");
  bytes = extra.bytes() + bytes + extra.bytes();
  const ModelProto model = parse_ok(bytes);
  EXPECT_EQ(model.producer_name, "nxrt-test");
  EXPECT_EQ(model.graph->node.size(), 2u);
}

TEST(ModelRoundTrip, EmptyBufferIsAnEmptyModel) {
  const ModelProto model = parse_ok("");
  EXPECT_FALSE(model.graph);
  EXPECT_EQ(model.ir_version, 0);
}

TEST(FuzzSeeds, EveryCommittedSeedIsAValidModel) {
  const std::filesystem::path seeds =
      std::filesystem::path(NXRT_TEST_DATA_DIR).parent_path().parent_path() / "fuzz" / "seeds";
  ASSERT_TRUE(std::filesystem::is_directory(seeds)) << seeds;
  int count = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(seeds, error)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream contents;
    contents << in.rdbuf();
    const std::string bytes = contents.str();
    const ModelProto model = parse_ok(bytes);
    ASSERT_TRUE(model.graph) << entry.path();
    EXPECT_FALSE(model.graph->node.empty()) << entry.path();
    EXPECT_EQ(model.opset_import.size(), 1u) << entry.path();
    ++count;
  }
  EXPECT_GE(count, 5);
}

}  // namespace
}  // namespace nxrt::onnx
