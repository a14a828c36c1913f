#include <cmath>
#include <limits>
#include <string>

#include "core/float8.h"
#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

auto cast_node(DataType to, int opset = 21) {
  return NodeBuilder("Cast", opset).attr_int("to", static_cast<int64_t>(to)).node();
}

TEST(Float8Test, KnownEncodings) {
  EXPECT_EQ(float_to_float8(1.0f, Float8Format::kE4M3FN, true), 0x38);
  EXPECT_EQ(float_to_float8(-448.0f, Float8Format::kE4M3FN, true), 0xFE);
  EXPECT_EQ(float_to_float8(0.001953125f, Float8Format::kE4M3FN, true), 0x01);  // smallest subnormal
  EXPECT_EQ(float_to_float8(0.0009765625f, Float8Format::kE4M3FN, true), 0x00);  // half of it: ties to even
  EXPECT_EQ(float_to_float8(0.00146484375f, Float8Format::kE4M3FN, true), 0x01);
  EXPECT_EQ(float_to_float8(464.0f, Float8Format::kE4M3FN, false), 0x7E);  // tie rounds to even 448
  EXPECT_EQ(float_to_float8(1.0f, Float8Format::kE4M3FNUZ, true), 0x40);
  EXPECT_EQ(float_to_float8(1.0f, Float8Format::kE5M2, true), 0x3C);
  EXPECT_EQ(float_to_float8(1.0f, Float8Format::kE5M2FNUZ, true), 0x40);
  EXPECT_EQ(float_to_float8(-0.0f, Float8Format::kE4M3FN, true), 0x80);
  EXPECT_EQ(float_to_float8(-0.0f, Float8Format::kE4M3FNUZ, true), 0x00);
  EXPECT_EQ(float8_max(Float8Format::kE4M3FN), 448.0f);
  EXPECT_EQ(float8_max(Float8Format::kE4M3FNUZ), 240.0f);
  EXPECT_EQ(float8_max(Float8Format::kE5M2), 57344.0f);
  EXPECT_EQ(float8_max(Float8Format::kE5M2FNUZ), 57344.0f);
}

TEST(Float8Test, SaturationAndSpecialValuesFollowTheCastTable) {
  // saturate = true
  EXPECT_EQ(float_to_float8(1000.0f, Float8Format::kE4M3FN, true), 0x7E);
  EXPECT_EQ(float_to_float8(-kInf, Float8Format::kE4M3FN, true), 0xFE);
  EXPECT_EQ(float_to_float8(kInf, Float8Format::kE4M3FNUZ, true), 0x7F);
  EXPECT_EQ(float_to_float8(-kInf, Float8Format::kE4M3FNUZ, true), 0xFF);
  EXPECT_EQ(float_to_float8(1000.0f, Float8Format::kE4M3FNUZ, true), 0x7F);
  EXPECT_EQ(float_to_float8(kInf, Float8Format::kE5M2, true), 0x7B);
  EXPECT_EQ(float_to_float8(-1e6f, Float8Format::kE5M2FNUZ, true), 0xFF);
  EXPECT_EQ(float_to_float8(kInf, Float8Format::kE5M2FNUZ, true), 0x7F);
  EXPECT_EQ(float_to_float8(kInf, Float8Format::kE5M2FNUZ, false), 0x80);
  // saturate = false
  EXPECT_EQ(float_to_float8(1000.0f, Float8Format::kE4M3FN, false), 0x7F);
  EXPECT_EQ(float_to_float8(kInf, Float8Format::kE4M3FN, false), 0x7F);
  EXPECT_EQ(float_to_float8(1e6f, Float8Format::kE4M3FNUZ, false), 0x80);
  EXPECT_EQ(float_to_float8(1e6f, Float8Format::kE5M2, false), 0x7C);
  EXPECT_EQ(float_to_float8(-kInf, Float8Format::kE5M2, false), 0xFC);
  EXPECT_EQ(float_to_float8(1e6f, Float8Format::kE5M2FNUZ, false), 0x80);
  for (auto format : {Float8Format::kE4M3FN, Float8Format::kE4M3FNUZ, Float8Format::kE5M2, Float8Format::kE5M2FNUZ}) {
    EXPECT_TRUE(std::isnan(float8_to_float(float_to_float8(kNan, format, true), format)));
  }
  EXPECT_TRUE(std::isinf(float8_to_float(0x7C, Float8Format::kE5M2)));
  EXPECT_TRUE(std::isnan(float8_to_float(0x80, Float8Format::kE5M2FNUZ)));
}

