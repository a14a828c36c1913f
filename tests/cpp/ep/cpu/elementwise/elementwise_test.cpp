#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "ep/cpu/kernel_test_util.h"
#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu::testing {
namespace {

// Naive broadcast reference: maps each output index to input offsets.
template <class T, class Fn>
std::vector<T> broadcast_reference(const Shape& a_shape, const std::vector<T>& a, const Shape& b_shape,
                                   const std::vector<T>& b, const Shape& out, Fn fn) {
  const size_t rank = out.size();
  std::vector<T> result;
  const int64_t n = shape_numel(out);
  for (int64_t flat = 0; flat < n; ++flat) {
    std::vector<int64_t> index(rank);
    int64_t rest = flat;
    for (size_t d = rank; d-- > 0;) {
      index[d] = rest % out[d];
      rest /= out[d];
    }
    auto offset = [&](const Shape& s) {
      int64_t off = 0;
      for (size_t d = 0; d < s.size(); ++d) {
        const int64_t i = s[d] == 1 ? 0 : index[d + rank - s.size()];
        off = off * s[d] + i;
      }
      return off;
    };
    result.push_back(fn(a[offset(a_shape)], b[offset(b_shape)]));
  }
  return result;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

struct BroadcastCase {
  Shape a;
  Shape b;
  Shape out;
};

class BroadcastTest : public ::testing::TestWithParam<std::tuple<BroadcastCase, int>> {};

TEST_P(BroadcastTest, MatchesReferenceForAllOps) {
  const auto& [c, threads] = GetParam();
  const auto a = random_floats(static_cast<size_t>(shape_numel(c.a)), 1);
  auto b = random_floats(static_cast<size_t>(shape_numel(c.b)), 2);
  for (auto& x : b) x += x >= 0 ? 0.5f : -0.5f;  // keep divisors away from zero
  const char* ops[] = {"Add", "Sub", "Mul", "Div"};
  for (int op = 0; op < 4; ++op) {
    Tensor out = run_one(NodeBuilder(ops[op], 14).node(), {make_tensor(c.a, a), make_tensor(c.b, b)}, threads);
    ASSERT_EQ(out.shape(), c.out) << ops[op];
    auto expected = broadcast_reference<float>(c.a, a, c.b, b, c.out, [op](float x, float y) {
      switch (op) {
        case 0: return x + y;
        case 1: return x - y;
        case 2: return x * y;
        default: return x / y;
      }
    });
    auto got = to_vector<float>(out);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_FLOAT_EQ(got[i], expected[i]) << ops[op] << " at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BroadcastTest,
    ::testing::Combine(::testing::Values(BroadcastCase{{3, 4}, {3, 4}, {3, 4}}, BroadcastCase{{3, 1}, {4}, {3, 4}},
                                         BroadcastCase{{2, 3, 4}, {3, 1}, {2, 3, 4}},
                                         BroadcastCase{{}, {2, 5}, {2, 5}}, BroadcastCase{{7, 5}, {1}, {7, 5}},
                                         BroadcastCase{{1, 3, 1, 5}, {2, 1, 4, 1}, {2, 3, 4, 5}},
                                         BroadcastCase{{64, 1, 300}, {1, 70, 300}, {64, 70, 300}},
                                         BroadcastCase{{40000}, {40000}, {40000}},
                                         BroadcastCase{{1}, {50000}, {50000}},
                                         BroadcastCase{{2, 0, 3}, {3}, {2, 0, 3}},
                                         BroadcastCase{{5, 1, 1}, {1, 1, 1}, {5, 1, 1}}),
                       ::testing::Values(1, 3)));

// The per-ISA array loops (vector_math.h) against the naive reference, exactly, for f32 and f64 on every
// broadcast shape the fast path distinguishes (both arrays, either side scalar, row vector, column vector),
// lengths around the vector widths, for every ISA copy the CPU can run.
template <class T>
void check_binary_fast_paths(const char* isa) {
  if (!vector_math_force_isa(isa)) return;  // the CPU lacks it; "generic" always runs
  const std::vector<BroadcastCase> cases = {
      {{15}, {15}, {15}},         {{16}, {16}, {16}},           {{17}, {17}, {17}},         {{1}, {33}, {33}},
      {{33}, {1}, {33}},          {{5, 31}, {31}, {5, 31}},     {{5, 31}, {5, 1}, {5, 31}}, {{}, {65}, {65}},
      {{3, 1, 65}, {1, 4, 65}, {3, 4, 65}}, {{40001}, {40001}, {40001}}, {{0}, {1}, {0}}};
  const char* ops[] = {"Add", "Sub", "Mul", "Div"};
  for (const BroadcastCase& c : cases) {
    std::mt19937 rng(static_cast<uint32_t>(shape_numel(c.out)));
    std::uniform_real_distribution<double> dist(-3.0, 3.0);
    std::vector<T> a(static_cast<size_t>(shape_numel(c.a))), b(static_cast<size_t>(shape_numel(c.b)));
    for (T& x : a) x = static_cast<T>(dist(rng));
    for (T& x : b) x = static_cast<T>(dist(rng));
    for (int threads : {1, 2}) {
      for (int op = 0; op < 4; ++op) {
        Tensor out = run_one(NodeBuilder(ops[op], 14).node(), {make_tensor(c.a, a), make_tensor(c.b, b)}, threads);
        const auto expected = broadcast_reference<T>(c.a, a, c.b, b, c.out, [op](T x, T y) {
          switch (op) {
            case 0: return static_cast<T>(x + y);
            case 1: return static_cast<T>(x - y);
            case 2: return static_cast<T>(x * y);
            default: return static_cast<T>(x / y);
          }
        });
        const auto got = to_vector<T>(out);
        ASSERT_EQ(got, expected) << ops[op] << " " << shape_to_string(c.a) << " " << shape_to_string(c.b) << " "
                                 << isa;
      }
    }
  }
  vector_math_force_isa("");
}

TEST(ElementwiseTest, FloatFastPathsMatchReferenceExactly) {
  for (const char* isa : {"generic", "avx2", "avx512"}) check_binary_fast_paths<float>(isa);
}

TEST(ElementwiseTest, DoubleFastPathsMatchReferenceExactly) {
  for (const char* isa : {"generic", "avx2", "avx512"}) check_binary_fast_paths<double>(isa);
}

template <class T>
class IntegerBinaryTest : public ::testing::Test {};
using IntTypes = ::testing::Types<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(IntegerBinaryTest, IntTypes);

TYPED_TEST(IntegerBinaryTest, ArithmeticAndBroadcast) {
  using T = TypeParam;
  const Tensor a = make_tensor<T>({2, 3}, {T(10), T(20), T(30), T(41), T(52), T(63)});
  const Tensor b = make_tensor<T>({3}, {T(3), T(7), T(5)});
  EXPECT_EQ(to_vector<T>(run_one(NodeBuilder("Add", 14).node(), {a, b})),
            (std::vector<T>{T(13), T(27), T(35), T(44), T(59), T(68)}));
  EXPECT_EQ(to_vector<T>(run_one(NodeBuilder("Sub", 14).node(), {a, b}, 3)),
            (std::vector<T>{T(7), T(13), T(25), T(38), T(45), T(58)}));
  EXPECT_EQ(to_vector<T>(run_one(NodeBuilder("Mul", 14).node(), {a, b})),
            (std::vector<T>{T(30), T(140), T(150), T(123), T(364), T(315)}));
  EXPECT_EQ(to_vector<T>(run_one(NodeBuilder("Div", 14).node(), {a, b})),
            (std::vector<T>{T(3), T(2), T(6), T(13), T(7), T(12)}));
}

TYPED_TEST(IntegerBinaryTest, OverflowWrapsAndDivisionByZeroIsAnError) {
  using T = TypeParam;
  const T max = std::numeric_limits<T>::max();
  const Tensor a = make_tensor<T>({2}, {max, max});
  const Tensor b = make_tensor<T>({2}, {T(1), max});
  auto sum = to_vector<T>(run_one(NodeBuilder("Add", 14).node(), {a, b}));
  EXPECT_EQ(sum[0], std::numeric_limits<T>::min());
  auto product = to_vector<T>(run_one(NodeBuilder("Mul", 14).node(), {a, b}));
  EXPECT_EQ(product[1], T(1));  // max*max wraps to 1 for both signed (odd max) and unsigned
  const Tensor zero = make_tensor<T>({2}, {T(1), T(0)});
  auto result = run_kernel(NodeBuilder("Div", 14).name("d").node(), {a, zero});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("Div node 'd'"), std::string::npos) << result.status().message();
  EXPECT_NE(result.status().message().find("division by zero"), std::string::npos);
}

TEST(ElementwiseTest, SignedDivisionTruncatesTowardZeroAndMinOverMinusOneWraps) {
  const int32_t min = std::numeric_limits<int32_t>::min();
  const Tensor a = make_tensor<int32_t>({4}, {-7, 7, -7, min});
  const Tensor b = make_tensor<int32_t>({4}, {2, -2, -2, -1});
  EXPECT_EQ(to_vector<int32_t>(run_one(NodeBuilder("Div", 14).node(), {a, b})),
            (std::vector<int32_t>{-3, -3, 3, min}));
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("Div", 7).node(),
                                       {make_tensor<int64_t>({1}, {min64}), make_tensor<int64_t>({}, {-1})})),
            (std::vector<int64_t>{min64}));
}

