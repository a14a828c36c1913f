#include <cmath>
#include <cstdint>
#include <vector>

#include "core/float8.h"
#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

Tensor scalar_float(float v) { return make_tensor<float>({}, {v}); }

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturatesUint8) {
  const auto node = NodeBuilder("QuantizeLinear", 21).node();
  const Tensor x = make_tensor<float>({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.0f, -300.0f, 3.49f});
  const Tensor y = run_one(node, {x, scalar_float(1.0f), make_tensor<uint8_t>({}, {0})});
  EXPECT_EQ(to_vector<uint8_t>(y), (std::vector<uint8_t>{0, 2, 2, 0, 0, 255, 0, 3}));
}

TEST(QuantizeLinear, Int8WithZeroPointAndDefaultUint8Output) {
  const auto node = NodeBuilder("QuantizeLinear", 13).node();
  const Tensor x = make_tensor<float>({4}, {-1000.0f, -2.5f, 2.5f, 1000.0f});
  const Tensor y = run_one(node, {x, scalar_float(0.5f), make_tensor<int8_t>({}, {1})});
  EXPECT_EQ(to_vector<int8_t>(y), (std::vector<int8_t>{-128, -4, 6, 127}));
  const Tensor z = run_one(node, {x, scalar_float(0.5f)});
  EXPECT_EQ(z.dtype(), DataType::kUInt8);
  EXPECT_EQ(to_vector<uint8_t>(z), (std::vector<uint8_t>{0, 0, 5, 255}));
}

TEST(QuantizeLinear, PerAxisAndBlocked) {
  const auto per_axis = NodeBuilder("QuantizeLinear", 13).attr_int("axis", 1).node();
  const Tensor x = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor y = run_one(per_axis, {x, make_tensor<float>({3}, {1, 2, 4}), make_tensor<uint8_t>({3}, {0, 10, 20})});
  EXPECT_EQ(to_vector<uint8_t>(y), (std::vector<uint8_t>{1, 11, 21, 4, 12, 22}));

  const auto blocked = NodeBuilder("QuantizeLinear", 21).attr_int("axis", 1).attr_int("block_size", 2).node();
  const Tensor scale = make_tensor<float>({2, 2}, {1, 10, 2, 20});
  const Tensor q = run_one(blocked, {x, scale, make_tensor<uint8_t>({2, 2}, {0, 0, 0, 0})});
  EXPECT_EQ(to_vector<uint8_t>(q), (std::vector<uint8_t>{1, 2, 0, 2, 2, 0}));
}

TEST(QuantizeLinear, RejectsBadAxisAndBlockSize) {
  const Tensor x = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto bad_axis = NodeBuilder("QuantizeLinear", 13).attr_int("axis", 2).node();
  auto r = run_kernel(bad_axis, {x, make_tensor<float>({3}, {1, 1, 1})});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);

  const auto wrong_length = NodeBuilder("QuantizeLinear", 13).attr_int("axis", 0).node();
  r = run_kernel(wrong_length, {x, make_tensor<float>({3}, {1, 1, 1})});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);

  const auto negative_block = NodeBuilder("QuantizeLinear", 21).attr_int("block_size", -1).node();
  r = run_kernel(negative_block, {x, scalar_float(1.0f)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);

  const auto block_mismatch = NodeBuilder("QuantizeLinear", 21).attr_int("axis", 1).attr_int("block_size", 1).node();
  r = run_kernel(block_mismatch, {x, make_tensor<float>({2, 2}, {1, 1, 1, 1})});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(QuantizeLinear, ZeroSizeInput) {
  const auto node = NodeBuilder("QuantizeLinear", 21).node();
  const Tensor x = make_tensor<float>({0, 3}, {});
  const Tensor y = run_one(node, {x, scalar_float(1.0f), make_tensor<int8_t>({}, {0})});
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
  EXPECT_EQ(y.dtype(), DataType::kInt8);
}

TEST(QuantizeLinear, Int4PacksLowNibbleFirstAndSaturates) {
  const auto node = NodeBuilder("QuantizeLinear", 21).attr_int("output_dtype", static_cast<int>(DataType::kInt4)).node();
  const Tensor x = make_tensor<float>({3}, {1.0f, -20.0f, 20.0f});
  const Tensor y = run_one(node, {x, scalar_float(1.0f)});
  ASSERT_EQ(y.dtype(), DataType::kInt4);
  const uint8_t* bytes = y.data<uint8_t>();
  EXPECT_EQ(bytes[0], 0x81);        // 1 | (-8 << 4)
  EXPECT_EQ(bytes[1] & 0x0f, 0x7);  // 7
}

TEST(QuantizeLinear, Float8SaturateAttribute) {
  const Tensor x = make_tensor<float>({2}, {1000.0f, 1.0f});
  const Tensor zero = [] {
    Tensor t = *Tensor::allocate(DataType::kFloat8E4M3FN, {});
    t.data<uint8_t>()[0] = 0;
    return t;
  }();
  const Tensor saturated = run_one(NodeBuilder("QuantizeLinear", 19).node(), {x, scalar_float(1.0f), zero});
  EXPECT_EQ(float8_to_float(saturated.data<uint8_t>()[0], Float8Format::kE4M3FN), 448.0f);
  EXPECT_EQ(float8_to_float(saturated.data<uint8_t>()[1], Float8Format::kE4M3FN), 1.0f);
  const Tensor wrapped =
      run_one(NodeBuilder("QuantizeLinear", 19).attr_int("saturate", 0).node(), {x, scalar_float(1.0f), zero});
  EXPECT_TRUE(std::isnan(float8_to_float(wrapped.data<uint8_t>()[0], Float8Format::kE4M3FN)));
}

TEST(QuantizeLinear, TwoBitTypesRoundTrip) {
  Tensor x = *Tensor::allocate(DataType::kInt2, {4});
  x.data<uint8_t>()[0] = 0x4e;  // -2, -1, 0, 1 in 2-bit codes, low bits first
  const Tensor y = run_one(NodeBuilder("DequantizeLinear", 25).node(), {x, scalar_float(0.5f)});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f}));
  const auto to_uint2 =
      NodeBuilder("QuantizeLinear", 25).attr_int("output_dtype", static_cast<int>(DataType::kUInt2)).node();
  const Tensor q = run_one(to_uint2, {make_tensor<float>({4}, {0.0f, 1.0f, 9.0f, -3.0f}), scalar_float(1.0f)});
  ASSERT_EQ(q.dtype(), DataType::kUInt2);
  EXPECT_EQ(q.data<uint8_t>()[0], 0x34);  // 0, 1, 3, 0
}

