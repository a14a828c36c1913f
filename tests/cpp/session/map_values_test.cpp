// Map values through a whole session (core/value.h, core/map_value.h, ep/cpu/ml/ml_maps.cpp): ZipMap's sequence of
// maps, maps fed to DictVectorizer and CastMap, sorted_map's ordering and refusals, and run() refusing map outputs.
#include <gtest/gtest.h>

#include "core/map_value.h"
#include "onnx/model_writer.h"
#include "session/session.h"

namespace nxrt {
namespace {

namespace w = onnx::write;

constexpr int32_t kFloat = 1;

std::unique_ptr<Session> create(const w::Model& model) {
  auto session = Session::create_from_bytes(w::encode_model(model));
  EXPECT_TRUE(session.has_value()) << session.status().to_string();
  return session ? std::move(session).value() : nullptr;
}

w::Model ml_model(std::string op_type, std::vector<w::Attribute> attributes, std::vector<w::ValueInfo> inputs,
                  std::vector<w::ValueInfo> outputs) {
  w::Node node;
  node.op_type = std::move(op_type);
  node.inputs = {"X"};
  node.outputs = {outputs[0].name};
  node.attributes = std::move(attributes);
  node.domain = "ai.onnx.ml";
  w::Model model;
  model.opset_imports = {{"", 17}, {"ai.onnx.ml", 1}};
  model.graph.nodes = {std::move(node)};
  model.graph.inputs = std::move(inputs);
  model.graph.outputs = std::move(outputs);
  return model;
}

template <class T>
Tensor vector_tensor(DataType type, const std::vector<T>& values) {
  Tensor t = Tensor::allocate(type, Shape{static_cast<int64_t>(values.size())}).value();
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}

template <class T>
std::vector<T> values_of(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

TEST(MapValues, SortedMapOrdersKeysAndKeepsTheLastValueOfARepeatedKey) {
  auto map = sorted_map(vector_tensor<int64_t>(DataType::kInt64, {5, -1, 5, 3}),
                        vector_tensor<std::string>(DataType::kString, {"a", "b", "c", "d"}));
  ASSERT_TRUE(map.has_value()) << map.status().to_string();
  EXPECT_EQ(values_of<int64_t>(map->keys), (std::vector<int64_t>{-1, 3, 5}));
  EXPECT_EQ(values_of<std::string>(map->values), (std::vector<std::string>{"b", "d", "c"}));
  EXPECT_FALSE(sorted_map(vector_tensor<float>(DataType::kFloat32, {1}), vector_tensor<float>(DataType::kFloat32, {1}))
                   .has_value());
  EXPECT_FALSE(sorted_map(vector_tensor<int64_t>(DataType::kInt64, {1, 2}),
                          vector_tensor<float>(DataType::kFloat32, {1}))
                   .has_value());
}

TEST(MapValues, ZipMapGivesOneMapPerRowWithSortedLabels) {
  w::ValueInfo untyped{"Z", kFloat, {}, false, false};
  auto session = create(ml_model("ZipMap", {w::attr_ints("classlabels_int64s", {30, 10, 20})},
                                 {{"X", kFloat, {int64_t{2}, int64_t{3}}}}, {untyped}));
  ASSERT_TRUE(session);
  Tensor x = Tensor::allocate(DataType::kFloat32, Shape{2, 3}).value();
  const float data[] = {0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f};
  std::copy(std::begin(data), std::end(data), x.data<float>());
  auto outputs = session->run_values({{"X"}}, std::vector<Value>{x}, {});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  const Value& z = (*outputs)[0];
  ASSERT_TRUE(z.is_map_sequence());
  ASSERT_EQ(z.maps().size(), 2u);
  EXPECT_EQ(values_of<int64_t>(z.maps()[1].keys), (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(values_of<float>(z.maps()[1].values), (std::vector<float>{0.25f, 0.25f, 0.5f}));
  EXPECT_EQ(values_of<float>(z.maps()[0].values), (std::vector<float>{0.2f, 0.7f, 0.1f}));
  auto tensors = session->run({{"X"}}, {{x}}, {});
  ASSERT_FALSE(tensors.has_value());
  EXPECT_NE(tensors.status().message().find("a map"), std::string::npos);
  Tensor wrong = Tensor::allocate(DataType::kFloat32, Shape{2, 4}).value();
  auto refused = session->run_values({{"X"}}, std::vector<Value>{wrong}, {});
  ASSERT_FALSE(refused.has_value());
}

TEST(MapValues, DictVectorizerAndCastMapReadAMapFeed) {
  w::ValueInfo untyped_in{"X", kFloat, {}, false, false};
  auto vectorizer = create(ml_model("DictVectorizer", {w::attr_ints("int64_vocabulary", {7, 1, 4})},
                                    {untyped_in}, {{"Y", kFloat, {}, false}}));
  ASSERT_TRUE(vectorizer);
  auto map = sorted_map(vector_tensor<int64_t>(DataType::kInt64, {4, 1}),
                        vector_tensor<float>(DataType::kFloat32, {2.5f, -1.0f}));
  ASSERT_TRUE(map.has_value());
  auto vectorized = vectorizer->run_values({{"X"}}, std::vector<Value>{Value::map(*map)}, {});
  ASSERT_TRUE(vectorized) << vectorized.status().to_string();
  EXPECT_EQ((*vectorized)[0].tensor().shape(), (Shape{1, 3}));
  EXPECT_EQ(values_of<float>((*vectorized)[0].tensor()), (std::vector<float>{0.0f, -1.0f, 2.5f}));
  auto not_a_map = vectorizer->run_values({{"X"}}, std::vector<Value>{vector_tensor<float>(DataType::kFloat32, {1})},
                                          {});
  ASSERT_FALSE(not_a_map.has_value());

  auto cast = create(ml_model("CastMap",
                              {w::attr_string("cast_to", "TO_STRING"), w::attr_string("map_form", "SPARSE"),
                               w::attr_int("max_map", 3)},
                              {untyped_in}, {{"Y", 8, {}, false}}));
  ASSERT_TRUE(cast);
  auto strings = cast->run_values({{"X"}}, std::vector<Value>{Value::map(*map)}, {});
  ASSERT_TRUE(strings) << strings.status().to_string();
  EXPECT_EQ(values_of<std::string>((*strings)[0].tensor()), (std::vector<std::string>{"0.f", "-1.000000", "0.f"}));
}

}  // namespace
}  // namespace nxrt
