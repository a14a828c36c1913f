#include <numeric>
#include <string>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

template <class T>
Tensor iota_of(Shape shape, T start = T{}) {
  std::vector<T> values(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(start + static_cast<T>(i));
  return make_tensor<T>(std::move(shape), values);
}

TEST(ConcatTest, NegativeAxisAndEmptyInputs) {
  const Tensor a = make_tensor<int32_t>({2, 2}, {1, 2, 3, 4});
  const Tensor b = make_tensor<int32_t>({2, 1}, {5, 6});
  const Tensor empty = make_tensor<int32_t>({2, 0}, {});
  for (int threads : {1, 3}) {
    auto out = run_kernel(NodeBuilder("Concat", 13).attr_int("axis", -1).node(), {a, empty, b}, threads);
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
    EXPECT_EQ(to_vector<int32_t>((*out)[0]), (std::vector<int32_t>{1, 2, 5, 3, 4, 6}));
  }
  Tensor rows = run_one(NodeBuilder("Concat", 4).attr_int("axis", 0).node(), {a, a});
  EXPECT_EQ(to_vector<int32_t>(rows), (std::vector<int32_t>{1, 2, 3, 4, 1, 2, 3, 4}));
  // Opset 1 defaults axis to 1.
  EXPECT_EQ(run_one(NodeBuilder("Concat", 1).node(), {a, b}).shape(), (Shape{2, 3}));
  EXPECT_EQ(run_one(NodeBuilder("Concat", 13).attr_int("axis", 0).node(), {empty, empty}).shape(), (Shape{4, 0}));
}

TEST(ConcatTest, StringsAndLargeParallel) {
  Tensor s = run_one(NodeBuilder("Concat", 13).attr_int("axis", 0).node(),
                     {make_tensor<std::string>({1}, {"x"}), make_tensor<std::string>({2}, {"y", "z"})});
  EXPECT_EQ(to_vector<std::string>(s), (std::vector<std::string>{"x", "y", "z"}));
  const Tensor a = iota_of<double>({300, 70});
  const Tensor b = iota_of<double>({300, 30}, 1e6);
  for (int threads : {1, 3}) {
    auto out = run_kernel(NodeBuilder("Concat", 13).attr_int("axis", 1).node(), {a, b}, threads);
    ASSERT_TRUE(out.has_value());
    const double* y = (*out)[0].data<double>();
    EXPECT_EQ(y[0], 0.0);
    EXPECT_EQ(y[70], 1e6);
    EXPECT_EQ(y[299 * 100 + 69], 299.0 * 70 + 69);
    EXPECT_EQ(y[299 * 100 + 99], 1e6 + 299 * 30 + 29);
  }
}

TEST(ConcatTest, RejectsMismatches) {
  const Tensor a = make_tensor<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_FALSE(run_kernel(NodeBuilder("Concat", 13).attr_int("axis", 0).node(),
                          {a, make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Concat", 13).attr_int("axis", 2).node(), {a, a}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Concat", 13).attr_int("axis", 0).node(),
                          {a, make_tensor<double>({2, 2}, {1, 2, 3, 4})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Concat", 13).node(), {a, a}).has_value());  // axis required
}

TEST(SplitTest, EqualAttributeAndInputSplits) {
  const Tensor x = iota_of<int64_t>({2, 6});
  auto equal = run_kernel(NodeBuilder("Split", 13).attr_int("axis", 1).node(), {x});
  ASSERT_TRUE(equal.has_value());
  EXPECT_EQ(equal->size(), 1u);  // the test helper's node has one output
  graph::Node three = NodeBuilder("Split", 13).attr_int("axis", -1).node();
  three.outputs = {100, 101, 102};
  auto parts = run_kernel(three, {x, make_tensor<int64_t>({3}, {1, 2, 3})});
  ASSERT_TRUE(parts.has_value()) << parts.status().to_string();
  EXPECT_EQ(to_vector<int64_t>((*parts)[0]), (std::vector<int64_t>{0, 6}));
  EXPECT_EQ(to_vector<int64_t>((*parts)[1]), (std::vector<int64_t>{1, 2, 7, 8}));
  EXPECT_EQ(to_vector<int64_t>((*parts)[2]), (std::vector<int64_t>{3, 4, 5, 9, 10, 11}));
  graph::Node attr = NodeBuilder("Split", 11).attr_int("axis", 1).attr_ints("split", {4, 0, 2}).node();
  attr.outputs = {100, 101, 102};
  auto with_empty = run_kernel(attr, {x});
  ASSERT_TRUE(with_empty.has_value());
  EXPECT_EQ((*with_empty)[1].shape(), (Shape{2, 0}));
  EXPECT_EQ(to_vector<int64_t>((*with_empty)[2]), (std::vector<int64_t>{4, 5, 10, 11}));
  graph::Node even = NodeBuilder("Split", 2).attr_int("axis", 1).node();
  even.outputs = {100, 101, 102};
  auto evens = run_kernel(even, {x});
  ASSERT_TRUE(evens.has_value());
  EXPECT_EQ(to_vector<int64_t>((*evens)[2]), (std::vector<int64_t>{4, 5, 10, 11}));
}

TEST(SplitTest, NumOutputsUnevenLastChunk) {
  const Tensor x = make_tensor<std::string>({7}, {"a", "b", "c", "d", "e", "f", "g"});
  graph::Node node = NodeBuilder("Split", 18).attr_int("num_outputs", 3).node();
  node.outputs = {100, 101, 102};
  for (int threads : {1, 3}) {
    auto parts = run_kernel(node, {x}, threads);
    ASSERT_TRUE(parts.has_value()) << parts.status().to_string();
    EXPECT_EQ(to_vector<std::string>((*parts)[0]), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(to_vector<std::string>((*parts)[2]), (std::vector<std::string>{"g"}));
  }
  graph::Node too_many = NodeBuilder("Split", 18).attr_int("num_outputs", 4).node();
  too_many.outputs = {100, 101, 102, 103};
  EXPECT_FALSE(run_kernel(too_many, {make_tensor<float>({5}, {1, 2, 3, 4, 5})}).has_value());
}

TEST(SplitTest, RejectsBadSplits) {
  const Tensor x = iota_of<float>({2, 6});
  graph::Node node = NodeBuilder("Split", 13).attr_int("axis", 1).node();
  node.outputs = {100, 101};
  EXPECT_FALSE(run_kernel(node, {x, make_tensor<int64_t>({2}, {2, 3})}).has_value());
  EXPECT_FALSE(run_kernel(node, {x, make_tensor<int64_t>({2}, {-1, 7})}).has_value());
  EXPECT_FALSE(run_kernel(node, {x, make_tensor<int64_t>({3}, {2, 2, 2})}).has_value());
  graph::Node uneven = NodeBuilder("Split", 13).attr_int("axis", 1).node();
  uneven.outputs = {100, 101, 102, 103};
  EXPECT_FALSE(run_kernel(uneven, {x}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Split", 13).attr_int("axis", 2).node(), {x}).has_value());
}

}  // namespace
}  // namespace nxrt::cpu::testing
