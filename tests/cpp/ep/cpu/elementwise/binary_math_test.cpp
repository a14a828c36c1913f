#include <cmath>
#include <cstdint>
#include <limits>

#include "ep/cpu/elementwise/broadcast_test_util.h"
#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- Pow ----

TEST(PowTest, FloatBroadcastAndScalarExponent) {
  const Tensor x = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Pow", 15).node(), {x, make_tensor<float>({}, {2})})),
            (std::vector<float>{1, 4, 9, 16, 25, 36}));
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Pow", 15).node(), {x, make_tensor<float>({3}, {0, 1, 3})}, 3)),
            (std::vector<float>{1, 2, 27, 1, 5, 216}));
  auto nan = to_vector<float>(
      run_one(NodeBuilder("Pow", 15).node(), {make_tensor<float>({1}, {-8}), make_tensor<float>({1}, {1.0f / 3})}));
  EXPECT_TRUE(std::isnan(nan[0]));
}

TEST(PowTest, MixedTypesFromOpset12) {
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("Pow", 15).node(),
                                       {make_tensor<int64_t>({3}, {1, 2, 3}), make_tensor<float>({3}, {4, 5, 6})})),
            (std::vector<int64_t>{1, 32, 729}));
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Pow", 15).node(),
                                     {make_tensor<float>({3}, {1, 2, 3}), make_tensor<uint64_t>({3}, {4, 5, 6})})),
            (std::vector<float>{1, 32, 729}));
  EXPECT_EQ(to_vector<double>(run_one(NodeBuilder("Pow", 15).node(),
                                      {make_tensor<double>({1}, {1.0000001}), make_tensor<int64_t>({1}, {1000000})})),
            (std::vector<double>{std::pow(1.0000001, 1000000.0)}));
  auto half = to_float_vector(run_one(NodeBuilder("Pow", 15).node(), {make_half_tensor<Float16>({2}, {2, -3}),
                                                                      make_half_tensor<BFloat16>({2}, {3, 2})}));
  EXPECT_EQ(half, (std::vector<float>{8, 9}));
  // Before opset 12 both inputs share one type.
  EXPECT_FALSE(run_kernel(NodeBuilder("Pow", 7).node(), {make_tensor<float>({1}, {2}), make_tensor<int64_t>({1}, {2})})
                   .has_value());
  EXPECT_FALSE(
      run_kernel(NodeBuilder("Pow", 11).node(), {make_tensor<int32_t>({1}, {2}), make_tensor<int32_t>({1}, {2})})
          .has_value());
}

TEST(PowTest, IntegerPowerWrapsAndNegativeExponentTruncates) {
  EXPECT_EQ(
      to_vector<int32_t>(run_one(NodeBuilder("Pow", 15).node(), {make_tensor<int32_t>({6}, {2, 3, -2, 1, -1, 5}),
                                                                 make_tensor<int32_t>({6}, {31, 0, 3, -7, -3, -1})})),
      (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 1, -8, 1, -1, 0}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("Pow", 15).node(),
                                       {make_tensor<int64_t>({2}, {3, 2}), make_tensor<uint8_t>({2}, {39, 64})})),
            (std::vector<int64_t>{4052555153018976267LL, 0}));
  // Float results out of the integer range saturate and NaN becomes 0 (no UB in the conversion).
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("Pow", 15).node(), {make_tensor<int32_t>({3}, {10, -10, -8}),
                                                                       make_tensor<float>({3}, {20, 21, 0.5f})})),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0}));
}

