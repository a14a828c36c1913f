// The C API's string tensors and values of every kind (include/nxrt/nxrt.h, src/capi/c_api_value.cpp): maps fed to
// DictVectorizer and CastMap, ZipMap's sequence of maps read back, tensor sequences in and out, string outputs of
// nxrt_session_run, type strings, and the refusals of malformed arguments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capi/capi_test_util.h"
#include "capi/one_node_model.h"
#include "nxrt/nxrt.h"
#include "onnx/model_writer.h"

namespace {

namespace w = nxrt::onnx::write;
using nxrt::capi_test::StatusPtr;

constexpr int32_t kFloat = 1;

struct SessionDeleter {
  void operator()(NxrtSession* session) const { nxrt_release_session(session); }
};
struct ValueDeleter {
  void operator()(NxrtValue* value) const { nxrt_release_value(value); }
};
struct TensorDeleter {
  void operator()(NxrtTensor* tensor) const { nxrt_release_tensor(tensor); }
};
using SessionPtr = std::unique_ptr<NxrtSession, SessionDeleter>;
using ValuePtr = std::unique_ptr<NxrtValue, ValueDeleter>;
using TensorPtr = std::unique_ptr<NxrtTensor, TensorDeleter>;

// One node of `op_type` from input X to output Y (untyped unless given), ai.onnx.ml ops in their domain.
SessionPtr one_node_session(const std::string& op_type, std::vector<w::Attribute> attributes, w::ValueInfo input,
                            w::ValueInfo output, const std::string& domain = "ai.onnx.ml") {
  const std::string bytes =
      nxrt::capi_test::one_node_model(op_type, std::move(attributes), std::move(input), std::move(output), domain);
  NxrtSession* session = nullptr;
  StatusPtr status(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), nullptr, &session));
  EXPECT_EQ(status, nullptr) << nxrt_status_string(status.get());
  return SessionPtr(session);
}

w::ValueInfo untyped(const char* name) { return {name, kFloat, {}, false, false}; }

w::Attribute strings_attribute(std::string name, std::vector<std::string> values) {
  w::Attribute attribute;
  attribute.name = std::move(name);
  attribute.type = 8;  // AttributeProto.STRINGS
  attribute.strings = std::move(values);
  return attribute;
}

template <class T>
TensorPtr vector_tensor(NxrtElementType type, std::vector<T>& values) {
  const int64_t dims[1] = {static_cast<int64_t>(values.size())};
  NxrtTensor* tensor = nullptr;
  StatusPtr status(nxrt_create_tensor_with_data(type, dims, 1, values.data(), values.size() * sizeof(T), &tensor));
  EXPECT_EQ(status, nullptr) << nxrt_status_string(status.get());
  return TensorPtr(tensor);
}

TensorPtr string_tensor(const std::vector<std::string>& strings) {
  std::vector<const char*> data;
  std::vector<size_t> lengths;
  for (const std::string& s : strings) {
    data.push_back(s.data());
    lengths.push_back(s.size());
  }
  const int64_t dims[1] = {static_cast<int64_t>(strings.size())};
  NxrtTensor* tensor = nullptr;
  StatusPtr status(nxrt_create_string_tensor(dims, 1, data.data(), lengths.data(), &tensor));
  EXPECT_EQ(status, nullptr) << nxrt_status_string(status.get());
  return TensorPtr(tensor);
}

std::vector<std::string> strings_of(const NxrtTensor* tensor) {
  int64_t count = 0;
  EXPECT_EQ(nxrt_tensor_get_element_count(tensor, &count), nullptr);
  std::vector<std::string> out;
  for (int64_t i = 0; i < count; ++i) {
    const char* data = nullptr;
    size_t length = 0;
    StatusPtr status(nxrt_tensor_get_string(tensor, i, &data, &length));
    EXPECT_EQ(status, nullptr) << nxrt_status_string(status.get());
    out.emplace_back(data, length);
  }
  return out;
}

template <class T>
std::vector<T> values_of(const NxrtTensor* tensor) {
  int64_t count = 0;
  void* data = nullptr;
  EXPECT_EQ(nxrt_tensor_get_element_count(tensor, &count), nullptr);
  EXPECT_EQ(nxrt_tensor_get_data(tensor, &data), nullptr);
  return std::vector<T>(static_cast<const T*>(data), static_cast<const T*>(data) + count);
}

ValuePtr run_one(const NxrtSession* session, const NxrtValue* input) {
  const char* names[1] = {"X"};
  NxrtValue* output = nullptr;
  StatusPtr status(nxrt_session_run_values(session, nullptr, names, &input, 1, nullptr, 1, &output));
  EXPECT_EQ(status, nullptr) << nxrt_status_string(status.get());
  return ValuePtr(output);
}

