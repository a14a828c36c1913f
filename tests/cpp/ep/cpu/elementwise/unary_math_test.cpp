#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <class T>
std::vector<T> random_values(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

struct FloatCase {
  const char* op;
  int opset;
  double lo;
  double hi;
  double (*reference)(double);
};

double reciprocal(double x) { return 1.0 / x; }
double round_even(double x) { return std::nearbyint(x); }
double floor_d(double x) { return std::floor(x); }

const FloatCase kFloatCases[] = {
    {"Exp", 13, -20, 20, [](double x) { return std::exp(x); }},
    {"Log", 13, 0.001, 100, [](double x) { return std::log(x); }},
    {"Sqrt", 13, 0, 100, [](double x) { return std::sqrt(x); }},
    {"Reciprocal", 13, 0.1, 10, reciprocal},
    {"Floor", 13, -50, 50, floor_d},
    {"Ceil", 13, -50, 50, [](double x) { return std::ceil(x); }},
    {"Round", 22, -50, 50, round_even},
    {"Erf", 13, -4, 4, [](double x) { return std::erf(x); }},
    {"Sin", 22, -10, 10, [](double x) { return std::sin(x); }},
    {"Cos", 22, -10, 10, [](double x) { return std::cos(x); }},
    {"Tan", 22, -1.5, 1.5, [](double x) { return std::tan(x); }},
    {"Asin", 22, -1, 1, [](double x) { return std::asin(x); }},
    {"Acos", 22, -1, 1, [](double x) { return std::acos(x); }},
    {"Atan", 22, -10, 10, [](double x) { return std::atan(x); }},
    {"Sinh", 22, -5, 5, [](double x) { return std::sinh(x); }},
    {"Cosh", 22, -5, 5, [](double x) { return std::cosh(x); }},
    {"Asinh", 22, -10, 10, [](double x) { return std::asinh(x); }},
    {"Acosh", 22, 1, 10, [](double x) { return std::acosh(x); }},
    {"Atanh", 22, -0.99, 0.99, [](double x) { return std::atanh(x); }},
    {"Abs", 13, -10, 10, [](double x) { return std::fabs(x); }},
    {"Neg", 13, -10, 10, [](double x) { return -x; }},
    {"Sign", 13, -10, 10, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }},
};

class FloatUnaryTest : public ::testing::TestWithParam<std::tuple<FloatCase, int>> {};

