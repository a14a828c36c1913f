#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

std::vector<float> iota_floats(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

void expect_invalid(const Expected<std::vector<Tensor>>& result, const std::vector<std::string>& fragments) {
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << result.status().message();
  for (const std::string& f : fragments) {
    EXPECT_NE(result.status().message().find(f), std::string::npos) << result.status().message() << " lacks " << f;
  }
}

TEST(GatherTest, AxesAndNegativeIndices) {
  const Tensor data = make_tensor<float>({3, 4}, iota_floats(12));
  const Tensor rows = run_one(NodeBuilder("Gather", 13).node(), {data, make_tensor<int64_t>({2}, {2, -3})});
  EXPECT_EQ(rows.shape(), (Shape{2, 4}));
  EXPECT_EQ(to_vector<float>(rows), (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3}));
  const Tensor cols = run_one(NodeBuilder("Gather", 11).attr_int("axis", -1).node(),
                              {data, make_tensor<int32_t>({2, 1}, {3, -4})});
  EXPECT_EQ(cols.shape(), (Shape{3, 2, 1}));
  EXPECT_EQ(to_vector<float>(cols), (std::vector<float>{3, 0, 7, 4, 11, 8}));
  // Scalar index drops the axis.
  const Tensor scalar = run_one(NodeBuilder("Gather", 1).attr_int("axis", 1).node(), {data, make_tensor<int64_t>({}, {1})});
  EXPECT_EQ(scalar.shape(), (Shape{3}));
  EXPECT_EQ(to_vector<float>(scalar), (std::vector<float>{1, 5, 9}));
  // Empty indices.
  EXPECT_EQ(run_one(NodeBuilder("Gather", 13).node(), {data, make_tensor<int64_t>({0}, {})}).shape(), (Shape{0, 4}));
}

TEST(GatherTest, StringsAndBool) {
  const Tensor s = make_tensor<std::string>({3}, {"a", "bb", "ccc"});
  EXPECT_EQ(to_vector<std::string>(run_one(NodeBuilder("Gather", 13).node(), {s, make_tensor<int64_t>({3}, {2, 0, 2})})),
            (std::vector<std::string>{"ccc", "a", "ccc"}));
  const Tensor b = make_tensor<bool>({2}, {true, false});
  EXPECT_EQ(to_vector<bool>(run_one(NodeBuilder("Gather", 13).node(), {b, make_tensor<int32_t>({2}, {1, 0})})),
            (std::vector<bool>{false, true}));
}

TEST(GatherTest, OutOfRangeIndexIsInvalidArgument) {
  const Tensor data = make_tensor<float>({3, 4}, iota_floats(12));
  expect_invalid(run_kernel(NodeBuilder("Gather", 13).name("g").node(), {data, make_tensor<int64_t>({2}, {1, 3})}),
                 {"Gather node 'g'", "value 3", "[-3, 2]"});
  expect_invalid(run_kernel(NodeBuilder("Gather", 13).node(), {data, make_tensor<int64_t>({1}, {-4})}), {"-4"});
  expect_invalid(run_kernel(NodeBuilder("Gather", 13).attr_int("axis", 2).node(), {data, make_tensor<int64_t>({1}, {0})}),
                 {"axis 2"});
  expect_invalid(run_kernel(NodeBuilder("Gather", 13).node(), {make_tensor<float>({0, 2}, {}), make_tensor<int64_t>({1}, {0})}),
                 {"value 0"});
  EXPECT_FALSE(run_kernel(NodeBuilder("Gather", 13).node(), {data, make_tensor<float>({1}, {0})}).has_value());
}

