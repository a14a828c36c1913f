#include <limits>
#include <numeric>
#include <string>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

Tensor ints(const std::vector<int64_t>& values) {
  return make_tensor<int64_t>({static_cast<int64_t>(values.size())}, values);
}

Tensor iota_tensor(Shape shape) {
  std::vector<float> values(static_cast<size_t>(shape_numel(shape)));
  std::iota(values.begin(), values.end(), 0.0f);
  return make_tensor<float>(std::move(shape), values);
}

TEST(FlattenTest, AxesAndAliasing) {
  const Tensor x = iota_tensor({2, 3, 4});
  Tensor y = run_one(NodeBuilder("Flatten", 13).attr_int("axis", 2).node(), {x});
  EXPECT_EQ(y.shape(), (Shape{6, 4}));
  EXPECT_EQ(y.raw_data(), x.raw_data());
  EXPECT_EQ(run_one(NodeBuilder("Flatten", 13).attr_int("axis", 0).node(), {x}).shape(), (Shape{1, 24}));
  EXPECT_EQ(run_one(NodeBuilder("Flatten", 13).attr_int("axis", 3).node(), {x}).shape(), (Shape{24, 1}));
  EXPECT_EQ(run_one(NodeBuilder("Flatten", 13).attr_int("axis", -1).node(), {x}).shape(), (Shape{6, 4}));
  EXPECT_EQ(run_one(NodeBuilder("Flatten", 13).node(), {make_tensor<float>({0, 5}, {})}).shape(), (Shape{0, 5}));
  EXPECT_EQ(run_one(NodeBuilder("Flatten", 13).attr_int("axis", 0).node(), {make_tensor<float>({}, {1})}).shape(),
            (Shape{1, 1}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Flatten", 13).attr_int("axis", 4).node(), {x}).has_value());
  // Negative axes arrived in opset 11.
  EXPECT_FALSE(run_kernel(NodeBuilder("Flatten", 9).attr_int("axis", -1).node(), {x}).has_value());
}

TEST(SqueezeTest, AttributeAndInputAxes) {
  const Tensor x = iota_tensor({1, 3, 1, 2});
  EXPECT_EQ(run_one(NodeBuilder("Squeeze", 13).node(), {x}).shape(), (Shape{3, 2}));
  EXPECT_EQ(run_one(NodeBuilder("Squeeze", 13).node(), {x, ints({-2})}).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(run_one(NodeBuilder("Squeeze", 11).attr_ints("axes", {0}).node(), {x}).shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(run_one(NodeBuilder("Squeeze", 13).node(), {make_tensor<float>({1}, {5})}).shape(), (Shape{}));
  auto bad = run_kernel(NodeBuilder("Squeeze", 13).name("sq").node(), {x, ints({1})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("Squeeze node 'sq'"), std::string::npos);
  EXPECT_FALSE(run_kernel(NodeBuilder("Squeeze", 13).node(), {x, ints({4})}).has_value());
}

TEST(UnsqueezeTest, InsertsOnOutputRank) {
  const Tensor x = iota_tensor({3, 4, 5});
  EXPECT_EQ(run_one(NodeBuilder("Unsqueeze", 13).node(), {x, ints({0, 4})}).shape(), (Shape{1, 3, 4, 5, 1}));
  EXPECT_EQ(run_one(NodeBuilder("Unsqueeze", 13).node(), {x, ints({-1, 1})}).shape(), (Shape{3, 1, 4, 5, 1}));
  EXPECT_EQ(run_one(NodeBuilder("Unsqueeze", 1).attr_ints("axes", {2}).node(), {x}).shape(), (Shape{3, 4, 1, 5}));
  Tensor scalar = run_one(NodeBuilder("Unsqueeze", 13).node(), {make_tensor<std::string>({}, {"a"}), ints({0})});
  EXPECT_EQ(scalar.shape(), (Shape{1}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Unsqueeze", 13).node(), {x, ints({0, 0})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Unsqueeze", 13).node(), {x, ints({5})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Unsqueeze", 11).node(), {x}).has_value());
}

TEST(ShapeTest, StartEndClamp) {
  const Tensor x = iota_tensor({2, 3, 4});
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("Shape", 13).node(), {x})), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("Shape", 15).attr_int("start", -1).node(), {x})),
            (std::vector<int64_t>{4}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("Shape", 15).attr_int("end", -1).node(), {x})),
            (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("Shape", 15).attr_int("start", -10).attr_int("end", 10).node(), {x})),
            (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(run_one(NodeBuilder("Shape", 15).attr_int("start", 2).attr_int("end", 1).node(), {x}).shape(), (Shape{0}));
  EXPECT_EQ(run_one(NodeBuilder("Shape", 15).node(), {make_tensor<float>({}, {1})}).shape(), (Shape{0}));
  // start/end are ignored before opset 15.
  EXPECT_EQ(run_one(NodeBuilder("Shape", 13).attr_int("start", 1).node(), {x}).shape(), (Shape{3}));
}

TEST(SizeTest, CountsElements) {
  Tensor y = run_one(NodeBuilder("Size", 13).node(), {make_tensor<std::string>({2, 0}, {})});
  EXPECT_EQ(y.shape(), (Shape{}));
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{0}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("Size", 1).node(), {iota_tensor({3, 5})})),
            (std::vector<int64_t>{15}));
}

