#include <cmath>
#include <limits>
#include <string>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

graph::Node with_outputs(graph::Node node, size_t count) {
  node.outputs.clear();
  for (size_t i = 0; i < count; ++i) node.outputs.push_back(100 + static_cast<int>(i));
  return node;
}

TEST(NonZeroTest, CoordinatesRowMajor) {
  Tensor y = run_one(NodeBuilder("NonZero", 13).node(), {make_tensor<float>({2, 2}, {1, 0, NAN, -2})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{0, 1, 1, 0, 0, 1}));
  Tensor s = run_one(NodeBuilder("NonZero", 13).node(), {make_tensor<std::string>({3}, {"", "a", ""})});
  EXPECT_EQ(to_vector<int64_t>(s), (std::vector<int64_t>{1}));
  EXPECT_EQ(run_one(NodeBuilder("NonZero", 9).node(), {make_tensor<int32_t>({0, 3}, {})}).shape(), (Shape{2, 0}));
  // A scalar has no coordinates to list: rank 0 rows, one column for its one nonzero element.
  Tensor scalar = run_one(NodeBuilder("NonZero", 13).node(), {make_tensor<bool>({}, {true})});
  EXPECT_EQ(scalar.shape(), (Shape{0, 1}));
  EXPECT_EQ(run_one(NodeBuilder("NonZero", 13).node(), {make_half_tensor<Float16>({2}, {0.0f, -0.0f})}).shape(),
            (Shape{1, 0}));
}

TEST(CompressTest, AxisFlattenAndShortCondition) {
  const Tensor x = make_tensor<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor rows = run_one(NodeBuilder("Compress", 11).attr_int("axis", 0).node(), {x, make_tensor<bool>({2}, {false, true})});
  EXPECT_EQ(rows.shape(), (Shape{1, 2}));
  EXPECT_EQ(to_vector<int32_t>(rows), (std::vector<int32_t>{3, 4}));
  Tensor cols = run_one(NodeBuilder("Compress", 11).attr_int("axis", -1).node(), {x, make_tensor<bool>({2}, {false, true})});
  EXPECT_EQ(to_vector<int32_t>(cols), (std::vector<int32_t>{2, 4, 6}));
  Tensor flat = run_one(NodeBuilder("Compress", 9).node(), {x, make_tensor<bool>({6}, {1, 0, 0, 0, 1, 1})});
  EXPECT_EQ(to_vector<int32_t>(flat), (std::vector<int32_t>{1, 5, 6}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Compress", 11).attr_int("axis", 0).node(),
                          {x, make_tensor<bool>({4}, {0, 0, 0, 1})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Compress", 11).attr_int("axis", 2).node(), {x, make_tensor<bool>({1}, {1})})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Compress", 11).node(), {x, make_tensor<int32_t>({1}, {1})}).has_value());
}

TEST(UniqueTest, SortedFlatWithFourOutputs) {
  const graph::Node node = with_outputs(NodeBuilder("Unique", 11).node(), 4);
  auto out = run_kernel(node, {make_tensor<float>({2, 3}, {2, NAN, 1, 2, NAN, -0.5f})});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  const std::vector<float> y = to_vector<float>((*out)[0]);
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0], -0.5f);
  EXPECT_EQ(y[2], 2.0f);
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(to_vector<int64_t>((*out)[1]), (std::vector<int64_t>{5, 2, 0, 1}));
  EXPECT_EQ(to_vector<int64_t>((*out)[2]), (std::vector<int64_t>{2, 3, 1, 2, 3, 0}));
  EXPECT_EQ(to_vector<int64_t>((*out)[3]), (std::vector<int64_t>{1, 1, 2, 2}));
}