TEST(ElementwiseTest, FloatDivisionByZeroGivesInfinity) {
  auto out = to_vector<float>(run_one(NodeBuilder("Div", 14).node(),
                                      {make_tensor<float>({2}, {1.0f, -1.0f}), make_tensor<float>({1}, {0.0f})}));
  EXPECT_TRUE(std::isinf(out[0]) && out[0] > 0);
  EXPECT_TRUE(std::isinf(out[1]) && out[1] < 0);
}

TEST(ElementwiseTest, DoubleKeepsPrecision) {
  auto out = to_vector<double>(run_one(NodeBuilder("Add", 14).node(), {make_tensor<double>({1}, {1.0}),
                                                                       make_tensor<double>({1}, {1e-12})}));
  EXPECT_EQ(out[0], 1.0 + 1e-12);
}

TEST(ElementwiseTest, HalfTypesComputeInFloat) {
  auto f16 = to_float_vector(run_one(NodeBuilder("Mul", 14).node(), {make_half_tensor<Float16>({3}, {1.5f, -2.0f, 0.25f}),
                                                                      make_half_tensor<Float16>({1}, {2.0f})}));
  EXPECT_EQ(f16, (std::vector<float>{3.0f, -4.0f, 0.5f}));
  auto bf16 = to_float_vector(run_one(NodeBuilder("Sub", 14).node(), {make_half_tensor<BFloat16>({2}, {1.0f, 8.0f}),
                                                                       make_half_tensor<BFloat16>({2}, {0.5f, 2.0f})}));
  EXPECT_EQ(bf16, (std::vector<float>{0.5f, 6.0f}));
}