TEST(GatherTest, LargeParallelMatchesSerial) {
  const int64_t rows = 300, cols = 97;
  const Tensor data = make_tensor<float>({4, rows, cols}, iota_floats(static_cast<size_t>(4 * rows * cols)));
  std::vector<int64_t> idx(500);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>((i * 37) % rows) - (i % 2 ? rows : 0);
  const Tensor indices = make_tensor<int64_t>({500}, idx);
  const graph::Node node = NodeBuilder("Gather", 13).attr_int("axis", 1).node();
  const Tensor one = run_one(node, {data, indices}, 1);
  const Tensor three = run_one(node, {data, indices}, 3);
  EXPECT_EQ(to_vector<float>(one), to_vector<float>(three));
  const std::vector<float> out = to_vector<float>(three);
  EXPECT_EQ(out[static_cast<size_t>((2 * 500 + 1) * cols + 5)], static_cast<float>((2 * rows + 37) * cols + 5));
}

TEST(GatherElementsTest, SpecExamplesAndSmallerIndices) {
  const Tensor data = make_tensor<int32_t>({2, 2}, {1, 2, 3, 4});
  const Tensor y = run_one(NodeBuilder("GatherElements", 13).attr_int("axis", 1).node(),
                           {data, make_tensor<int64_t>({2, 2}, {0, 0, 1, 0})});
  EXPECT_EQ(to_vector<int32_t>(y), (std::vector<int32_t>{1, 1, 4, 3}));
  const Tensor d3 = make_tensor<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor z = run_one(NodeBuilder("GatherElements", 11).node(),
                           {d3, make_tensor<int32_t>({2, 3}, {1, 2, 0, 2, 0, -1})}, 3);
  EXPECT_EQ(to_vector<float>(z), (std::vector<float>{4, 8, 3, 7, 2, 9}));
  // Indices smaller than data in the non-axis dim.
  const Tensor w = run_one(NodeBuilder("GatherElements", 13).attr_int("axis", 0).node(),
                           {d3, make_tensor<int64_t>({1, 2}, {2, 1})});
  EXPECT_EQ(to_vector<float>(w), (std::vector<float>{7, 5}));
  expect_invalid(run_kernel(NodeBuilder("GatherElements", 13).name("ge").node(), {d3, make_tensor<int64_t>({1, 1}, {3})}),
                 {"GatherElements node 'ge'", "value 3"});
  expect_invalid(run_kernel(NodeBuilder("GatherElements", 13).attr_int("axis", 1).node(),
                            {d3, make_tensor<int64_t>({4, 1}, {0, 0, 0, 0})}),
                 {"dimension 0"});
}

TEST(GatherNDTest, BatchDimsAndTypes) {
  const Tensor data = make_tensor<int32_t>({2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("GatherND", 12).node(),
                                       {data, make_tensor<int64_t>({2, 2}, {0, 0, 1, 1})})),
            (std::vector<int32_t>{0, 3}));
  const Tensor rows = run_one(NodeBuilder("GatherND", 12).node(), {data, make_tensor<int64_t>({2, 1}, {1, -2})});
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<int32_t>(rows), (std::vector<int32_t>{2, 3, 0, 1}));
  const Tensor d3 = make_tensor<float>({2, 2, 2}, iota_floats(8));
  const Tensor b1 = run_one(NodeBuilder("GatherND", 13).attr_int("batch_dims", 1).node(),
                            {d3, make_tensor<int64_t>({2, 1}, {1, 0})}, 3);
  EXPECT_EQ(b1.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<float>(b1), (std::vector<float>{2, 3, 4, 5}));
  const Tensor s = make_tensor<std::string>({2, 2}, {"a", "b", "c", "d"});
  EXPECT_EQ(to_vector<std::string>(run_one(NodeBuilder("GatherND", 13).node(), {s, make_tensor<int64_t>({1, 2}, {1, 0})})),
            (std::vector<std::string>{"c"}));
  expect_invalid(run_kernel(NodeBuilder("GatherND", 13).name("gn").node(), {data, make_tensor<int64_t>({1, 2}, {0, 2})}),
                 {"GatherND node 'gn'", "value 2", "dimension 1"});
  expect_invalid(run_kernel(NodeBuilder("GatherND", 13).node(), {data, make_tensor<int64_t>({1, 3}, {0, 0, 0})}),
                 {"last dimension 3"});
  expect_invalid(run_kernel(NodeBuilder("GatherND", 13).attr_int("batch_dims", 1).node(),
                            {d3, make_tensor<int64_t>({3, 1}, {0, 0, 0})}),
                 {"batch dimension 0"});
  expect_invalid(run_kernel(NodeBuilder("GatherND", 13).attr_int("batch_dims", 2).node(),
                            {data, make_tensor<int64_t>({2, 1}, {0, 0})}),
                 {"batch_dims 2"});
}