TEST(PowTest, ScalarSquareFastPathMatchesPow) {
  const std::vector<float> x{-3, 0.5f, kNan, -kInf, 1e20f};
  auto f = to_vector<float>(
      run_one(NodeBuilder("Pow", 15).node(), {make_tensor<float>({5}, x), make_tensor<int64_t>({}, {2})}));
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(f[i]));
    } else {
      EXPECT_EQ(f[i], std::pow(x[i], 2.0f)) << i;
    }
  }
  auto h = to_float_vector(run_one(NodeBuilder("Pow", 15).node(), {make_half_tensor<Float16>({2}, {-1.5f, 300}),
                                                                   make_half_tensor<BFloat16>({1}, {2})}));
  EXPECT_EQ(h, (std::vector<float>{2.25f, kInf}));
}

TEST(PowTest, LegacyBroadcastAttribute) {
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Pow", 6).attr_int("broadcast", 1).attr_int("axis", 0).node(),
                                     {make_tensor<float>({2, 2}, {2, 2, 3, 3}), make_tensor<float>({2}, {2, 3})})),
            (std::vector<float>{4, 4, 27, 27}));
}

// ---- Mod ----

template <class T>
class SignedModTest : public ::testing::Test {};
using SignedTypes = ::testing::Types<int8_t, int16_t, int32_t, int64_t>;
TYPED_TEST_SUITE(SignedModTest, SignedTypes);

TYPED_TEST(SignedModTest, SignFollowsDivisorOrDividendAndZeroIsSafe) {
  using T = TypeParam;
  const T min = std::numeric_limits<T>::min();
  const Tensor a = make_tensor<T>({8}, {T(-4), T(7), T(5), T(4), T(-7), T(8), T(3), min});
  const Tensor b = make_tensor<T>({8}, {T(3), T(-3), T(8), T(-3), T(3), T(0), T(-1), T(-1)});
  EXPECT_EQ(to_vector<T>(run_one(NodeBuilder("Mod", 13).node(), {a, b})),
            (std::vector<T>{T(2), T(-2), T(5), T(-2), T(2), T(0), T(0), T(0)}));
  EXPECT_EQ(to_vector<T>(run_one(NodeBuilder("Mod", 13).attr_int("fmod", 1).node(), {a, b}, 3)),
            (std::vector<T>{T(-1), T(1), T(5), T(1), T(-1), T(0), T(0), T(0)}));
}

TEST(ModTest, UnsignedAndBroadcast) {
  EXPECT_EQ(to_vector<uint64_t>(run_one(NodeBuilder("Mod", 10).node(), {make_tensor<uint64_t>({2, 2}, {10, 11, 12, 13}),
                                                                        make_tensor<uint64_t>({2}, {3, 0})})),
            (std::vector<uint64_t>{1, 0, 0, 0}));
  EXPECT_EQ(to_vector<uint8_t>(run_one(NodeBuilder("Mod", 13).node(),
                                       {make_tensor<uint8_t>({1}, {255}), make_tensor<uint8_t>({3}, {2, 16, 255})})),
            (std::vector<uint8_t>{1, 15, 0}));
}

TEST(ModTest, FloatEdgeCasesLikeNumpy) {
  const std::vector<float> x{0, -0.0f, -3, 3, -1, 1, kInf, 1, kNan, 1, -4.3f, 7.2f};
  const std::vector<float> y{-2, 2, kInf, kInf, -kInf, -kInf, 2, 0, 2, kNan, 2.1f, -3.4f};
  for (int threads : {1, 3}) {
    auto mod = to_vector<float>(
        run_one(NodeBuilder("Mod", 28).node(), {make_tensor<float>({12}, x), make_tensor<float>({12}, y)}, threads));
    EXPECT_TRUE(mod[0] == 0 && std::signbit(mod[0]));
    EXPECT_TRUE(mod[1] == 0 && !std::signbit(mod[1]));
    EXPECT_EQ(mod[2], kInf);
    EXPECT_EQ(mod[3], 3);
    EXPECT_EQ(mod[4], -1);
    EXPECT_EQ(mod[5], -kInf);
    for (int i = 6; i < 10; ++i) EXPECT_TRUE(std::isnan(mod[static_cast<size_t>(i)])) << i;
    EXPECT_FLOAT_EQ(mod[10], 2.1f - std::fmod(4.3f, 2.1f));
    EXPECT_FLOAT_EQ(mod[11], -3.4f + std::fmod(7.2f, 3.4f));
  }
  auto fmod =
      to_vector<double>(run_one(NodeBuilder("Mod", 13).attr_int("fmod", 1).node(),
                                {make_tensor<double>({3}, {-4.5, 4.5, 1}), make_tensor<double>({3}, {2, -2, 0})}));
  EXPECT_EQ(fmod[0], -0.5);
  EXPECT_EQ(fmod[1], 0.5);
  EXPECT_TRUE(std::isnan(fmod[2]));
  auto half = to_float_vector(run_one(NodeBuilder("Mod", 13).node(),
                                      {make_half_tensor<Float16>({2}, {-5, 5}), make_half_tensor<Float16>({1}, {3})}));
  EXPECT_EQ(half, (std::vector<float>{1, 2}));
}