TEST(ElementwiseTest, BadBroadcastNamesNodeInputAndShapes) {
  auto result = run_kernel(NodeBuilder("Add", 14).name("a").node(),
                           {make_tensor<float>({3, 4}, std::vector<float>(12)), make_tensor<float>({3, 5}, std::vector<float>(15))});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "Add node 'a': input 1 shape [3,5] cannot broadcast with [3,4]");
}

TEST(ElementwiseTest, MismatchedTypesAreRejected) {
  auto result = run_kernel(NodeBuilder("Add", 14).node(),
                           {make_tensor<float>({1}, {1.0f}), make_tensor<int32_t>({1}, {1})});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
}

TEST(ElementwiseTest, ReluOnFloatsAndIntegersFromOpset14) {
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Relu", 6).node(), {make_tensor<float>({4}, {-1.0f, 0.0f, 2.5f, -0.0f})})),
            (std::vector<float>{0.0f, 0.0f, 2.5f, 0.0f}));
  EXPECT_EQ(to_vector<int8_t>(run_one(NodeBuilder("Relu", 14).node(), {make_tensor<int8_t>({3}, {-128, 5, 0})}, 3)),
            (std::vector<int8_t>{0, 5, 0}));
  EXPECT_EQ(to_vector<int64_t>(run_one(NodeBuilder("Relu", 14).node(), {make_tensor<int64_t>({2}, {-9, 9})})),
            (std::vector<int64_t>{0, 9}));
  auto old = run_kernel(NodeBuilder("Relu", 13).node(), {make_tensor<int32_t>({1}, {1})});
  EXPECT_FALSE(old.has_value());
}

TEST(ElementwiseTest, SigmoidIsStableForLargeMagnitudes) {
  auto out = to_vector<float>(run_one(NodeBuilder("Sigmoid", 13).node(),
                                      {make_tensor<float>({5}, {-1000.0f, -20.0f, 0.0f, 20.0f, 1000.0f})}));
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_NEAR(out[1], 2.0611536e-09f, 1e-15f);
  EXPECT_EQ(out[2], 0.5f);
  EXPECT_NEAR(out[3], 1.0f, 1e-7f);
  EXPECT_EQ(out[4], 1.0f);
  for (float v : out) EXPECT_FALSE(std::isnan(v));
  auto d = to_vector<double>(run_one(NodeBuilder("Sigmoid", 13).node(), {make_tensor<double>({1}, {-800.0})}));
  EXPECT_GE(d[0], 0.0);
  EXPECT_FALSE(std::isnan(d[0]));
}

