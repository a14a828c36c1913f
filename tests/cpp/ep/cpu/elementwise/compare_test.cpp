#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "ep/cpu/elementwise/broadcast_test_util.h"
#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

std::vector<bool> bools(const Tensor& tensor) {
  EXPECT_EQ(tensor.dtype(), DataType::kBool);
  std::vector<bool> out;
  for (int64_t i = 0; i < tensor.numel(); ++i) out.push_back(tensor.data<uint8_t>()[i] != 0);
  return out;
}

Tensor bool_tensor(Shape shape, const std::vector<int>& values) {
  std::vector<uint8_t> bytes(values.begin(), values.end());
  auto tensor = Tensor::allocate(DataType::kBool, std::move(shape));
  EXPECT_TRUE(tensor.has_value());
  if (!bytes.empty()) std::memcpy(tensor->raw_data(), bytes.data(), bytes.size());
  return *tensor;
}

template <class T>
class CompareTypedTest : public ::testing::Test {};
using AllNumeric = ::testing::Types<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                    uint16_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(CompareTypedTest, AllNumeric);

TYPED_TEST(CompareTypedTest, AllComparisonsWithBroadcast) {
  using T = TypeParam;
  const Tensor a = make_tensor<T>({2, 3}, {T(1), T(2), T(3), T(4), T(5), T(6)});
  const Tensor b = make_tensor<T>({3}, {T(2), T(2), T(5)});
  EXPECT_EQ(bools(run_one(NodeBuilder("Equal", 19).node(), {a, b})), (std::vector<bool>{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(bools(run_one(NodeBuilder("Less", 13).node(), {a, b}, 3)), (std::vector<bool>{1, 0, 1, 0, 0, 0}));
  EXPECT_EQ(bools(run_one(NodeBuilder("LessOrEqual", 16).node(), {a, b})), (std::vector<bool>{1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(bools(run_one(NodeBuilder("Greater", 13).node(), {a, b})), (std::vector<bool>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(bools(run_one(NodeBuilder("GreaterOrEqual", 16).node(), {b, a})), (std::vector<bool>{1, 1, 1, 0, 0, 0}));
}

TEST(CompareTest, NaNIsUnorderedAndSignedZerosAreEqual) {
  const Tensor a = make_tensor<float>({3}, {kNan, 0.0f, 1});
  const Tensor b = make_tensor<float>({3}, {kNan, -0.0f, kNan});
  EXPECT_EQ(bools(run_one(NodeBuilder("Equal", 13).node(), {a, b})), (std::vector<bool>{0, 1, 0}));
  EXPECT_EQ(bools(run_one(NodeBuilder("Less", 13).node(), {a, b})), (std::vector<bool>{0, 0, 0}));
  EXPECT_EQ(bools(run_one(NodeBuilder("GreaterOrEqual", 16).node(), {a, b})), (std::vector<bool>{0, 1, 0}));
  EXPECT_EQ(bools(run_one(NodeBuilder("Equal", 13).node(),
                          {make_tensor<int64_t>({1}, {std::numeric_limits<int64_t>::max()}),
                           make_tensor<int64_t>({1}, {std::numeric_limits<int64_t>::max() - 1})})),
            (std::vector<bool>{0}));
}

TEST(CompareTest, EqualOnStringsAndBools) {
  const Tensor s = make_tensor<std::string>({2, 2}, {"a", "bb", "", "a"});
  const Tensor t = make_tensor<std::string>({2}, {"a", "a"});
  EXPECT_EQ(bools(run_one(NodeBuilder("Equal", 19).node(), {s, t})), (std::vector<bool>{1, 0, 0, 1}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Equal", 18).node(), {s, t}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Less", 19).node(), {s, t}).has_value());
  // Any nonzero byte is true.
  EXPECT_EQ(bools(run_one(NodeBuilder("Equal", 11).node(), {bool_tensor({3}, {1, 0, 2}), bool_tensor({3}, {1, 1, 1})})),
            (std::vector<bool>{1, 0, 1}));
  EXPECT_FALSE(
      run_kernel(NodeBuilder("Equal", 13).node(), {make_tensor<float>({1}, {1}), make_tensor<double>({1}, {1})})
          .has_value());
  EXPECT_FALSE(
      run_kernel(NodeBuilder("Greater", 13).node(), {bool_tensor({1}, {1}), bool_tensor({1}, {0})}).has_value());
}

TEST(CompareTest, OpsetTypeRanges) {
  const Tensor i = make_tensor<int32_t>({1}, {1});
  EXPECT_FALSE(run_kernel(NodeBuilder("Less", 8).node(), {i, i}).has_value());
  EXPECT_TRUE(run_kernel(NodeBuilder("Less", 9).node(), {i, i}).has_value());
  EXPECT_TRUE(run_kernel(NodeBuilder("Equal", 7).node(), {i, i}).has_value());
  const Tensor h = make_half_tensor<BFloat16>({1}, {1});
  EXPECT_FALSE(run_kernel(NodeBuilder("LessOrEqual", 12).node(), {h, h}).has_value());
  EXPECT_TRUE(run_kernel(NodeBuilder("LessOrEqual", 16).node(), {h, h}).has_value());
  EXPECT_EQ(find_kernel("", "GreaterOrEqual", 11), nullptr);
}

TEST(CompareTest, LegacyBroadcastAttribute) {
  const Tensor a = make_tensor<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(bools(run_one(NodeBuilder("Greater", 1).attr_int("broadcast", 1).attr_int("axis", 0).node(),
                          {a, make_tensor<float>({2}, {1.5f, 3.5f})})),
            (std::vector<bool>{0, 1, 0, 1}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Greater", 1).node(), {a, make_tensor<float>({2}, {1.5f, 3.5f})}).has_value());
  EXPECT_EQ(bools(run_one(NodeBuilder("And", 1).attr_int("broadcast", 1).node(),
                          {bool_tensor({2, 2}, {1, 1, 0, 1}), bool_tensor({2}, {1, 0})})),
            (std::vector<bool>{1, 0, 0, 0}));
}

TEST(LogicTest, TruthTablesBroadcastAndNonCanonicalBools) {
  const Tensor a = bool_tensor({2, 2}, {0, 0, 1, 7});
  const Tensor b = bool_tensor({2}, {0, 1});
  EXPECT_EQ(bools(run_one(NodeBuilder("And", 7).node(), {a, b})), (std::vector<bool>{0, 0, 0, 1}));
  EXPECT_EQ(bools(run_one(NodeBuilder("Or", 7).node(), {a, b}, 3)), (std::vector<bool>{0, 1, 1, 1}));
  EXPECT_EQ(bools(run_one(NodeBuilder("Xor", 7).node(), {a, b})), (std::vector<bool>{0, 1, 1, 0}));
  Tensor out = run_one(NodeBuilder("And", 7).node(), {a, bool_tensor({}, {5})});
  for (int64_t i = 0; i < out.numel(); ++i) EXPECT_LE(out.data<uint8_t>()[i], 1);
  EXPECT_FALSE(
      run_kernel(NodeBuilder("And", 7).node(), {make_tensor<int32_t>({1}, {1}), make_tensor<int32_t>({1}, {1})})
          .has_value());
  Tensor empty = run_one(NodeBuilder("Xor", 7).node(), {bool_tensor({0}, {}), bool_tensor({1}, {1})});
  EXPECT_EQ(empty.shape(), (Shape{0}));
}

// ---- Where ----

TEST(WhereTest, ThreeWayBroadcastNumeric) {
  const Tensor c = bool_tensor({2, 1}, {1, 0});
  const Tensor x = make_tensor<float>({3}, {1, 2, 3});
  const Tensor y = make_tensor<float>({}, {-1});
  Tensor out = run_one(NodeBuilder("Where", 16).node(), {c, x, y});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vector<float>(out), (std::vector<float>{1, 2, 3, -1, -1, -1}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("Where", 9).node(),
                                       {bool_tensor({3}, {1, 0, 1}), make_tensor<int64_t>({2, 1}, {10, 20}),
                                        make_tensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6})},
                                       3)),
            (std::vector<int64_t>{10, 2, 10, 20, 5, 20}));
}

TEST(WhereTest, StringsBoolsComplexAndHalves) {
  EXPECT_EQ(to_vector<std::string>(run_one(NodeBuilder("Where", 16).node(),
                                           {bool_tensor({3}, {1, 0, 1}), make_tensor<std::string>({1}, {"yes"}),
                                            make_tensor<std::string>({3}, {"a", "b", "c"})})),
            (std::vector<std::string>{"yes", "b", "yes"}));
  Tensor b = run_one(NodeBuilder("Where", 16).node(),
                     {bool_tensor({2}, {0, 1}), bool_tensor({2}, {1, 1}), bool_tensor({2}, {0, 0})});
  EXPECT_EQ(bools(b), (std::vector<bool>{0, 1}));
  using C = std::complex<double>;
  EXPECT_EQ(
      to_vector<C>(run_one(NodeBuilder("Where", 16).node(),
                           {bool_tensor({2}, {1, 0}), make_tensor<C>({1}, {C(1, 2)}), make_tensor<C>({1}, {C(3, 4)})})),
      (std::vector<C>{C(1, 2), C(3, 4)}));
  EXPECT_EQ(to_float_vector(run_one(NodeBuilder("Where", 16).node(),
                                    {bool_tensor({2}, {0, 1}), make_half_tensor<BFloat16>({2}, {1, 2}),
                                     make_half_tensor<BFloat16>({2}, {3, 4})})),
            (std::vector<float>{3, 2}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Where", 15).node(), {bool_tensor({1}, {1}), make_half_tensor<BFloat16>({1}, {1}),
                                                            make_half_tensor<BFloat16>({1}, {1})})
                   .has_value());
}

TEST(WhereTest, ErrorsAndEmpty) {
  const Tensor x = make_tensor<float>({2}, {1, 2});
  EXPECT_FALSE(run_kernel(NodeBuilder("Where", 16).node(), {make_tensor<float>({2}, {1, 0}), x, x}).has_value());
  EXPECT_FALSE(
      run_kernel(NodeBuilder("Where", 16).node(), {bool_tensor({2}, {1, 0}), x, make_tensor<double>({2}, {1, 2})})
          .has_value());
  auto bad = run_kernel(NodeBuilder("Where", 16).name("w").node(), {bool_tensor({3}, {1, 0, 1}), x, x});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().message(), "Where node 'w': input 1 shape [2] cannot broadcast with [3]");
  Tensor empty = run_one(NodeBuilder("Where", 16).node(), {bool_tensor({0, 2}, {}), x, x});
  EXPECT_EQ(empty.shape(), (Shape{0, 2}));
}

TEST(WhereTest, LargeRandomBroadcastMatchesReference) {
  const Shape sc{5, 1, 60};
  const Shape sx{1, 70, 60};
  const Shape sy{70, 1};
  const Shape out{5, 70, 60};
  std::vector<int> cond_values;
  for (int64_t i = 0; i < shape_numel(sc); ++i) cond_values.push_back((i * 7919) % 3 == 0);
  const auto x = random_values<double>(static_cast<size_t>(shape_numel(sx)), 4, -1, 1);
  const auto y = random_values<double>(static_cast<size_t>(shape_numel(sy)), 5, -1, 1);
  for (int threads : {1, 3}) {
    auto got =
        to_vector<double>(run_one(NodeBuilder("Where", 16).node(),
                                  {bool_tensor(sc, cond_values), make_tensor(sx, x), make_tensor(sy, y)}, threads));
    for_each_index(out, [&](int64_t flat, const std::vector<int64_t>& index) {
      const bool c = cond_values[static_cast<size_t>(broadcast_offset(sc, index))] != 0;
      const double want =
          c ? x[static_cast<size_t>(broadcast_offset(sx, index))] : y[static_cast<size_t>(broadcast_offset(sy, index))];
      ASSERT_EQ(got[static_cast<size_t>(flat)], want) << flat;
    });
  }
}

}  // namespace
}  // namespace nxrt::cpu::testing