TEST(ScatterElementsTest, NoneAndDeprecatedScatter) {
  const Tensor data = make_tensor<float>({3, 3}, std::vector<float>(9, 0.0f));
  const Tensor indices = make_tensor<int64_t>({2, 3}, {1, 0, 2, 0, 2, 1});
  const Tensor updates = make_tensor<float>({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f});
  const std::vector<float> expected{2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f};
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("ScatterElements", 11).node(), {data, indices, updates})), expected);
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Scatter", 10).node(), {data, indices, updates}, 3)), expected);
  EXPECT_EQ(find_kernel("", "Scatter", 13), nullptr);
  const Tensor row = make_tensor<std::string>({1, 5}, {"a", "b", "c", "d", "e"});
  const Tensor y = run_one(NodeBuilder("ScatterElements", 18).attr_int("axis", -1).node(),
                           {row, make_tensor<int32_t>({1, 2}, {1, -2}), make_tensor<std::string>({1, 2}, {"x", "y"})});
  EXPECT_EQ(to_vector<std::string>(y), (std::vector<std::string>{"a", "x", "c", "y", "e"}));
}

TEST(ScatterElementsTest, ReductionsWithDuplicates) {
  const Tensor data = make_tensor<float>({1, 5}, {1, 2, 3, 4, 5});
  const Tensor indices = make_tensor<int64_t>({1, 2}, {1, 1});
  const Tensor updates = make_tensor<float>({1, 2}, {1.1f, 2.1f});
  auto run = [&](const char* reduction, int opset = 18) {
    return to_vector<float>(run_one(NodeBuilder("ScatterElements", opset).attr_int("axis", 1)
                                        .attr_string("reduction", reduction).node(),
                                    {data, indices, updates}));
  };
  EXPECT_FLOAT_EQ(run("add", 16)[1], 5.2f);
  EXPECT_FLOAT_EQ(run("mul", 16)[1], 2.0f * 1.1f * 2.1f);
  EXPECT_FLOAT_EQ(run("max")[1], 2.1f);
  EXPECT_FLOAT_EQ(run("min")[1], 1.1f);
  EXPECT_FLOAT_EQ(run("none")[1], 2.1f);  // last duplicate wins
  // max/min are opset 18; reduction is ignored before 16.
  auto old = run_kernel(NodeBuilder("ScatterElements", 16).attr_string("reduction", "max").node(), {data, indices, updates});
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.status().code(), StatusCode::kInvalidGraph);
  EXPECT_FLOAT_EQ(run("add", 13)[1], 2.1f);
  // NaN propagates through max.
  const Tensor nan_updates = make_tensor<float>({1, 2}, {NAN, 0.0f});
  const Tensor m = run_one(NodeBuilder("ScatterElements", 18).attr_int("axis", 1).attr_string("reduction", "max").node(),
                           {data, indices, nan_updates});
  EXPECT_TRUE(std::isnan(to_vector<float>(m)[1]));
}