TEST(ConstantOfShapeTest, ValuesAndTypes) {
  Tensor y = run_one(NodeBuilder("ConstantOfShape", 9).node(), {ints({2, 3})});
  EXPECT_EQ(y.dtype(), DataType::kFloat32);
  EXPECT_EQ(to_vector<float>(y), std::vector<float>(6, 0.0f));
  for (int threads : {1, 3}) {
    auto out = run_kernel(NodeBuilder("ConstantOfShape", 20).attr_tensor("value", make_tensor<int32_t>({1}, {7})).node(),
                          {ints({50000})}, threads);
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(to_vector<int32_t>((*out)[0]), std::vector<int32_t>(50000, 7));
  }
  Tensor half = run_one(NodeBuilder("ConstantOfShape", 9).attr_tensor("value", make_half_tensor<Float16>({1}, {1.5f})).node(),
                        {ints({})});
  EXPECT_EQ(half.shape(), (Shape{}));
  EXPECT_EQ(to_float_vector(half), (std::vector<float>{1.5f}));
  EXPECT_EQ(run_one(NodeBuilder("ConstantOfShape", 9).node(), {ints({0, 4})}).numel(), 0);
  EXPECT_FALSE(run_kernel(NodeBuilder("ConstantOfShape", 9).node(), {ints({-1})}).has_value());
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_FALSE(run_kernel(NodeBuilder("ConstantOfShape", 9).node(), {ints({big, big})}).has_value());
}

TEST(CastLikeTest, TakesTypeOfSecondInput) {
  const Tensor x = make_tensor<float>({3}, {1.5f, -2.7f, 0.0f});
  Tensor y = run_one(NodeBuilder("CastLike", 15).node(), {x, make_tensor<int32_t>({}, {0})});
  EXPECT_EQ(to_vector<int32_t>(y), (std::vector<int32_t>{1, -2, 0}));
  Tensor s = run_one(NodeBuilder("CastLike", 19).node(), {make_tensor<int64_t>({2}, {3, -4}),
                                                          make_tensor<std::string>({1}, {""})});
  EXPECT_EQ(to_vector<std::string>(s), (std::vector<std::string>{"3", "-4"}));
  Tensor d = run_one(NodeBuilder("CastLike", 21).node(), {make_tensor<std::string>({1}, {"0.25"}),
                                                          make_tensor<double>({0}, {})});
  EXPECT_EQ(to_vector<double>(d), (std::vector<double>{0.25}));
  EXPECT_FALSE(run_kernel(NodeBuilder("CastLike", 21).node(), {make_tensor<std::string>({1}, {"x"}),
                                                                make_tensor<double>({0}, {})})
                   .has_value());
}

TEST(CastLikeTest, HonoursRoundModeForE8M0) {
  const Tensor x = make_tensor<float>({2}, {3.0f, 0.25f});
  const Tensor like = Tensor::allocate(DataType::kFloat8E8M0, {0}).value();
  const Tensor up = run_one(NodeBuilder("CastLike", 24).node(), {x, like});
  const Tensor down = run_one(NodeBuilder("CastLike", 24).attr_string("round_mode", "down").node(), {x, like});
  ASSERT_EQ(up.dtype(), DataType::kFloat8E8M0);
  EXPECT_EQ(up.data<uint8_t>()[0], 129);  // 2^2 = 4: 3 rounds up
  EXPECT_EQ(down.data<uint8_t>()[0], 128);  // 2^1 = 2: 3 rounds down
  EXPECT_EQ(up.data<uint8_t>()[1], 125);
  EXPECT_EQ(down.data<uint8_t>()[1], 125);
  EXPECT_FALSE(run_kernel(NodeBuilder("CastLike", 24).attr_string("round_mode", "sideways").node(), {x, like})
                   .has_value());
}

}  // namespace
}  // namespace nxrt::cpu::testing