TEST(ModTest, BadFmodAttributeFailsAtCreate) {
  auto result = run_kernel(NodeBuilder("Mod", 13).name("m").attr_int("fmod", 2).node(),
                           {make_tensor<int32_t>({1}, {1}), make_tensor<int32_t>({1}, {1})});
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.status().message().find("Mod node 'm'"), std::string::npos);
  EXPECT_FALSE(
      run_kernel(NodeBuilder("Mod", 13).node(), {make_tensor<int32_t>({1}, {1}), make_tensor<int64_t>({1}, {1})})
          .has_value());
}

// ---- BitShift and bitwise ----

TEST(BitShiftTest, UnsignedShiftsAndOutOfRangeAmounts) {
  const Tensor x = make_tensor<uint8_t>({4}, {16, 4, 1, 255});
  const Tensor y = make_tensor<uint8_t>({4}, {1, 2, 8, 200});
  EXPECT_EQ(to_vector<uint8_t>(run_one(NodeBuilder("BitShift", 11).attr_string("direction", "RIGHT").node(), {x, y})),
            (std::vector<uint8_t>{8, 1, 0, 0}));
  EXPECT_EQ(to_vector<uint8_t>(run_one(NodeBuilder("BitShift", 11).attr_string("direction", "LEFT").node(), {x, y})),
            (std::vector<uint8_t>{32, 16, 0, 0}));
  EXPECT_EQ(to_vector<uint64_t>(run_one(NodeBuilder("BitShift", 11).attr_string("direction", "LEFT").node(),
                                        {make_tensor<uint64_t>({2}, {1, 3}), make_tensor<uint64_t>({1}, {63})})),
            (std::vector<uint64_t>{1ULL << 63, 1ULL << 63}));
  EXPECT_FALSE(run_kernel(NodeBuilder("BitShift", 11).attr_string("direction", "UP").node(), {x, y}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("BitShift", 11).attr_string("direction", "LEFT").node(),
                          {make_tensor<int8_t>({1}, {1}), make_tensor<int8_t>({1}, {1})})
                   .has_value());
}

TEST(BitShiftTest, SignedFromOpset28) {
  const Tensor x = make_tensor<int8_t>({6}, {-16, -16, 64, -1, 5, -5});
  const Tensor y = make_tensor<int8_t>({6}, {2, 8, 1, 7, -1, -3});
  EXPECT_EQ(to_vector<int8_t>(run_one(NodeBuilder("BitShift", 28).attr_string("direction", "RIGHT").node(), {x, y})),
            (std::vector<int8_t>{-4, -1, 32, -1, 0, -1}));
  EXPECT_EQ(to_vector<int8_t>(run_one(NodeBuilder("BitShift", 28).attr_string("direction", "LEFT").node(), {x, y})),
            (std::vector<int8_t>{-64, 0, -128, -128, 0, 0}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("BitShift", 28).attr_string("direction", "LEFT").node(),
                                       {make_tensor<int64_t>({1}, {3}), make_tensor<int64_t>({1}, {63})})),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
}