TEST(ScatterElementsTest, IntegerWrapBoolAndHalf) {
  const Tensor i8 = make_tensor<int8_t>({2}, {127, -128});
  const Tensor y = run_one(NodeBuilder("ScatterElements", 18).attr_string("reduction", "add").node(),
                           {i8, make_tensor<int64_t>({2}, {0, 1}), make_tensor<int8_t>({2}, {1, -1})});
  EXPECT_EQ(to_vector<int8_t>(y), (std::vector<int8_t>{-128, 127}));
  const Tensor u16 = make_tensor<uint16_t>({1}, {65535});
  const Tensor z = run_one(NodeBuilder("ScatterElements", 18).attr_string("reduction", "mul").node(),
                           {u16, make_tensor<int64_t>({1}, {0}), make_tensor<uint16_t>({1}, {65535})});
  EXPECT_EQ(to_vector<uint16_t>(z), (std::vector<uint16_t>{1}));
  const Tensor b = make_tensor<bool>({2}, {false, true});
  const Tensor bo = run_one(NodeBuilder("ScatterElements", 18).attr_string("reduction", "mul").node(),
                            {b, make_tensor<int64_t>({1}, {1}), make_tensor<bool>({1}, {false})});
  EXPECT_EQ(to_vector<bool>(bo), (std::vector<bool>{false, false}));
  const Tensor h = make_half_tensor<Float16>({2}, {1.5f, 2.0f});
  const Tensor ho = run_one(NodeBuilder("ScatterElements", 18).attr_string("reduction", "add").node(),
                            {h, make_tensor<int64_t>({2}, {1, 1}), make_half_tensor<Float16>({2}, {0.25f, 0.25f})});
  EXPECT_EQ(to_float_vector(ho), (std::vector<float>{1.5f, 2.5f}));
  // Strings add by concatenation; they have no product.
  const Tensor joined = run_one(NodeBuilder("ScatterElements", 18).attr_string("reduction", "add").node(),
                                {make_tensor<std::string>({1}, {"a"}), make_tensor<int64_t>({1}, {0}),
                                 make_tensor<std::string>({1}, {"b"})});
  EXPECT_EQ(to_vector<std::string>(joined), (std::vector<std::string>{"ab"}));
  auto strings = run_kernel(NodeBuilder("ScatterElements", 18).attr_string("reduction", "mul").node(),
                            {make_tensor<std::string>({1}, {"a"}), make_tensor<int64_t>({1}, {0}),
                             make_tensor<std::string>({1}, {"b"})});
  EXPECT_FALSE(strings.has_value());
}

TEST(ScatterElementsTest, RejectsBadInputs) {
  const Tensor data = make_tensor<float>({2, 3}, iota_floats(6));
  expect_invalid(run_kernel(NodeBuilder("ScatterElements", 18).name("se").attr_int("axis", 1).node(),
                            {data, make_tensor<int64_t>({1, 1}, {3}), make_tensor<float>({1, 1}, {0})}),
                 {"ScatterElements node 'se'", "value 3", "[-3, 2]"});
  expect_invalid(run_kernel(NodeBuilder("ScatterElements", 18).node(),
                            {data, make_tensor<int64_t>({1, 1}, {0}), make_tensor<float>({1, 2}, {0, 0})}),
                 {"updates"});
  expect_invalid(run_kernel(NodeBuilder("ScatterElements", 18).attr_int("axis", 1).node(),
                            {data, make_tensor<int64_t>({3, 1}, {0, 0, 0}), make_tensor<float>({3, 1}, {0, 0, 0})}),
                 {"dimension 0"});
}

TEST(ScatterElementsTest, LargeParallelMatchesSerial) {
  const int64_t rows = 64, cols = 3000;
  const Tensor data = make_tensor<float>({rows, cols}, std::vector<float>(static_cast<size_t>(rows * cols), 1.0f));
  std::vector<int64_t> idx(static_cast<size_t>(rows * cols));
  std::vector<float> upd(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    idx[i] = static_cast<int64_t>((i * 7) % 5);
    upd[i] = static_cast<float>(i % 13);
  }
  const std::vector<Tensor> inputs{data, make_tensor<int64_t>({rows, cols}, idx), make_tensor<float>({rows, cols}, upd)};
  for (const char* reduction : {"none", "add", "max"}) {
    const graph::Node node = NodeBuilder("ScatterElements", 18).attr_string("reduction", reduction).node();
    EXPECT_EQ(to_vector<float>(run_one(node, inputs, 1)), to_vector<float>(run_one(node, inputs, 3))) << reduction;
  }
}