TEST(ElementwiseTest, TanhAllFloatTypesLargeInput) {
  const size_t n = 50000;
  auto x = random_floats(n, 7);
  auto out = to_vector<float>(run_one(NodeBuilder("Tanh", 13).node(), {make_tensor<float>({static_cast<int64_t>(n)}, x)}, 3));
  for (size_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], std::tanh(x[i]), 1e-6f);
  auto h = to_float_vector(run_one(NodeBuilder("Tanh", 13).node(), {make_half_tensor<Float16>({2}, {0.5f, -100.0f})}));
  EXPECT_NEAR(h[0], std::tanh(0.5f), 1e-3f);
  EXPECT_EQ(h[1], -1.0f);
  auto bf = to_float_vector(run_one(NodeBuilder("Sigmoid", 13).node(), {make_half_tensor<BFloat16>({1}, {0.0f})}));
  EXPECT_EQ(bf[0], 0.5f);
  auto bad = run_kernel(NodeBuilder("Tanh", 13).node(), {make_tensor<int32_t>({1}, {1})});
  EXPECT_FALSE(bad.has_value());
}

TEST(ElementwiseTest, LegacyBroadcastAttributeBeforeOpset7) {
  const Tensor a = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor row = make_tensor<float>({3}, {10, 20, 30});
  const Tensor column = make_tensor<float>({2}, {100, 200});
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Add", 6).attr_int("broadcast", 1).node(), {a, row})),
            (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Mul", 1).attr_int("broadcast", 1).attr_int("axis", 0).node(),
                                     {a, make_tensor<float>({2}, {1, -1})}, 3)),
            (std::vector<float>{1, 2, 3, -4, -5, -6}));
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Sub", 6).attr_int("broadcast", 1).node(),
                                     {a, make_tensor<float>({}, {1})})),
            (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // Without broadcast=1 the shapes must match; a wrong axis is an error, not a crash.
  EXPECT_FALSE(run_kernel(NodeBuilder("Add", 6).node(), {a, row}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Add", 6).attr_int("broadcast", 1).node(), {a, column}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Add", 6).attr_int("broadcast", 1).attr_int("axis", 2).node(), {a, column})
                   .has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Add", 6)
                              .attr_int("broadcast", 1)
                              .attr_int("axis", std::numeric_limits<int64_t>::max())
                              .node(),
                          {a, column})
                   .has_value());
  EXPECT_EQ(to_vector<float>(run_one(NodeBuilder("Div", 6).attr_int("broadcast", 1).attr_int("axis", -2).node(),
                                     {a, make_tensor<float>({2, 1}, {1, 2})})),
            (std::vector<float>{1, 2, 3, 2, 2.5f, 3}));
  EXPECT_NE(find_kernel("", "Div", 24), nullptr);
  // int8 arrived with opset 14.
  EXPECT_FALSE(run_kernel(NodeBuilder("Add", 6).attr_int("broadcast", 1).node(),
                          {make_tensor<int8_t>({1}, {1}), make_tensor<int8_t>({1}, {1})})
                   .has_value());
}

TEST(ElementwiseTest, BroadcastOutputChunksAcrossRowsMatchReference) {
  // Inner runs shorter than a parallel chunk: chunks start mid-row, so the odometer must resume correctly.
  const Shape a_shape{37, 1, 29};
  const Shape b_shape{1, 41, 29};
  const auto a = random_floats(static_cast<size_t>(shape_numel(a_shape)), 11);
  const auto b = random_floats(static_cast<size_t>(shape_numel(b_shape)), 12);
  for (int threads : {1, 3}) {
    auto got = to_vector<float>(run_one(NodeBuilder("Sub", 14).node(), {make_tensor(a_shape, a), make_tensor(b_shape, b)},
                                        threads));
    auto expected = broadcast_reference<float>(a_shape, a, b_shape, b, {37, 41, 29},
                                               [](float x, float y) { return x - y; });
    ASSERT_EQ(got, expected);
  }
}

}  // namespace
}  // namespace nxrt::cpu::testing