TEST(UniqueTest, UnsortedAndAxis) {
  const graph::Node unsorted = with_outputs(NodeBuilder("Unique", 11).attr_int("sorted", 0).node(), 4);
  auto out = run_kernel(unsorted, {make_tensor<int64_t>({6}, {2, 1, 1, 3, 4, 3})});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(to_vector<int64_t>((*out)[0]), (std::vector<int64_t>{2, 1, 3, 4}));
  EXPECT_EQ(to_vector<int64_t>((*out)[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(to_vector<int64_t>((*out)[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(to_vector<int64_t>((*out)[3]), (std::vector<int64_t>{1, 2, 2, 1}));
  const graph::Node axis = with_outputs(NodeBuilder("Unique", 11).attr_int("axis", 1).node(), 4);
  auto sub = run_kernel(axis, {make_tensor<float>({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1})});
  ASSERT_TRUE(sub.has_value());
  EXPECT_EQ((*sub)[0].shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(to_vector<float>((*sub)[0]), (std::vector<float>{0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1}));
  EXPECT_EQ(to_vector<int64_t>((*sub)[1]), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(to_vector<int64_t>((*sub)[2]), (std::vector<int64_t>{1, 0, 2, 0}));
  EXPECT_EQ(to_vector<int64_t>((*sub)[3]), (std::vector<int64_t>{2, 1, 1}));
  auto strings = run_kernel(NodeBuilder("Unique", 11).node(), {make_tensor<std::string>({3}, {"b", "a", "b"})});
  ASSERT_TRUE(strings.has_value());
  EXPECT_EQ(to_vector<std::string>((*strings)[0]), (std::vector<std::string>{"a", "b"}));
  auto empty = run_kernel(with_outputs(NodeBuilder("Unique", 11).node(), 4), {make_tensor<int32_t>({0}, {})});
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ((*empty)[3].shape(), (Shape{0}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Unique", 11).attr_int("axis", 1).node(), {make_tensor<int32_t>({2}, {1, 2})})
                   .has_value());
}

TEST(RangeTest, IntegerFloatAndHalf) {
  const auto range = [](auto start, auto limit, auto delta) {
    using T = decltype(start);
    return run_one(NodeBuilder("Range", 11).node(),
                   {make_tensor<T>({}, {start}), make_tensor<T>({}, {limit}), make_tensor<T>({}, {delta})});
  };
  EXPECT_EQ(to_vector<int32_t>(range(3, 9, 3)), (std::vector<int32_t>{3, 6}));
  EXPECT_EQ(to_vector<int64_t>(range(int64_t{10}, int64_t{4}, int64_t{-2})), (std::vector<int64_t>{10, 8, 6}));
  EXPECT_EQ(range(5.0f, 1.0f, 1.0f).numel(), 0);
  EXPECT_EQ(to_vector<double>(range(0.0, 1.0, 0.25)), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  const int64_t max = std::numeric_limits<int64_t>::max(), min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(to_vector<int64_t>(range(min, max, max)), (std::vector<int64_t>{min, -1, max - 1}));
  EXPECT_EQ(to_vector<int16_t>(range(int16_t{-32768}, int16_t{32767}, int16_t{32767})),
            (std::vector<int16_t>{-32768, -1, 32766}));
  Tensor half = run_one(NodeBuilder("Range", 27).node(),
                        {make_half_tensor<Float16>({}, {1.0f}), make_half_tensor<Float16>({}, {2.0f}),
                         make_half_tensor<Float16>({}, {0.5f})});
  EXPECT_EQ(to_float_vector(half), (std::vector<float>{1.0f, 1.5f}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Range", 11).node(), {make_tensor<int32_t>({}, {0}), make_tensor<int32_t>({}, {5}),
                                                            make_tensor<int32_t>({}, {0})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Range", 11).node(), {make_tensor<float>({}, {0}), make_tensor<float>({}, {INFINITY}),
                                                            make_tensor<float>({}, {1})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Range", 11).node(), {make_tensor<float>({}, {0}), make_tensor<float>({}, {1}),
                                                            make_tensor<float>({}, {NAN})}).has_value());
}

TEST(OneHotTest, AxisNegativeIndicesAndOutOfRange) {
  const Tensor values = make_tensor<float>({2}, {0.5f, 9.0f});
  Tensor y = run_one(NodeBuilder("OneHot", 11).node(),
                     {make_tensor<int64_t>({3}, {0, -1, 7}), make_tensor<int64_t>({}, {3}), values});
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{9, 0.5f, 0.5f, 0.5f, 0.5f, 9, 0.5f, 0.5f, 0.5f}));
  Tensor first = run_one(NodeBuilder("OneHot", 11).attr_int("axis", 0).node(),
                         {make_tensor<float>({2}, {1.7f, NAN}), make_tensor<float>({1}, {2.9f}),
                          make_tensor<std::string>({2}, {"off", "on"})});
  EXPECT_EQ(first.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<std::string>(first), (std::vector<std::string>{"off", "off", "on", "off"}));
  EXPECT_FALSE(run_kernel(NodeBuilder("OneHot", 11).node(),
                          {make_tensor<int64_t>({1}, {0}), make_tensor<int64_t>({}, {0}), values}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("OneHot", 11).attr_int("axis", 3).node(),
                          {make_tensor<int64_t>({1}, {0}), make_tensor<int64_t>({}, {2}), values}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("OneHot", 11).node(),
                          {make_tensor<int64_t>({1}, {0}), make_tensor<int64_t>({}, {2}), make_tensor<float>({1}, {1})})
                   .has_value());
}

}  // namespace
}  // namespace nxrt::cpu::testing