TEST(DequantizeLinear, PerTensorPerAxisAndHalfScale) {
  const Tensor x = make_tensor<uint8_t>({2, 2}, {0, 10, 20, 255});
  const Tensor y = run_one(NodeBuilder("DequantizeLinear", 13).node(),
                           {x, scalar_float(0.5f), make_tensor<uint8_t>({}, {10})});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{-5.0f, 0.0f, 5.0f, 122.5f}));
  const Tensor axis = run_one(NodeBuilder("DequantizeLinear", 13).attr_int("axis", 0).node(),
                              {x, make_tensor<float>({2}, {1.0f, 2.0f})});
  EXPECT_EQ(to_vector<float>(axis), (std::vector<float>{0.0f, 10.0f, 40.0f, 510.0f}));
  const Tensor half = run_one(NodeBuilder("DequantizeLinear", 21).node(), {x, make_half_tensor<Float16>({}, {2.0f})});
  EXPECT_EQ(half.dtype(), DataType::kFloat16);
  EXPECT_EQ(to_float_vector(half), (std::vector<float>{0.0f, 20.0f, 40.0f, 510.0f}));
}

TEST(DequantizeLinear, Int32AndRejectsMismatchedZeroPoint) {
  const Tensor x = make_tensor<int32_t>({2}, {-100000, 7});
  const Tensor y = run_one(NodeBuilder("DequantizeLinear", 13).node(), {x, scalar_float(2.0f)});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{-200000.0f, 14.0f}));
  auto r = run_kernel(NodeBuilder("DequantizeLinear", 13).node(),
                      {make_tensor<uint8_t>({1}, {1}), scalar_float(1.0f), make_tensor<int8_t>({}, {0})});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(DynamicQuantizeLinear, ComputesScaleAndZeroPoint) {
  const Tensor x = make_tensor<float>({4}, {0.0f, 2.0f, -3.0f, -2.5f});
  auto out = run_kernel(NodeBuilder("DynamicQuantizeLinear", 11).node(), {x});
  ASSERT_TRUE(out.has_value());
  const float scale = to_vector<float>((*out)[1])[0];
  EXPECT_FLOAT_EQ(scale, 5.0f / 255.0f);
  EXPECT_EQ(to_vector<uint8_t>((*out)[2])[0], 153);
  // -2.5 / (5 / 255) is -127.49999 in float, as numpy computes it: rounds to -127.
  EXPECT_EQ(to_vector<uint8_t>((*out)[0]), (std::vector<uint8_t>{153, 255, 0, 26}));
}

TEST(MatMulInteger, PerRowAndPerColumnZeroPoints) {
  const Tensor a = make_tensor<uint8_t>({2, 2}, {1, 2, 3, 4});
  const Tensor b = make_tensor<int8_t>({2, 2}, {1, -1, 2, 0});
  const Tensor y = run_one(NodeBuilder("MatMulInteger", 10).node(),
                           {a, b, make_tensor<uint8_t>({2}, {1, 3}), make_tensor<int8_t>({2}, {0, -1})});
  // A - [1, 3] per row = [[0, 1], [0, 1]]; B - [0, -1] per column = [[1, 0], [2, 1]].
  EXPECT_EQ(to_vector<int32_t>(y), (std::vector<int32_t>{2, 1, 2, 1}));
}

TEST(QLinearMatMul, BroadcastBatchAndRequantize) {
  const Tensor a = make_tensor<uint8_t>({2, 1, 2}, {1, 2, 3, 4});
  const Tensor b = make_tensor<uint8_t>({2, 1}, {1, 1});
  const Tensor y = run_one(NodeBuilder("QLinearMatMul", 21).node(),
                           {a, scalar_float(0.5f), make_tensor<uint8_t>({}, {0}), b, scalar_float(1.0f),
                            make_tensor<uint8_t>({}, {0}), scalar_float(1.0f), make_tensor<uint8_t>({}, {0})});
  EXPECT_EQ(y.shape(), (Shape{2, 1, 1}));
  EXPECT_EQ(to_vector<uint8_t>(y), (std::vector<uint8_t>{2, 4}));  // 1.5 -> 2, 3.5 -> 4 (half to even)
}

TEST(BitCast, ReinterpretsBitsAndRejectsWidthMismatch) {
  const Tensor x = make_tensor<float>({2}, {1.0f, -2.0f});
  const Tensor y = run_one(NodeBuilder("BitCast", 26).attr_int("to", static_cast<int>(DataType::kInt32)).node(), {x});
  EXPECT_EQ(to_vector<int32_t>(y), (std::vector<int32_t>{0x3f800000, static_cast<int32_t>(0xc0000000u)}));
  auto r = run_kernel(NodeBuilder("BitCast", 26).attr_int("to", static_cast<int>(DataType::kInt64)).node(), {x});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace nxrt::cpu::testing