TEST(BitwiseTest, AndOrXorWithBroadcast) {
  const Tensor a = make_tensor<int16_t>({2, 2}, {0x0f0f, -1, 0, 0x1234});
  const Tensor b = make_tensor<int16_t>({2}, {0x00ff, 0x7000});
  EXPECT_EQ(to_vector<int16_t>(run_one(NodeBuilder("BitwiseAnd", 18).node(), {a, b})),
            (std::vector<int16_t>{0x000f, 0x7000, 0, 0x1000}));
  EXPECT_EQ(to_vector<int16_t>(run_one(NodeBuilder("BitwiseOr", 18).node(), {a, b}, 3)),
            (std::vector<int16_t>{0x0fff, -1, 0x00ff, 0x7234}));
  EXPECT_EQ(to_vector<int16_t>(run_one(NodeBuilder("BitwiseXor", 18).node(), {a, b})),
            (std::vector<int16_t>{0x0ff0, static_cast<int16_t>(0x8fff), 0x00ff, 0x6234}));
  EXPECT_EQ(to_vector<uint64_t>(run_one(NodeBuilder("BitwiseXor", 18).node(),
                                        {make_tensor<uint64_t>({1}, {~0ULL}), make_tensor<uint64_t>({1}, {1})})),
            (std::vector<uint64_t>{~0ULL - 1}));
  EXPECT_FALSE(
      run_kernel(NodeBuilder("BitwiseAnd", 18).node(), {make_tensor<float>({1}, {1}), make_tensor<float>({1}, {1})})
          .has_value());
}

// ---- Variadic ----

TEST(VariadicTest, MaxMinPropagateNaNInEitherPosition) {
  const Tensor a = make_tensor<float>({4}, {kNan, 1, 3, -0.5f});
  const Tensor b = make_tensor<float>({4}, {1, kNan, 2, -1});
  auto max = to_vector<float>(run_one(NodeBuilder("Max", 13).node(), {a, b}));
  auto min = to_vector<float>(run_one(NodeBuilder("Min", 13).node(), {b, a}));
  EXPECT_TRUE(std::isnan(max[0]) && std::isnan(max[1]) && std::isnan(min[0]) && std::isnan(min[1]));
  EXPECT_EQ(max[2], 3);
  EXPECT_EQ(max[3], -0.5f);
  EXPECT_EQ(min[2], 2);
  EXPECT_EQ(min[3], -1);
  auto half = to_float_vector(run_one(NodeBuilder("Max", 13).node(), {make_half_tensor<BFloat16>({2}, {1, kNan}),
                                                                      make_half_tensor<BFloat16>({2}, {kNan, 2})}));
  EXPECT_TRUE(std::isnan(half[0]) && std::isnan(half[1]));
}

TEST(VariadicTest, ThreeInputsMultiwayBroadcast) {
  const Tensor a = make_tensor<int32_t>({3, 1}, {1, 5, 9});
  const Tensor b = make_tensor<int32_t>({2}, {4, 6});
  const Tensor c = make_tensor<int32_t>({}, {3});
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("Max", 13).node(), {a, b, c})),
            (std::vector<int32_t>{4, 6, 5, 6, 9, 9}));
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("Min", 13).node(), {c, b, a}, 3)),
            (std::vector<int32_t>{1, 1, 3, 3, 3, 3}));
  const Tensor fa = make_tensor<float>({3, 1}, {1, 5, 9});
  const Tensor fb = make_tensor<float>({2}, {4, 6});
  const Tensor fc = make_tensor<float>({1, 1, 1}, {2});
  Tensor sum = run_one(NodeBuilder("Sum", 13).node(), {fa, fb, fc});
  EXPECT_EQ(sum.shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(to_vector<float>(sum), (std::vector<float>{7, 9, 11, 13, 15, 17}));
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Mean", 13).node(), {fa, fb, fc})),
            (std::vector<float>{7.0f / 3, 3, 11.0f / 3, 13.0f / 3, 5, 17.0f / 3}));
}

