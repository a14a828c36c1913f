// The C++ wrapper's values (include/nxrt/nxrt_values.hpp) and string tensors: a map fed to DictVectorizer, ZipMap's
// sequence of maps read back, tensor sequences built and read, and C errors thrown as nxrt::cxx::Error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capi/one_node_model.h"
#include "nxrt/nxrt.hpp"

namespace {

namespace w = nxrt::onnx::write;
using nxrt::cxx::Session;
using nxrt::cxx::Tensor;
using nxrt::cxx::Value;

Session one_node(const std::string& op_type, std::vector<w::Attribute> attributes, w::ValueInfo input,
                 w::ValueInfo output, const std::string& domain) {
  return Session::from_bytes(nxrt::capi_test::one_node_model(op_type, std::move(attributes), std::move(input),
                                                             std::move(output), domain));
}

const w::ValueInfo kUntypedX{"X", 1, {}, false, false};
const w::ValueInfo kUntypedY{"Y", 1, {}, false, false};

TEST(CxxValues, MapsAndStringsThroughTheWrapper) {
  Tensor keys = Tensor::strings({"b", "a", "b"}, {3});
  EXPECT_EQ(keys.string_at(1), "a");
  std::vector<double> numbers{1.5, 2.5, 3.5};
  Tensor values = Tensor::wrap(numbers, {3});
  Value map = Value::map(keys, values);
  EXPECT_EQ(map.kind(), NXRT_VALUE_MAP);
  EXPECT_EQ(map.key_type(), NXRT_TYPE_STRING);
  EXPECT_EQ(map.element_type(), NXRT_TYPE_DOUBLE);
  ASSERT_EQ(map.size(), 2u);
  auto entries = map.map_entries();
  EXPECT_EQ(entries.first.string_at(0), "a");
  EXPECT_EQ(entries.second.to_vector<double>(), (std::vector<double>{2.5, 3.5}));

  w::Attribute vocabulary;
  vocabulary.name = "string_vocabulary";
  vocabulary.type = 8;  // STRINGS
  vocabulary.strings = {"a", "c", "b"};
  Session vectorizer = one_node("DictVectorizer", {vocabulary}, kUntypedX, {"Y", 11, {}, false}, "ai.onnx.ml");
  std::vector<Value> out = nxrt::cxx::run_values(vectorizer, {"X"}, {map});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().to_vector<double>(), (std::vector<double>{2.5, 0.0, 3.5}));

  std::vector<float> float_keys{1.0f};
  Tensor bad = Tensor::wrap(float_keys, {1});
  EXPECT_THROW(Value::map(bad, bad), nxrt::cxx::Error);
}

TEST(CxxValues, ZipMapRowsAndTensorSequences) {
  Session zipmap = one_node("ZipMap", {w::attr_ints("classlabels_int64s", {5, 3})}, {"X", 1, {int64_t{1}, int64_t{2}}},
                            kUntypedY, "ai.onnx.ml");
  std::vector<float> scores{0.4f, 0.6f};
  Tensor x = Tensor::wrap(scores, {1, 2});
  const Value x_value = Value::of(x);
  std::vector<Value> rows = nxrt::cxx::run_values(zipmap, {"X"}, {x_value});
  ASSERT_EQ(rows[0].kind(), NXRT_VALUE_MAP_SEQUENCE);
  ASSERT_EQ(rows[0].size(), 1u);
  const Value row = rows[0][0];
  auto entries = row.map_entries();
  EXPECT_EQ(entries.first.to_vector<int64_t>(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(entries.second.to_vector<float>(), (std::vector<float>{0.6f, 0.4f}));
  Value again = Value::map_sequence({row}, NXRT_TYPE_INT64, NXRT_TYPE_FLOAT);
  EXPECT_EQ(again.size(), 1u);

  Session length = one_node("SequenceLength", {}, kUntypedX, {"Y", 7, {}, true}, "");
  Value sequence = Value::sequence({x, x}, NXRT_TYPE_FLOAT);
  EXPECT_EQ(sequence.kind(), NXRT_VALUE_TENSOR_SEQUENCE);
  EXPECT_EQ(sequence[1].tensor().to_vector<float>(), scores);
  std::vector<Value> counted = nxrt::cxx::run_values(length, {"X"}, {sequence});
  EXPECT_EQ(counted[0].tensor().to_vector<int64_t>(), (std::vector<int64_t>{2}));
  EXPECT_THROW(nxrt::cxx::run_values(length, {"X", "Z"}, {sequence}), nxrt::cxx::Error);
}

}  // namespace
