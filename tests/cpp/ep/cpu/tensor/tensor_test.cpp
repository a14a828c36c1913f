#include <numeric>
#include <string>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

Tensor shape_tensor(const std::vector<int64_t>& dims) {
  return make_tensor<int64_t>({static_cast<int64_t>(dims.size())}, dims);
}

std::vector<float> iota_floats(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(IdentityTest, AliasesInput) {
  const Tensor x = make_tensor<int32_t>({2, 2}, {1, 2, 3, 4});
  Tensor y = run_one(NodeBuilder("Identity", 16).node(), {x});
  EXPECT_EQ(y.raw_data(), x.raw_data());
  EXPECT_EQ(y.shape(), x.shape());
}

TEST(ReshapeTest, CopiesZeroAndInfersMinusOne) {
  const Tensor x = make_tensor<float>({2, 3, 4}, iota_floats(24));
  Tensor y = run_one(NodeBuilder("Reshape", 13).node(), {x, shape_tensor({0, -1})});
  EXPECT_EQ(y.shape(), (Shape{2, 12}));
  EXPECT_EQ(y.raw_data(), x.raw_data());
  EXPECT_EQ(run_one(NodeBuilder("Reshape", 5).node(), {x, shape_tensor({4, 0, 2})}).shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(run_one(NodeBuilder("Reshape", 14).node(), {x, shape_tensor({-1})}).shape(), (Shape{24}));
  EXPECT_EQ(run_one(NodeBuilder("Reshape", 14).node(), {make_tensor<float>({}, {1.0f}), shape_tensor({1, 1})}).shape(),
            (Shape{1, 1}));
}

TEST(ReshapeTest, AllowZeroKeepsLiteralZero) {
  const Tensor empty = make_tensor<float>({0, 3}, {});
  EXPECT_EQ(run_one(NodeBuilder("Reshape", 14).attr_int("allowzero", 1).node(), {empty, shape_tensor({3, 0})}).shape(),
            (Shape{3, 0}));
  // Without allowzero, 0 copies the input dim.
  EXPECT_EQ(run_one(NodeBuilder("Reshape", 14).node(), {empty, shape_tensor({0, 3})}).shape(), (Shape{0, 3}));
  // allowzero is ignored before opset 14.
  const Tensor x = make_tensor<float>({2, 3}, iota_floats(6));
  EXPECT_EQ(run_one(NodeBuilder("Reshape", 13).attr_int("allowzero", 1).node(), {x, shape_tensor({0, 3})}).shape(),
            (Shape{2, 3}));
}

TEST(ReshapeTest, RejectsBadShapes) {
  const Tensor x = make_tensor<float>({2, 3}, iota_floats(6));
  const std::vector<std::vector<int64_t>> bad = {{4, 2}, {-1, -1}, {-2, 3}, {5, -1}, {0, 0, 0}};
  for (const auto& dims : bad) {
    auto result = run_kernel(NodeBuilder("Reshape", 14).name("r").node(), {x, shape_tensor(dims)});
    ASSERT_FALSE(result.has_value()) << shape_to_string(dims);
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find("Reshape node 'r'"), std::string::npos) << result.status().message();
    EXPECT_NE(result.status().message().find("[2,3]"), std::string::npos) << result.status().message();
  }
  auto both = run_kernel(NodeBuilder("Reshape", 14).attr_int("allowzero", 1).node(),
                         {make_tensor<float>({0, 3}, {}), shape_tensor({0, -1})});
  EXPECT_FALSE(both.has_value());
  auto wrong_type = run_kernel(NodeBuilder("Reshape", 14).node(), {x, make_tensor<int32_t>({2}, {3, 2})});
  EXPECT_FALSE(wrong_type.has_value());
}

// Reference transpose by index arithmetic.
template <class T>
std::vector<T> transpose_reference(const Shape& shape, const std::vector<T>& in, const std::vector<int64_t>& perm) {
  const size_t rank = shape.size();
  Shape out_shape(rank);
  for (size_t i = 0; i < rank; ++i) out_shape[i] = shape[perm[i]];
  const auto in_strides = row_major_strides(shape);
  std::vector<T> out;
  const int64_t n = shape_numel(shape);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat;
    int64_t offset = 0;
    for (size_t d = rank; d-- > 0;) {
      offset += (rest % out_shape[d]) * in_strides[perm[d]];
      rest /= out_shape[d];
    }
    out.push_back(in[offset]);
  }
  return out;
}

struct TransposeCase {
  Shape shape;
  std::vector<int64_t> perm;
};

class TransposeTest : public ::testing::TestWithParam<std::tuple<TransposeCase, int>> {};