TEST(Float8Test, EveryFiniteCodeRoundTrips) {
  for (auto format : {Float8Format::kE4M3FN, Float8Format::kE4M3FNUZ, Float8Format::kE5M2, Float8Format::kE5M2FNUZ}) {
    for (int code = 0; code < 256; ++code) {
      const float value = float8_to_float(static_cast<uint8_t>(code), format);
      if (!std::isfinite(value)) continue;
      EXPECT_EQ(float_to_float8(value, format, false), code) << "format " << static_cast<int>(format) << " value " << value;
    }
  }
}

TEST(CastTest, FloatToIntegersTruncatesAndStaysDefined) {
  const Tensor x = make_tensor<float>({5}, {1.7f, -1.7f, kNan, 1e20f, -1.0f});
  EXPECT_EQ(to_vector<int64_t>(run_one(cast_node(DataType::kInt64), {x})),
            (std::vector<int64_t>{1, -1, 0, std::numeric_limits<int64_t>::max(), -1}));
  EXPECT_EQ(to_vector<uint8_t>(run_one(cast_node(DataType::kUInt8), {make_tensor<float>({2}, {-1.0f, 200.9f})})),
            (std::vector<uint8_t>{255, 200}));
  EXPECT_EQ(to_vector<bool>(run_one(cast_node(DataType::kBool), {x})), (std::vector<bool>{true, true, true, true, true}));
}