TEST(ScatterNDTest, SpecExamplesAndReductions) {
  const Tensor data = make_tensor<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor indices = make_tensor<int64_t>({4, 1}, {4, 3, 1, 7});
  const Tensor updates = make_tensor<float>({4}, {9, 10, 11, 12});
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("ScatterND", 11).node(), {data, indices, updates})),
            (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
  const Tensor dup = make_tensor<int64_t>({2, 1}, {0, -8});
  const Tensor dup_upd = make_tensor<float>({2}, {5, 6});
  auto run = [&](const char* reduction) {
    return to_vector<float>(
        run_one(NodeBuilder("ScatterND", 18).attr_string("reduction", reduction).node(), {data, dup, dup_upd}))[0];
  };
  EXPECT_EQ(run("add"), 12.0f);
  EXPECT_EQ(run("mul"), 30.0f);
  EXPECT_EQ(run("max"), 6.0f);
  EXPECT_EQ(run("min"), 1.0f);
  // Slices: replace whole rows of a matrix.
  const Tensor m = make_tensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor y = run_one(NodeBuilder("ScatterND", 16).attr_string("reduction", "add").node(),
                           {m, make_tensor<int32_t>({1, 1}, {1}), make_tensor<int64_t>({1, 3}, {INT64_MAX, 1, 1})}, 3);
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{1, 2, 3, INT64_MIN + 3, 6, 7}));
  // Empty indices leave the data unchanged.
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("ScatterND", 18).node(),
                                     {data, make_tensor<int64_t>({0, 1}, {}), make_tensor<float>({0}, {})})),
            to_vector<float>(data));
}

TEST(ScatterNDTest, RejectsBadInputs) {
  const Tensor data = make_tensor<float>({2, 3}, iota_floats(6));
  expect_invalid(run_kernel(NodeBuilder("ScatterND", 18).name("sn").node(),
                            {data, make_tensor<int64_t>({1, 2}, {1, 3}), make_tensor<float>({1}, {0})}),
                 {"ScatterND node 'sn'", "value 3", "dimension 1"});
  expect_invalid(run_kernel(NodeBuilder("ScatterND", 18).node(),
                            {data, make_tensor<int64_t>({1, 1}, {1}), make_tensor<float>({1, 2}, {0, 0})}),
                 {"updates", "[1,3]"});
  expect_invalid(run_kernel(NodeBuilder("ScatterND", 18).node(),
                            {data, make_tensor<int64_t>({1, 3}, {0, 0, 0}), make_tensor<float>({1}, {0})}),
                 {"last dimension 3"});
}

TEST(ScatterNDTest, LargeSlicesParallelMatchesSerial) {
  const int64_t rows = 16, cols = 40000;
  const Tensor data = make_tensor<float>({rows, cols}, std::vector<float>(static_cast<size_t>(rows * cols), 1.0f));
  std::vector<int64_t> idx{3, 3, 5, -1};
  std::vector<float> upd(static_cast<size_t>(4 * cols));
  for (size_t i = 0; i < upd.size(); ++i) upd[i] = static_cast<float>(i % 11);
  const std::vector<Tensor> inputs{data, make_tensor<int64_t>({4, 1}, idx), make_tensor<float>({4, cols}, upd)};
  const graph::Node node = NodeBuilder("ScatterND", 18).attr_string("reduction", "add").node();
  const std::vector<float> one = to_vector<float>(run_one(node, inputs, 1));
  EXPECT_EQ(one, to_vector<float>(run_one(node, inputs, 3)));
  EXPECT_EQ(one[static_cast<size_t>(3 * cols + 2)], 1.0f + 2.0f + static_cast<float>((cols + 2) % 11));
  EXPECT_EQ(one[static_cast<size_t>(15 * cols)], 1.0f + static_cast<float>((3 * cols) % 11));
}

}  // namespace
}  // namespace nxrt::cpu::testing