TEST(VariadicTest, SingleInputCopiesAndEmptyTensors) {
  const Tensor a = make_tensor<double>({2}, {1.5, -2});
  EXPECT_EQ(to_vector<double>(run_one(NodeBuilder("Mean", 13).node(), {a})), (std::vector<double>{1.5, -2}));
  EXPECT_EQ(to_vector<double>(run_one(NodeBuilder("Sum", 6).node(), {a})), (std::vector<double>{1.5, -2}));
  Tensor empty =
      run_one(NodeBuilder("Max", 13).node(), {make_tensor<uint8_t>({0, 3}, {}), make_tensor<uint8_t>({3}, {1, 2, 3})});
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
  EXPECT_EQ(to_vector<double>(run_one(NodeBuilder("Sum", 13).node(),
                                      {make_tensor<double>({1}, {1e-17}), make_tensor<double>({1}, {1.0}),
                                       make_tensor<double>({1}, {-1.0})})),
            (std::vector<double>{1e-17 + 1.0 - 1.0}));
}

TEST(VariadicTest, OpsetsBeforeEightRequireEqualShapesAndTypesAreChecked) {
  const Tensor a = make_tensor<float>({2}, {1, 2});
  const Tensor b = make_tensor<float>({1}, {3});
  EXPECT_FALSE(run_kernel(NodeBuilder("Max", 6).node(), {a, b}).has_value());
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Max", 8).node(), {a, b})), (std::vector<float>{3, 3}));
  EXPECT_FALSE(run_kernel(NodeBuilder("Sum", 13).node(), {a, make_tensor<double>({2}, {1, 2})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Sum", 13).node(), {make_tensor<int32_t>({1}, {1})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Max", 11).node(), {make_tensor<int32_t>({1}, {1})}).has_value());
  auto bad = run_kernel(NodeBuilder("Min", 13).name("m").node(), {a, make_tensor<float>({3}, {1, 2, 3})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().message(), "Min node 'm': input 1 shape [3] cannot broadcast with [2]");
}

TEST(VariadicTest, LargeRandomBroadcastMatchesReference) {
  const Shape sa{3, 1, 50, 40};
  const Shape sb{7, 1, 40};
  const Shape sc{50, 1};
  const Shape out{3, 7, 50, 40};
  const auto a = random_values<float>(static_cast<size_t>(shape_numel(sa)), 1, -3, 3);
  const auto b = random_values<float>(static_cast<size_t>(shape_numel(sb)), 2, -3, 3);
  const auto c = random_values<float>(static_cast<size_t>(shape_numel(sc)), 3, -3, 3);
  for (int threads : {1, 3}) {
    auto max = to_vector<float>(
        run_one(NodeBuilder("Max", 13).node(), {make_tensor(sa, a), make_tensor(sb, b), make_tensor(sc, c)}, threads));
    auto sum = to_vector<float>(
        run_one(NodeBuilder("Sum", 13).node(), {make_tensor(sa, a), make_tensor(sb, b), make_tensor(sc, c)}, threads));
    for_each_index(out, [&](int64_t flat, const std::vector<int64_t>& index) {
      const float x = a[static_cast<size_t>(broadcast_offset(sa, index))];
      const float y = b[static_cast<size_t>(broadcast_offset(sb, index))];
      const float z = c[static_cast<size_t>(broadcast_offset(sc, index))];
      ASSERT_EQ(max[static_cast<size_t>(flat)], std::max(std::max(x, y), z));
      ASSERT_EQ(sum[static_cast<size_t>(flat)], (x + y) + z);
    });
  }
}

}  // namespace
}  // namespace nxrt::cpu::testing