TEST(CastTest, NumericConversionsAcrossFamiliesWithThreads) {
  const int64_t n = 40000;
  std::vector<int32_t> ints(n);
  for (int64_t i = 0; i < n; ++i) ints[i] = static_cast<int32_t>(i - n / 2);
  Tensor as_double = run_one(cast_node(DataType::kFloat64, 13), {make_tensor<int32_t>({n}, ints)}, 3);
  auto doubles = to_vector<double>(as_double);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(doubles[i], static_cast<double>(ints[i]));
  EXPECT_EQ(to_float_vector(run_one(cast_node(DataType::kFloat16, 6), {make_tensor<double>({2}, {0.5, 65504.0})})),
            (std::vector<float>{0.5f, 65504.0f}));
  EXPECT_EQ(to_float_vector(run_one(cast_node(DataType::kBFloat16), {make_tensor<float>({1}, {3.0f})})),
            (std::vector<float>{3.0f}));
  EXPECT_EQ(to_vector<float>(run_one(cast_node(DataType::kFloat32), {make_tensor<bool>({2}, {true, false})})),
            (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ(to_vector<int8_t>(run_one(cast_node(DataType::kInt8), {make_tensor<int32_t>({1}, {300})})),
            (std::vector<int8_t>{44}));
  EXPECT_EQ(to_vector<float>(run_one(cast_node(DataType::kFloat32), {make_half_tensor<Float16>({1}, {0.25f})})),
            (std::vector<float>{0.25f}));
  const Tensor same = make_tensor<int16_t>({2}, {7, -7});
  EXPECT_EQ(to_vector<int16_t>(run_one(cast_node(DataType::kInt16), {same})), (std::vector<int16_t>{7, -7}));
}

TEST(CastTest, FloatsFormatAsNumpyStrings) {
  const Tensor x = make_tensor<float>({8}, {0.1f, 100.0f, 1e20f, 1.5e-7f, kNan, -kInf, 0.47892547f, -2.5f});
  EXPECT_EQ(to_vector<std::string>(run_one(cast_node(DataType::kString), {x})),
            (std::vector<std::string>{"0.1", "100.0", "1e+20", "1.5e-07", "nan", "-inf", "0.47892547", "-2.5"}));
  EXPECT_EQ(to_vector<std::string>(run_one(cast_node(DataType::kString), {make_tensor<double>({2}, {0.1, 1e16})})),
            (std::vector<std::string>{"0.1", "1e+16"}));
  EXPECT_EQ(to_vector<std::string>(run_one(cast_node(DataType::kString), {make_half_tensor<Float16>({2}, {0.1f, 1024.0f})})),
            (std::vector<std::string>{"0.1", "1024.0"}));
  EXPECT_EQ(to_vector<std::string>(run_one(cast_node(DataType::kString), {make_tensor<int64_t>({2}, {-5, 12})})),
            (std::vector<std::string>{"-5", "12"}));
  EXPECT_EQ(to_vector<std::string>(run_one(cast_node(DataType::kString), {make_tensor<bool>({2}, {true, false})})),
            (std::vector<std::string>{"True", "False"}));
}

TEST(CastTest, StringsParseToNumbers) {
  const Tensor s = make_tensor<std::string>({6}, {"1.5", "NaN", "INF", "+INF", "-INF", "-0.25"});
  auto f = to_vector<float>(run_one(cast_node(DataType::kFloat32), {s}));
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_TRUE(std::isnan(f[1]));
  EXPECT_EQ(f[2], kInf);
  EXPECT_EQ(f[3], kInf);
  EXPECT_EQ(f[4], -kInf);
  EXPECT_EQ(f[5], -0.25f);
  EXPECT_EQ(to_vector<int64_t>(run_one(cast_node(DataType::kInt64), {make_tensor<std::string>({3}, {"42", "-7", "3.9"})})),
            (std::vector<int64_t>{42, -7, 3}));
  EXPECT_EQ(to_vector<uint8_t>(run_one(cast_node(DataType::kUInt8), {make_tensor<std::string>({1}, {"200"})})),
            (std::vector<uint8_t>{200}));
  EXPECT_EQ(to_vector<bool>(run_one(cast_node(DataType::kBool), {make_tensor<std::string>({3}, {"True", "false", "2"})})),
            (std::vector<bool>{true, false, true}));
  auto bad = run_kernel(NodeBuilder("Cast", 13).name("c").attr_int("to", 1).node(), {make_tensor<std::string>({1}, {"abc"})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("Cast node 'c'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("abc"), std::string::npos);
}

TEST(CastTest, Float8WithSaturateAttribute) {
  const Tensor x = make_tensor<float>({3}, {1.0f, 1000.0f, -kInf});
  Tensor sat = run_one(cast_node(DataType::kFloat8E4M3FN, 19), {x});
  ASSERT_EQ(sat.dtype(), DataType::kFloat8E4M3FN);
  const uint8_t* bits = sat.data<uint8_t>();
  EXPECT_EQ(bits[0], 0x38);
  EXPECT_EQ(bits[1], 0x7E);
  EXPECT_EQ(bits[2], 0xFE);
  Tensor raw = run_one(NodeBuilder("Cast", 19).attr_int("to", 17).attr_int("saturate", 0).node(), {x});
  EXPECT_EQ(raw.data<uint8_t>()[1], 0x7F);
  Tensor e5 = run_one(NodeBuilder("Cast", 21).attr_int("to", 19).attr_int("saturate", 0).node(), {x});
  EXPECT_EQ(e5.data<uint8_t>()[2], 0xFC);
  Tensor back = run_one(cast_node(DataType::kFloat32, 19), {sat});
  EXPECT_EQ(to_vector<float>(back), (std::vector<float>{1.0f, 448.0f, -448.0f}));
  Tensor as_string = run_one(cast_node(DataType::kString, 19), {sat});
  EXPECT_EQ(to_vector<std::string>(as_string), (std::vector<std::string>{"1.0", "448.0", "-448.0"}));
  Tensor from_string = run_one(cast_node(DataType::kFloat8E5M2, 19), {make_tensor<std::string>({1}, {"2"})});
  EXPECT_EQ(from_string.data<uint8_t>()[0], 0x40);
  Tensor f8_to_f8 = run_one(cast_node(DataType::kFloat8E4M3FNUZ, 19), {sat});
  EXPECT_EQ(f8_to_f8.data<uint8_t>()[1], 0x7F);  // 448 saturates to 240
  auto too_old = run_kernel(cast_node(DataType::kFloat8E4M3FN, 13), {x});
  EXPECT_FALSE(too_old.has_value());
}

TEST(CastTest, UnsupportedTargetsAreReported) {
  auto complex = run_kernel(cast_node(DataType::kComplex64), {make_tensor<float>({1}, {1.0f})});
  ASSERT_FALSE(complex.has_value());
  EXPECT_EQ(complex.status().code(), StatusCode::kNotImplemented);
  auto early_int4 = run_kernel(cast_node(DataType::kInt4, 19), {make_tensor<float>({1}, {1.0f})});
  EXPECT_FALSE(early_int4.has_value());
  auto bad_mode = run_kernel(NodeBuilder("Cast", 24).attr_int("to", 24).attr_string("round_mode", "sideways").node(),
                             {make_tensor<float>({1}, {1.0f})});
  EXPECT_FALSE(bad_mode.has_value());
  auto missing = run_kernel(NodeBuilder("Cast", 13).node(), {make_tensor<float>({1}, {1.0f})});
  EXPECT_FALSE(missing.has_value());
  auto bogus = run_kernel(NodeBuilder("Cast", 13).attr_int("to", 99).node(), {make_tensor<float>({1}, {1.0f})});
  EXPECT_FALSE(bogus.has_value());
}

Tensor packed_tensor(DataType type, Shape shape, const std::vector<uint8_t>& bytes) {
  auto tensor = Tensor::allocate(type, std::move(shape));
  EXPECT_TRUE(tensor.has_value());
  EXPECT_EQ(tensor->storage_bytes(), bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) tensor->data<uint8_t>()[i] = bytes[i];
  return *tensor;
}

std::vector<uint8_t> packed_bytes(const Tensor& tensor) {
  const uint8_t* data = tensor.data<uint8_t>();
  return std::vector<uint8_t>(data, data + tensor.storage_bytes());
}

TEST(Float8Test, Float4E2M1RoundsToNearestEvenAndSaturates) {
  const std::vector<std::pair<double, uint8_t>> cases = {
      {0.25, 0x0}, {0.2500001, 0x1}, {0.75, 0x2}, {1.25, 0x2}, {1.75, 0x4}, {2.5, 0x4}, {3.5, 0x6}, {5.0, 0x6},
      {5.1, 0x7}, {1e6, 0x7}, {INFINITY, 0x7}, {-INFINITY, 0xF}, {-0.0, 0x8}, {-1e-30, 0x8}, {-3.5, 0xE},
      {NAN, 0x8}};
  for (const auto& [value, code] : cases) EXPECT_EQ(double_to_float4e2m1(value), code) << value;
  for (uint8_t code = 0; code < 16; ++code) EXPECT_EQ(double_to_float4e2m1(float4e2m1_to_float(code)), code);
}

TEST(Float8Test, Float8E8M0RoundingModes) {
  EXPECT_EQ(float_to_float8e8m0(1.0f, true, E8M0Rounding::kUp), 127);
  EXPECT_EQ(float_to_float8e8m0(1.5f, true, E8M0Rounding::kUp), 128);
  EXPECT_EQ(float_to_float8e8m0(1.5f, true, E8M0Rounding::kDown), 127);
  EXPECT_EQ(float_to_float8e8m0(1.5f, true, E8M0Rounding::kNearest), 128);
  EXPECT_EQ(float_to_float8e8m0(1.25f, true, E8M0Rounding::kNearest), 127);
  EXPECT_EQ(float_to_float8e8m0(0.0f, true, E8M0Rounding::kUp), 0);
  EXPECT_EQ(float_to_float8e8m0(kNan, true, E8M0Rounding::kUp), 0xFF);
  EXPECT_EQ(float_to_float8e8m0(kInf, true, E8M0Rounding::kUp), 0xFF);
  EXPECT_EQ(float_to_float8e8m0(std::numeric_limits<float>::max(), true, E8M0Rounding::kUp), 0xFE);
  EXPECT_EQ(float_to_float8e8m0(std::numeric_limits<float>::max(), false, E8M0Rounding::kUp), 0xFF);
  EXPECT_EQ(float8e8m0_to_float(127), 1.0f);
  EXPECT_EQ(float8e8m0_to_float(130), 8.0f);
  EXPECT_TRUE(std::isnan(float8e8m0_to_float(0xFF)));
}

TEST(CastTest, FloatToInt4TruncatesAndZeroesOutOfRange) {
  // Elements low nibble first: -9 -> 0, -8.9 -> -8, 7.9 -> 7, 8 -> 0, NaN -> 0.
  const Tensor x = make_tensor<float>({5}, {-9.0f, -8.9f, 7.9f, 8.0f, kNan});
  for (int threads : {1, 3}) {
    EXPECT_EQ(packed_bytes(run_one(cast_node(DataType::kInt4), {x}, threads)), (std::vector<uint8_t>{0x80, 0x07, 0x00}));
    EXPECT_EQ(packed_bytes(run_one(cast_node(DataType::kUInt4), {x}, threads)), (std::vector<uint8_t>{0x00, 0x87, 0x00}));
  }
}

TEST(CastTest, IntegersWrapIntoSubByteTypes) {
  const Tensor x = make_tensor<int64_t>({4}, {200, -200, 17, -1});
  EXPECT_EQ(packed_bytes(run_one(cast_node(DataType::kInt4), {x})), (std::vector<uint8_t>{0x88, 0xF1}));
  EXPECT_EQ(packed_bytes(run_one(cast_node(DataType::kUInt2, 25), {x})), (std::vector<uint8_t>{0xD0}));
  EXPECT_EQ(packed_bytes(run_one(cast_node(DataType::kInt2, 25), {make_tensor<bool>({3}, {true, false, true})})),
            (std::vector<uint8_t>{0x11}));
}

TEST(CastTest, SubByteTypesUnpackSignExtended) {
  const Tensor int4 = packed_tensor(DataType::kInt4, {3}, {0x7F, 0x08});  // -1, 7, -8
  EXPECT_EQ(to_vector<int32_t>(run_one(cast_node(DataType::kInt32), {int4}, 3)), (std::vector<int32_t>{-1, 7, -8}));
  EXPECT_EQ(to_vector<uint64_t>(run_one(cast_node(DataType::kUInt64), {int4})),
            (std::vector<uint64_t>{std::numeric_limits<uint64_t>::max(), 7, static_cast<uint64_t>(-8)}));
  EXPECT_EQ(to_float_vector(run_one(cast_node(DataType::kFloat16), {int4})), (std::vector<float>{-1, 7, -8}));
  const Tensor int2 = packed_tensor(DataType::kInt2, {5}, {0xE4, 0x03});  // 0, 1, -2, -1, -1
  EXPECT_EQ(to_vector<int8_t>(run_one(cast_node(DataType::kInt8, 25), {int2})), (std::vector<int8_t>{0, 1, -2, -1, -1}));
  EXPECT_EQ(to_vector<std::string>(run_one(cast_node(DataType::kString, 25), {int2})),
            (std::vector<std::string>{"0", "1", "-2", "-1", "-1"}));
  // int4 -> uint4 keeps the low bits; an empty tensor stays empty.
  EXPECT_EQ(packed_bytes(run_one(cast_node(DataType::kUInt4), {int4})), (std::vector<uint8_t>{0x7F, 0x08}));
  EXPECT_EQ(run_one(cast_node(DataType::kInt4), {make_tensor<float>({0, 3}, {})}).numel(), 0);
}

TEST(CastTest, Float4AndE8M0RoundTripThroughFloat) {
  const Tensor x = make_tensor<double>({4}, {0.48, -3.5, 1e6, 0.01});
  const Tensor f4 = run_one(cast_node(DataType::kFloat4E2M1, 23), {x});
  EXPECT_EQ(packed_bytes(f4), (std::vector<uint8_t>{0xE1, 0x07}));
  EXPECT_EQ(to_vector<float>(run_one(cast_node(DataType::kFloat32, 23), {f4})), (std::vector<float>{0.5f, -4, 6, 0}));
  const Tensor y = make_half_tensor<Float16>({3}, {1.5f, 0.25f, 3.0f});
  const Tensor up = run_one(NodeBuilder("Cast", 24).attr_int("to", 24).node(), {y});
  EXPECT_EQ(packed_bytes(up), (std::vector<uint8_t>{128, 125, 129}));
  const Tensor down = run_one(NodeBuilder("Cast", 25).attr_int("to", 24).attr_string("round_mode", "down").node(), {y});
  EXPECT_EQ(packed_bytes(down), (std::vector<uint8_t>{127, 125, 128}));
  EXPECT_EQ(to_vector<double>(run_one(cast_node(DataType::kFloat64, 24), {down})), (std::vector<double>{1, 0.25, 2}));
}

}  // namespace
}  // namespace nxrt::cpu::testing