TEST(CApiValues, StringTensorsHoldAnyBytesAndRunThroughNxrtSessionRun) {
  const std::string with_nul("a\0b", 3);
  TensorPtr strings = string_tensor({"", with_nul, "\xc3\xa9t\xc3\xa9"});
  EXPECT_EQ(strings_of(strings.get()), (std::vector<std::string>{"", with_nul, "\xc3\xa9t\xc3\xa9"}));
  void* data = nullptr;
  StatusPtr raw(nxrt_tensor_get_data(strings.get(), &data));
  EXPECT_EQ(nxrt_status_code(raw.get()), NXRT_INVALID_ARGUMENT);

  SessionPtr identity = one_node_session("Identity", {}, {"X", 8, {int64_t{3}}}, {"Y", 8, {int64_t{3}}}, "");
  ASSERT_TRUE(identity);
  const char* names[1] = {"X"};
  const NxrtTensor* inputs[1] = {strings.get()};
  NxrtTensor* output = nullptr;
  ASSERT_NXRT_OK(nxrt_session_run(identity.get(), nullptr, names, inputs, 1, nullptr, 1, &output));
  TensorPtr owned(output);
  EXPECT_EQ(strings_of(output), strings_of(strings.get()));
  const char* type = nullptr;
  ASSERT_NXRT_OK(nxrt_session_get_output_type(identity.get(), 0, &type));
  EXPECT_STREQ(type, "tensor(string)");

  const char* element = nullptr;
  size_t length = 0;
  StatusPtr past_end(nxrt_tensor_get_string(strings.get(), 3, &element, &length));
  EXPECT_EQ(nxrt_status_code(past_end.get()), NXRT_INVALID_ARGUMENT);
  std::vector<float> floats{1.0f};
  TensorPtr numbers = vector_tensor(NXRT_TYPE_FLOAT, floats);
  StatusPtr not_strings(nxrt_tensor_get_string(numbers.get(), 0, &element, &length));
  EXPECT_EQ(nxrt_status_code(not_strings.get()), NXRT_INVALID_ARGUMENT);
  const char* with_null[2] = {"x", nullptr};
  const int64_t two[1] = {2};
  NxrtTensor* refused = nullptr;
  StatusPtr null_string(nxrt_create_string_tensor(two, 1, with_null, nullptr, &refused));
  EXPECT_EQ(nxrt_status_code(null_string.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_EQ(refused, nullptr);
}

TEST(CApiValues, MapsFeedDictVectorizerAndCastMap) {
  std::vector<int64_t> keys{4, 1, 4};
  std::vector<float> values{2.5f, -1.0f, 3.0f};
  TensorPtr key_tensor = vector_tensor(NXRT_TYPE_INT64, keys);
  TensorPtr value_tensor = vector_tensor(NXRT_TYPE_FLOAT, values);
  NxrtValue* map = nullptr;
  ASSERT_NXRT_OK(nxrt_create_map_value(key_tensor.get(), value_tensor.get(), &map));
  ValuePtr owned_map(map);
  NxrtValueKind kind{};
  ASSERT_NXRT_OK(nxrt_value_get_kind(map, &kind));
  EXPECT_EQ(kind, NXRT_VALUE_MAP);
  size_t entries = 0;
  ASSERT_NXRT_OK(nxrt_value_get_count(map, &entries));
  EXPECT_EQ(entries, 2u);  // keys sorted and unique, the last value of key 4 kept
  NxrtTensor* sorted_keys = nullptr;
  NxrtTensor* sorted_values = nullptr;
  ASSERT_NXRT_OK(nxrt_value_get_map(map, &sorted_keys, &sorted_values));
  TensorPtr k(sorted_keys), v(sorted_values);
  EXPECT_EQ(values_of<int64_t>(sorted_keys), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(values_of<float>(sorted_values), (std::vector<float>{-1.0f, 3.0f}));

  SessionPtr vectorizer = one_node_session("DictVectorizer", {w::attr_ints("int64_vocabulary", {7, 1, 4})},
                                           untyped("X"), {"Y", kFloat, {}, false});
  ASSERT_TRUE(vectorizer);
  ValuePtr vectorized = run_one(vectorizer.get(), map);
  ASSERT_TRUE(vectorized);
  NxrtTensor* dense = nullptr;
  ASSERT_NXRT_OK(nxrt_value_get_tensor(vectorized.get(), &dense));
  TensorPtr owned_dense(dense);
  EXPECT_EQ(values_of<float>(dense), (std::vector<float>{0.0f, -1.0f, 3.0f}));

  SessionPtr cast = one_node_session("CastMap", {w::attr_string("cast_to", "TO_STRING")}, untyped("X"),
                                     {"Y", 8, {}, false});
  ASSERT_TRUE(cast);
  ValuePtr text = run_one(cast.get(), map);
  ASSERT_TRUE(text);
  NxrtTensor* text_tensor = nullptr;
  ASSERT_NXRT_OK(nxrt_value_get_tensor(text.get(), &text_tensor));
  TensorPtr owned_text(text_tensor);
  EXPECT_EQ(strings_of(text_tensor), (std::vector<std::string>{"-1.000000", "3.000000"}));

  // Refusals: keys of another length, float keys, a map read as a tensor.
  std::vector<float> float_keys{1.0f, 2.0f};
  TensorPtr bad_keys = vector_tensor(NXRT_TYPE_FLOAT, float_keys);
  NxrtValue* refused = nullptr;
  StatusPtr float_map(nxrt_create_map_value(bad_keys.get(), value_tensor.get(), &refused));
  EXPECT_EQ(nxrt_status_code(float_map.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_EQ(refused, nullptr);
  NxrtTensor* not_a_tensor = nullptr;
  StatusPtr map_as_tensor(nxrt_value_get_tensor(map, &not_a_tensor));
  EXPECT_EQ(nxrt_status_code(map_as_tensor.get()), NXRT_INVALID_ARGUMENT);
}

TEST(CApiValues, ZipMapReturnsASequenceOfMapsAndMapSequencesAreBuilt) {
  SessionPtr zipmap = one_node_session("ZipMap", {strings_attribute("classlabels_strings", {"b", "a"})},
                                       {"X", kFloat, {int64_t{2}, int64_t{2}}}, untyped("Y"));
  ASSERT_TRUE(zipmap);
  std::vector<float> scores{0.25f, 0.75f, 0.5f, 0.5f};
  const int64_t dims[2] = {2, 2};
  NxrtTensor* x = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 2, scores.data(), sizeof(float) * 4, &x));
  TensorPtr owned_x(x);
  NxrtValue* input = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor_value(x, &input));
  ValuePtr owned_input(input);
  ValuePtr rows = run_one(zipmap.get(), input);
  ASSERT_TRUE(rows);
  NxrtValueKind kind{};
  NxrtElementType key_type{}, value_type{};
  ASSERT_NXRT_OK(nxrt_value_get_kind(rows.get(), &kind));
  ASSERT_NXRT_OK(nxrt_value_get_types(rows.get(), &key_type, &value_type));
  EXPECT_EQ(kind, NXRT_VALUE_MAP_SEQUENCE);
  EXPECT_EQ(key_type, NXRT_TYPE_STRING);
  EXPECT_EQ(value_type, NXRT_TYPE_FLOAT);
  size_t count = 0;
  ASSERT_NXRT_OK(nxrt_value_get_count(rows.get(), &count));
  ASSERT_EQ(count, 2u);
  NxrtValue* first = nullptr;
  ASSERT_NXRT_OK(nxrt_value_get_element(rows.get(), 0, &first));
  ValuePtr owned_first(first);
  NxrtTensor* keys = nullptr;
  NxrtTensor* values = nullptr;
  ASSERT_NXRT_OK(nxrt_value_get_map(first, &keys, &values));
  TensorPtr owned_keys(keys), owned_values(values);
  EXPECT_EQ(strings_of(keys), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(values_of<float>(values), (std::vector<float>{0.75f, 0.25f}));
  NxrtValue* past_end = nullptr;
  StatusPtr beyond(nxrt_value_get_element(rows.get(), 2, &past_end));
  EXPECT_EQ(nxrt_status_code(beyond.get()), NXRT_INVALID_ARGUMENT);
  // nxrt_session_run returns tensors only and points at the values call (run_values).
  const char* names[1] = {"X"};
  const NxrtTensor* plain[1] = {x};
  NxrtTensor* tensor_out = nullptr;
  StatusPtr needs_values(nxrt_session_run(zipmap.get(), nullptr, names, plain, 1, nullptr, 1, &tensor_out));
  ASSERT_NE(needs_values, nullptr);
  EXPECT_NE(std::string(nxrt_status_message(needs_values.get())).find("run_values"), std::string::npos)
      << nxrt_status_message(needs_values.get());
  EXPECT_EQ(tensor_out, nullptr);

  // The same kind of value built by the caller: two maps, then a map of another type refused.
  const NxrtValue* maps[2] = {first, first};
  NxrtValue* sequence = nullptr;
  ASSERT_NXRT_OK(nxrt_create_map_sequence_value(maps, 2, NXRT_TYPE_STRING, NXRT_TYPE_FLOAT, &sequence));
  ValuePtr owned_sequence(sequence);
  ASSERT_NXRT_OK(nxrt_value_get_count(sequence, &count));
  EXPECT_EQ(count, 2u);
  NxrtValue* refused = nullptr;
  StatusPtr wrong_types(nxrt_create_map_sequence_value(maps, 2, NXRT_TYPE_INT64, NXRT_TYPE_FLOAT, &refused));
  EXPECT_EQ(nxrt_status_code(wrong_types.get()), NXRT_INVALID_ARGUMENT);
  StatusPtr not_maps(nxrt_create_map_sequence_value(const_cast<const NxrtValue* const*>(&input), 1,
                                                    NXRT_TYPE_STRING, NXRT_TYPE_FLOAT, &refused));
  EXPECT_EQ(nxrt_status_code(not_maps.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_EQ(refused, nullptr);
}

TEST(CApiValues, TensorSequencesGoInAndComeOutIndependentOfTheInputs) {
  std::vector<float> a{1.0f, 2.0f}, b{3.0f};
  TensorPtr ta = vector_tensor(NXRT_TYPE_FLOAT, a), tb = vector_tensor(NXRT_TYPE_FLOAT, b);
  const NxrtTensor* tensors[2] = {ta.get(), tb.get()};
  NxrtValue* sequence = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor_sequence_value(tensors, 2, NXRT_TYPE_FLOAT, &sequence));
  ValuePtr owned(sequence);

  SessionPtr length = one_node_session("SequenceLength", {}, untyped("X"), {"Y", 7, {}, true}, "");
  ASSERT_TRUE(length);
  ValuePtr counted = run_one(length.get(), sequence);
  ASSERT_TRUE(counted);
  NxrtTensor* count_tensor = nullptr;
  ASSERT_NXRT_OK(nxrt_value_get_tensor(counted.get(), &count_tensor));
  TensorPtr owned_count(count_tensor);
  EXPECT_EQ(values_of<int64_t>(count_tensor), (std::vector<int64_t>{2}));

  SessionPtr identity = one_node_session("Identity", {}, untyped("X"), untyped("Y"), "");
  ASSERT_TRUE(identity);
  ValuePtr same = run_one(identity.get(), sequence);
  ASSERT_TRUE(same);
  NxrtValue* element = nullptr;
  ASSERT_NXRT_OK(nxrt_value_get_element(same.get(), 0, &element));
  ValuePtr owned_element(element);
  NxrtTensor* copy = nullptr;
  ASSERT_NXRT_OK(nxrt_value_get_tensor(element, &copy));
  TensorPtr owned_copy(copy);
  void* copy_data = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_data(copy, &copy_data));
  EXPECT_NE(copy_data, static_cast<void*>(a.data()));  // outputs never share the caller's memory
  EXPECT_EQ(values_of<float>(copy), a);

  const NxrtTensor* mixed[2] = {ta.get(), count_tensor};
  NxrtValue* refused = nullptr;
  StatusPtr mixed_types(nxrt_create_tensor_sequence_value(mixed, 2, NXRT_TYPE_FLOAT, &refused));
  EXPECT_EQ(nxrt_status_code(mixed_types.get()), NXRT_INVALID_ARGUMENT);
  NxrtValue* empty = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor_sequence_value(nullptr, 0, NXRT_TYPE_INT32, &empty));
  ValuePtr owned_empty(empty);
  NxrtElementType type{};
  ASSERT_NXRT_OK(nxrt_value_get_types(empty, nullptr, &type));
  EXPECT_EQ(type, NXRT_TYPE_INT32);
}

TEST(CApiValues, TypeStringsOfInputsAndOutputs) {
  SessionPtr zipmap = one_node_session("ZipMap", {w::attr_ints("classlabels_int64s", {1, 2})},
                                       {"X", kFloat, {int64_t{1}, int64_t{2}}}, untyped("Y"));
  ASSERT_TRUE(zipmap);
  const char* type = nullptr;
  ASSERT_NXRT_OK(nxrt_session_get_input_type(zipmap.get(), 0, &type));
  EXPECT_STREQ(type, "tensor(float)");
  StatusPtr out_of_range(nxrt_session_get_input_type(zipmap.get(), 1, &type));
  EXPECT_EQ(nxrt_status_code(out_of_range.get()), NXRT_INVALID_ARGUMENT);
  const NxrtApi* api = nxrt_get_api(4);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->session_run_values, &nxrt_session_run_values);
  EXPECT_EQ(api->create_map_value, &nxrt_create_map_value);
}

}  // namespace