// 40000 elements crosses the parallel grain, so chunk boundaries are exercised with 3 threads.
TEST_P(FloatUnaryTest, MatchesReferenceInEveryFloatType) {
  const auto& [c, threads] = GetParam();
  const size_t n = 40000;
  const auto xd = random_values<double>(n, c.lo, c.hi, 7);
  const graph::Node node = NodeBuilder(c.op, c.opset).node();

  auto got_d = to_vector<double>(run_one(node, {make_tensor<double>({40, 1000}, xd)}, threads));
  ASSERT_EQ(got_d.size(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(got_d[i], c.reference(xd[i])) << c.op << " f64 at " << i;

  std::vector<float> xf(xd.begin(), xd.end());
  auto got_f = to_vector<float>(run_one(node, {make_tensor<float>({n}, xf)}, threads));
  for (size_t i = 0; i < n; ++i) {
    const double expected = c.reference(xf[i]);
    ASSERT_NEAR(got_f[i], expected, 2e-6 * std::max(1.0, std::fabs(expected))) << c.op << " f32 at " << i;
  }

  std::vector<float> small(xf.begin(), xf.begin() + 64);
  for (const DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    Tensor input = type == DataType::kFloat16 ? make_half_tensor<Float16>({64}, small)
                                              : make_half_tensor<BFloat16>({64}, small);
    const auto in = to_float_vector(input);
    const auto got = to_float_vector(run_one(node, {input}, threads));
    const double tolerance = type == DataType::kFloat16 ? 2e-3 : 1e-2;
    for (size_t i = 0; i < in.size(); ++i) {
      const double expected = c.reference(in[i]);
      if (type == DataType::kFloat16 && std::fabs(expected) > 65520.0) {
        ASSERT_TRUE(std::isinf(got[i])) << c.op << " float16 overflow at " << i;
        continue;
      }
      ASSERT_NEAR(got[i], expected, tolerance * std::max(1.0, std::fabs(expected))) << c.op << " half at " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, FloatUnaryTest, ::testing::Combine(::testing::ValuesIn(kFloatCases), ::testing::Values(1, 3)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).op) + "_t" + std::to_string(std::get<1>(info.param));
                         });

TEST(UnaryMathTest, IntegerAbsAndNegWrapAtTheMinimum) {
  const int32_t min32 = std::numeric_limits<int32_t>::min();
  auto abs32 = to_vector<int32_t>(run_one(NodeBuilder("Abs", 13).node(), {make_tensor<int32_t>({4}, {min32, -5, 0, 7})}));
  EXPECT_EQ(abs32, (std::vector<int32_t>{min32, 5, 0, 7}));
  auto neg32 = to_vector<int32_t>(run_one(NodeBuilder("Neg", 13).node(), {make_tensor<int32_t>({3}, {min32, -5, 7})}));
  EXPECT_EQ(neg32, (std::vector<int32_t>{min32, 5, -7}));
  const int8_t min8 = std::numeric_limits<int8_t>::min();
  auto abs8 = to_vector<int8_t>(run_one(NodeBuilder("Abs", 13).node(), {make_tensor<int8_t>({2}, {min8, -3})}));
  EXPECT_EQ(abs8, (std::vector<int8_t>{min8, 3}));
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  auto neg64 = to_vector<int64_t>(run_one(NodeBuilder("Neg", 13).node(), {make_tensor<int64_t>({2}, {min64, 9})}));
  EXPECT_EQ(neg64, (std::vector<int64_t>{min64, -9}));
  auto absu = to_vector<uint16_t>(run_one(NodeBuilder("Abs", 13).node(), {make_tensor<uint16_t>({2}, {65535, 1})}));
  EXPECT_EQ(absu, (std::vector<uint16_t>{65535, 1}));
}

TEST(UnaryMathTest, SignOfIntegersAndSpecialFloats) {
  auto s = to_vector<int16_t>(run_one(NodeBuilder("Sign", 13).node(), {make_tensor<int16_t>({3}, {-32768, 0, 5})}));
  EXPECT_EQ(s, (std::vector<int16_t>{-1, 0, 1}));
  auto u = to_vector<uint64_t>(run_one(NodeBuilder("Sign", 9).node(), {make_tensor<uint64_t>({2}, {0, ~uint64_t{0}})}));
  EXPECT_EQ(u, (std::vector<uint64_t>{0, 1}));
  auto f = to_vector<double>(run_one(NodeBuilder("Sign", 13).node(), {make_tensor<double>({4}, {kNaN, -kInf, -0.0, 1e-300})}));
  EXPECT_TRUE(std::isnan(f[0]));
  EXPECT_EQ(f[1], -1.0);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_EQ(f[3], 1.0);
}

TEST(UnaryMathTest, RoundIsHalfToEven) {
  auto r = to_vector<float>(run_one(NodeBuilder("Round", 11).node(),
                                    {make_tensor<float>({10}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4999f, 2.5001f,
                                                                std::numeric_limits<float>::infinity(), 8388609.0f})}));
  EXPECT_EQ(r, (std::vector<float>{0.0f, 2.0f, 2.0f, -0.0f, -2.0f, -2.0f, 2.0f, 3.0f,
                                   std::numeric_limits<float>::infinity(), 8388609.0f}));
  auto nan = to_vector<double>(run_one(NodeBuilder("Round", 22).node(), {make_tensor<double>({1}, {kNaN})}));
  EXPECT_TRUE(std::isnan(nan[0]));
}

TEST(UnaryMathTest, NaNPropagatesThroughFloatOps) {
  for (const char* op : {"Exp", "Log", "Sqrt", "Floor", "Ceil", "Sin", "Atanh", "Erf", "Abs", "Neg", "Reciprocal"}) {
    auto y = to_vector<float>(run_one(NodeBuilder(op, 13 + 9 * (op[0] == 'S' || op[0] == 'A')).node(),
                                      {make_tensor<float>({1}, {std::numeric_limits<float>::quiet_NaN()})}));
    EXPECT_TRUE(std::isnan(y[0])) << op;
  }
  auto log = to_vector<float>(run_one(NodeBuilder("Log", 13).node(), {make_tensor<float>({2}, {0.0f, -1.0f})}));
  EXPECT_EQ(log[0], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(log[1]));
}

TEST(UnaryMathTest, DoubleKeepsFullPrecision) {
  auto e = to_vector<double>(run_one(NodeBuilder("Erf", 13).node(), {make_tensor<double>({2}, {1e-10, 0.5})}));
  EXPECT_EQ(e[0], std::erf(1e-10));
  EXPECT_EQ(e[1], std::erf(0.5));
  auto s = to_vector<double>(run_one(NodeBuilder("Sin", 7).node(), {make_tensor<double>({1}, {1e-9})}));
  EXPECT_EQ(s[0], std::sin(1e-9));
}

TEST(UnaryMathTest, ErfOnIntegersBeforeOpset13Truncates) {
  auto y = to_vector<int32_t>(run_one(NodeBuilder("Erf", 9).node(), {make_tensor<int32_t>({4}, {-7, -1, 0, 6})}));
  EXPECT_EQ(y, (std::vector<int32_t>{-1, 0, 0, 1}));
  auto rejected = run_kernel(NodeBuilder("Erf", 13).node(), {make_tensor<int32_t>({1}, {1})});
  EXPECT_FALSE(rejected.has_value());
}

TEST(UnaryMathTest, IsNaNAndIsInfWithDetectionAttributes) {
  const std::vector<float> x = {1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity()};
  EXPECT_EQ(to_vector<bool>(run_one(NodeBuilder("IsNaN", 13).node(), {make_tensor<float>({4}, x)})),
            (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(to_vector<bool>(run_one(NodeBuilder("IsInf", 10).node(), {make_tensor<float>({4}, x)})),
            (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(to_vector<bool>(run_one(NodeBuilder("IsInf", 20).attr_int("detect_negative", 0).node(),
                                    {make_half_tensor<Float16>({4}, x)})),
            (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(to_vector<bool>(run_one(NodeBuilder("IsInf", 20).attr_int("detect_positive", 0).node(),
                                    {make_half_tensor<BFloat16>({4}, x)})),
            (std::vector<bool>{false, false, false, true}));
  // Float16 and bfloat16 are not IsInf types before opset 20.
  EXPECT_FALSE(run_kernel(NodeBuilder("IsInf", 10).node(), {make_half_tensor<Float16>({1}, {1.0f})}).has_value());
}

Tensor float8_tensor(DataType type, const std::vector<uint8_t>& bytes) {
  auto t = Tensor::allocate(type, {static_cast<int64_t>(bytes.size())});
  EXPECT_TRUE(t.has_value());
  if (!bytes.empty()) std::memcpy(t->raw_data(), bytes.data(), bytes.size());
  return *t;
}

TEST(UnaryMathTest, IsNaNAndIsInfReadFloat8Formats) {
  const std::vector<uint8_t> bytes = {0x00, 0x7f, 0xff, 0x7c, 0xfc, 0x7d, 0x80, 0x38};
  auto nan = [&](DataType type) {
    return to_vector<bool>(run_one(NodeBuilder("IsNaN", 20).node(), {float8_tensor(type, bytes)}));
  };
  auto inf = [&](DataType type) {
    return to_vector<bool>(run_one(NodeBuilder("IsInf", 20).node(), {float8_tensor(type, bytes)}));
  };
  using V = std::vector<bool>;
  EXPECT_EQ(nan(DataType::kFloat8E4M3FN), (V{false, true, true, false, false, false, false, false}));
  EXPECT_EQ(nan(DataType::kFloat8E5M2), (V{false, true, true, false, false, true, false, false}));
  EXPECT_EQ(nan(DataType::kFloat8E4M3FNUZ), (V{false, false, false, false, false, false, true, false}));
  EXPECT_EQ(nan(DataType::kFloat8E5M2FNUZ), (V{false, false, false, false, false, false, true, false}));
  EXPECT_EQ(inf(DataType::kFloat8E5M2), (V{false, false, false, true, true, false, false, false}));
  EXPECT_EQ(inf(DataType::kFloat8E4M3FN), V(8, false));
  EXPECT_FALSE(run_kernel(NodeBuilder("IsNaN", 19).node(), {float8_tensor(DataType::kFloat8E5M2, {0})}).has_value());
}

TEST(UnaryMathTest, NotAndBitwiseNot) {
  EXPECT_EQ(to_vector<bool>(run_one(NodeBuilder("Not", 1).node(), {make_tensor<bool>({2}, {true, false})})),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(to_vector<int8_t>(run_one(NodeBuilder("BitwiseNot", 18).node(), {make_tensor<int8_t>({3}, {0, -1, 127})})),
            (std::vector<int8_t>{-1, 0, -128}));
  EXPECT_EQ(to_vector<uint16_t>(run_one(NodeBuilder("BitwiseNot", 18).node(), {make_tensor<uint16_t>({2}, {0, 0x00ff})})),
            (std::vector<uint16_t>{0xffff, 0xff00}));
  EXPECT_EQ(to_vector<uint64_t>(run_one(NodeBuilder("BitwiseNot", 18).node(), {make_tensor<uint64_t>({1}, {1})})),
            (std::vector<uint64_t>{~uint64_t{1}}));
  EXPECT_FALSE(run_kernel(NodeBuilder("BitwiseNot", 18).node(), {make_tensor<float>({1}, {1})}).has_value());
}

TEST(UnaryMathTest, EmptyAndScalarTensors) {
  for (int threads : {1, 3}) {
    Tensor empty = run_one(NodeBuilder("Exp", 13).node(), {make_tensor<float>({2, 0, 3}, {})}, threads);
    EXPECT_EQ(empty.shape(), (Shape{2, 0, 3}));
    Tensor nan_empty = run_one(NodeBuilder("IsNaN", 13).node(), {make_tensor<double>({0}, {})}, threads);
    EXPECT_EQ(nan_empty.dtype(), DataType::kBool);
    EXPECT_EQ(nan_empty.numel(), 0);
    Tensor scalar = run_one(NodeBuilder("Sqrt", 13).node(), {make_tensor<double>({}, {4.0})}, threads);
    EXPECT_EQ(scalar.shape(), Shape{});
    EXPECT_EQ(to_vector<double>(scalar), std::vector<double>{2.0});
  }
}

TEST(UnaryMathTest, TypesFollowTheOpsetRows) {
  EXPECT_FALSE(run_kernel(NodeBuilder("Abs", 12).node(), {make_half_tensor<BFloat16>({1}, {1.0f})}).has_value());
  EXPECT_TRUE(run_kernel(NodeBuilder("Abs", 13).node(), {make_half_tensor<BFloat16>({1}, {1.0f})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Abs", 5).node(), {make_tensor<int32_t>({1}, {1})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Neg", 13).node(), {make_tensor<uint8_t>({1}, {1})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Sin", 21).node(), {make_half_tensor<BFloat16>({1}, {1.0f})}).has_value());
  EXPECT_TRUE(run_kernel(NodeBuilder("Sin", 22).node(), {make_half_tensor<BFloat16>({1}, {1.0f})}).has_value());
  EXPECT_FALSE(run_kernel(NodeBuilder("Round", 10).node(), {make_tensor<float>({1}, {1})}).has_value());
}

TEST(UnaryMathTest, ReshapeRejectsBadInputsNamingTheNode) {
  // Direct kernel use: the session's type check is bypassed, so reshape must catch a wrong type itself.
  graph::Node node = NodeBuilder("Exp", 13).name("e1").node();
  node.inputs = {0};
  const KernelDef* def = find_kernel(node.domain, node.op_type, node.opset);
  ASSERT_NE(def, nullptr);
  KernelInfo info{node, {DataType::kInt32}, {DataType::kUndefined}, {nullptr}};
  auto kernel = def->create(info);
  ASSERT_TRUE(kernel.has_value());
  Tensor ints = make_tensor<int32_t>({1}, {1});
  std::vector<const Tensor*> inputs = {&ints};
  std::vector<OutputDesc> outputs;
  Status status = (*kernel)->reshape(inputs, outputs);
  EXPECT_FALSE(status.is_ok());
  EXPECT_NE(status.to_string().find("e1"), std::string::npos) << status.to_string();
  EXPECT_NE(status.to_string().find("int32"), std::string::npos) << status.to_string();
  std::vector<const Tensor*> missing = {nullptr};
  EXPECT_FALSE((*kernel)->reshape(missing, outputs).is_ok());
}

}  // namespace
}  // namespace nxrt::cpu::testing