TEST_P(TransposeTest, MatchesReferenceForEveryElementSize) {
  // Named copies rather than structured bindings: clang 14 cannot capture bindings in a lambda.
  const TransposeCase& c = std::get<0>(GetParam());
  const int threads = std::get<1>(GetParam());
  const size_t n = static_cast<size_t>(shape_numel(c.shape));
  auto node = NodeBuilder("Transpose", 13).attr_ints("perm", c.perm).node();
  auto check = [&]<class T>(T scale) {
    std::vector<T> in(n);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<T>(i * scale);
    Tensor out = run_one(node, {make_tensor<T>(c.shape, in)}, threads);
    EXPECT_EQ(to_vector<T>(out), transpose_reference(c.shape, in, c.perm));
  };
  check(uint8_t{1});
  check(int16_t{3});
  check(float{0.5f});
  check(int64_t{7});
  std::vector<std::string> strings(n);
  for (size_t i = 0; i < n; ++i) strings[i] = "s" + std::to_string(i);
  Tensor out = run_one(node, {make_tensor<std::string>(c.shape, strings)}, threads);
  EXPECT_EQ(to_vector<std::string>(out), transpose_reference(c.shape, strings, c.perm));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TransposeTest,
    ::testing::Combine(::testing::Values(TransposeCase{{3, 5}, {1, 0}}, TransposeCase{{67, 130}, {1, 0}},
                                         TransposeCase{{2, 3, 4}, {0, 2, 1}}, TransposeCase{{2, 3, 4}, {2, 0, 1}},
                                         TransposeCase{{2, 3, 4, 5}, {1, 0, 3, 2}},
                                         TransposeCase{{2, 1, 3, 1}, {3, 2, 1, 0}},
                                         TransposeCase{{4, 5, 6}, {0, 1, 2}}, TransposeCase{{7}, {0}},
                                         TransposeCase{{33, 1, 40}, {2, 1, 0}},
                                         // row copies, batched 2-D tiles (ragged tiles), NCHW <-> NHWC
                                         TransposeCase{{2, 5, 3, 4}, {0, 2, 1, 3}},
                                         TransposeCase{{2, 3, 37, 45}, {0, 1, 3, 2}},
                                         TransposeCase{{2, 6, 5, 7}, {0, 2, 3, 1}},
                                         TransposeCase{{2, 5, 7, 6}, {0, 3, 1, 2}},
                                         // 2-D tiles whose input rows are further apart than their length
                                         TransposeCase{{2, 5, 3, 7}, {2, 0, 3, 1}},
                                         TransposeCase{{3, 37, 2, 20}, {2, 0, 3, 1}},
                                         TransposeCase{{1, 197, 3, 64}, {0, 2, 3, 1}}),
                       ::testing::Values(1, 3)));

TEST(TransposeKernelTest, DefaultPermReversesAndErrorsAreReported) {
  const Tensor x = make_tensor<float>({2, 3}, iota_floats(6));
  Tensor y = run_one(NodeBuilder("Transpose", 1).node(), {x});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  auto duplicate = run_kernel(NodeBuilder("Transpose", 13).name("t").attr_ints("perm", {0, 0}).node(), {x});
  ASSERT_FALSE(duplicate.has_value());
  EXPECT_NE(duplicate.status().message().find("Transpose node 't'"), std::string::npos);
  auto wrong_rank = run_kernel(NodeBuilder("Transpose", 13).attr_ints("perm", {2, 0, 1}).node(), {x});
  ASSERT_FALSE(wrong_rank.has_value());
  EXPECT_EQ(wrong_rank.status().code(), StatusCode::kInvalidArgument);
  auto negative = run_kernel(NodeBuilder("Transpose", 13).attr_ints("perm", {-1, 0}).node(), {x});
  EXPECT_FALSE(negative.has_value());
  Tensor empty = run_one(NodeBuilder("Transpose", 13).node(), {make_tensor<float>({0, 4}, {})});
  EXPECT_EQ(empty.shape(), (Shape{4, 0}));
}

TEST(ConstantTest, ValueTensorIsSharedNotCopied) {
  const Tensor value = make_tensor<float>({2}, {1.5f, 2.5f});
  auto node = NodeBuilder("Constant", 13).attr_tensor("value", value).node();
  Tensor out = run_one(node, {});
  EXPECT_EQ(out.raw_data(), value.raw_data());
  EXPECT_EQ(to_vector<float>(out), (std::vector<float>{1.5f, 2.5f}));
}

TEST(ConstantTest, ScalarAndListAttributes) {
  Tensor f = run_one(NodeBuilder("Constant", 12).attr_float("value_float", 3.5f).node(), {});
  EXPECT_EQ(f.shape(), (Shape{}));
  EXPECT_EQ(to_vector<float>(f), (std::vector<float>{3.5f}));
  Tensor fs = run_one(NodeBuilder("Constant", 12).attr_floats("value_floats", {1, 2}).node(), {});
  EXPECT_EQ(fs.shape(), (Shape{2}));
  Tensor i = run_one(NodeBuilder("Constant", 13).attr_int("value_int", -4).node(), {});
  EXPECT_EQ(to_vector<int64_t>(i), (std::vector<int64_t>{-4}));
  Tensor is = run_one(NodeBuilder("Constant", 13).attr_ints("value_ints", {5, 6, 7}).node(), {});
  EXPECT_EQ(to_vector<int64_t>(is), (std::vector<int64_t>{5, 6, 7}));
  Tensor s = run_one(NodeBuilder("Constant", 13).attr_string("value_string", "hi").node(), {});
  EXPECT_EQ(to_vector<std::string>(s), (std::vector<std::string>{"hi"}));
  Tensor ss = run_one(NodeBuilder("Constant", 13).attr_strings("value_strings", {"a", "b"}).node(), {});
  EXPECT_EQ(to_vector<std::string>(ss), (std::vector<std::string>{"a", "b"}));
}

TEST(ConstantTest, RejectsMissingDuplicateOrMistypedValues) {
  auto none = run_kernel(NodeBuilder("Constant", 13).name("c").node(), {});
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.status().message().find("Constant node 'c'"), std::string::npos);
  auto two = run_kernel(NodeBuilder("Constant", 13).attr_int("value_int", 1).attr_float("value_float", 1).node(), {});
  EXPECT_FALSE(two.has_value());
  auto mistyped = run_kernel(NodeBuilder("Constant", 13).attr_float("value_int", 1).node(), {});
  EXPECT_FALSE(mistyped.has_value());
}

}  // namespace
}  // namespace nxrt::cpu::testing
