#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/dispatch.h"
#include "core/half.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"

namespace nxrt {
namespace {

TEST(Status, OkAndErrorFormatting) {
  Status ok;
  EXPECT_TRUE(ok.is_ok());
  EXPECT_EQ(ok.code(), StatusCode::kOk);
  Status error = make_error(StatusCode::kInvalidGraph, "node '", "n", "' has ", 3, " inputs");
  EXPECT_FALSE(error.is_ok());
  EXPECT_EQ(error.message(), "node 'n' has 3 inputs");
  EXPECT_EQ(error.to_string(), "[ONNXRuntimeError] : 10 : INVALID_GRAPH : node 'n' has 3 inputs");
  EXPECT_EQ(error.with_context("loading: ").message(), "loading: node 'n' has 3 inputs");
  EXPECT_EQ(status_code_name(StatusCode::kNoSuchFile), "NO_SUCHFILE");
  EXPECT_EQ(static_cast<int>(StatusCode::kEpFail), 11);
}

Expected<int> parse_positive(int value) {
  if (value <= 0) return make_error(StatusCode::kInvalidArgument, "not positive: ", value);
  return value;
}

Status doubled(int value, int& out) {
  TRY_ASSIGN(int checked, parse_positive(value));
  out = checked * 2;
  return Status::ok();
}

TEST(Expected, PropagatesThroughTryAssign) {
  int out = 0;
  EXPECT_TRUE(doubled(4, out).is_ok());
  EXPECT_EQ(out, 8);
  Status failed = doubled(-1, out);
  EXPECT_EQ(failed.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(failed.message(), "not positive: -1");
  Expected<std::string> text = std::string("abc");
  Expected<std::string> copy = text;
  EXPECT_EQ(*copy, "abc");
  Expected<std::string> from_ok_status = Status::ok();
  EXPECT_FALSE(from_ok_status.has_value());
}

TEST(DataType, SizesNamesAndRanges) {
  EXPECT_EQ(data_type_bits(DataType::kFloat16), 16);
  EXPECT_EQ(data_type_bits(DataType::kInt4), 4);
  EXPECT_EQ(data_type_bits(DataType::kComplex128), 128);
  EXPECT_EQ(data_type_storage_bytes(DataType::kInt4, 3), 2u);
  EXPECT_EQ(data_type_storage_bytes(DataType::kUInt2, 5), 2u);
  EXPECT_EQ(data_type_storage_bytes(DataType::kFloat64, 3), 24u);
  EXPECT_EQ(tensor_type_string(DataType::kFloat64), "tensor(double)");
  EXPECT_EQ(data_type_name(DataType::kBFloat16), "bfloat16");
  EXPECT_FALSE(data_type_from_int(-1).has_value());
  EXPECT_FALSE(data_type_from_int(kMaxDataTypeValue + 1).has_value());
  for (int v = 0; v <= kMaxDataTypeValue; ++v) {
    ASSERT_TRUE(data_type_from_int(v).has_value());
    EXPECT_NE(data_type_name(*data_type_from_int(v)), "") << v;
  }
  EXPECT_TRUE(is_float_type(DataType::kFloat8E5M2));
  EXPECT_TRUE(is_signed_int_type(DataType::kInt4));
  EXPECT_TRUE(is_unsigned_int_type(DataType::kUInt64));
  EXPECT_TRUE(is_sub_byte_type(DataType::kFloat4E2M1));
}

TEST(Half, Float16RoundTripAndRounding) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.9604644775390625e-08f, 0.333251953125f}) {
    EXPECT_EQ(static_cast<float>(Float16(v)), v) << v;
  }
  EXPECT_TRUE(std::isinf(static_cast<float>(Float16(65520.0f))));
  EXPECT_EQ(static_cast<float>(Float16(65519.0f)), 65504.0f);
  EXPECT_TRUE(std::isnan(static_cast<float>(Float16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(Float16(1.0f + 1.0f / 2048.0f).bits, Float16(1.0f).bits);  // halfway rounds to even
  EXPECT_EQ(Float16(1.0f + 3.0f / 2048.0f).bits, Float16(1.0f).bits + 2);
  EXPECT_EQ(Float16(-0.0f).bits, 0x8000);
  // Every float16 bit pattern converts to float and back unchanged (NaNs stay NaN).
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = Float16::to_float(static_cast<uint16_t>(bits));
    if (std::isnan(f)) continue;
    ASSERT_EQ(Float16::from_float(f), bits) << bits;
  }
}

TEST(Half, BFloat16Rounding) {
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f)), 1.0f);
  EXPECT_EQ(static_cast<float>(BFloat16(3.140625f)), 3.140625f);
  EXPECT_EQ(BFloat16(1.00390625f).bits, BFloat16(1.0f).bits);  // halfway to even
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(static_cast<float>(BFloat16(std::numeric_limits<float>::infinity()))));
}

TEST(Shape, NumelAndBroadcast) {
  EXPECT_EQ(checked_numel(Shape{2, 3, 4}), 24);
  EXPECT_EQ(checked_numel(Shape{}), 1);
  EXPECT_EQ(checked_numel(Shape{0, -1}), std::nullopt);
  EXPECT_EQ(checked_numel(Shape{int64_t{1} << 40, int64_t{1} << 40}), std::nullopt);
  EXPECT_EQ(checked_numel(Shape{0, int64_t{1} << 62, int64_t{1} << 62}), 0);
  EXPECT_EQ(shape_to_string(Shape{2, 3}), "[2,3]");
  EXPECT_EQ(row_major_strides(Shape{2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(broadcast_shapes(Shape{3, 1}, Shape{1, 4}), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shapes(Shape{5}, Shape{2, 1}), (Shape{2, 5}));
  EXPECT_EQ(broadcast_shapes(Shape{0}, Shape{1}), (Shape{0}));
  EXPECT_EQ(broadcast_shapes(Shape{3}, Shape{4}), std::nullopt);
}

TEST(Tensor, AllocateWrapCopyAndReshape) {
  auto tensor = Tensor::allocate(DataType::kFloat32, {2, 3});
  ASSERT_TRUE(tensor);
  EXPECT_EQ(tensor->numel(), 6);
  EXPECT_EQ(tensor->storage_bytes(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor->raw_data()) % 64, 0u);
  for (int i = 0; i < 6; ++i) tensor->data<float>()[i] = static_cast<float>(i);
  Tensor view = tensor->reshaped({3, 2});
  EXPECT_EQ(view.raw_data(), tensor->raw_data());
  auto copy = Tensor::copy_of(view);
  ASSERT_TRUE(copy);
  EXPECT_NE(copy->raw_data(), tensor->raw_data());
  EXPECT_EQ(copy->data<float>()[5], 5.0f);

  std::vector<double> user = {1, 2, 3};
  auto owner = std::make_shared<int>(7);
  std::weak_ptr<int> watch = owner;
  {
    Tensor wrapped = Tensor::wrap(DataType::kFloat64, {3}, user.data(), Device{}, std::move(owner));
    EXPECT_EQ(wrapped.data<double>(), user.data());
    EXPECT_FALSE(watch.expired());
  }
  EXPECT_TRUE(watch.expired());

  auto strings = Tensor::allocate(DataType::kString, {2});
  ASSERT_TRUE(strings);
  strings->data<std::string>()[1] = "hello";
  auto string_copy = Tensor::copy_of(*strings);
  ASSERT_TRUE(string_copy);
  EXPECT_EQ(string_copy->data<std::string>()[1], "hello");

  EXPECT_FALSE(Tensor::allocate(DataType::kFloat32, {-1}));
  EXPECT_FALSE(Tensor::allocate(DataType::kFloat32, {int64_t{1} << 40, int64_t{1} << 40}));
  EXPECT_FALSE(Tensor::allocate(DataType::kUndefined, {1}));
}

TEST(Dispatch, VisitsTheMatchingType) {
  DataType seen = DataType::kUndefined;
  size_t size = 0;
  EXPECT_TRUE(visit_dtype<NumericTypes>(DataType::kBFloat16, [&]<class T>() {
    seen = data_type_of<T>;
    size = sizeof(T);
  }));
  EXPECT_EQ(seen, DataType::kBFloat16);
  EXPECT_EQ(size, 2u);
  EXPECT_FALSE(visit_dtype<FloatTypes>(DataType::kInt32, [&]<class T>() { seen = data_type_of<T>; }));
  EXPECT_TRUE(type_list_contains(SignedIntTypes{}, DataType::kInt16));
  EXPECT_FALSE(type_list_contains(SignedIntTypes{}, DataType::kUInt16));
}

}  // namespace
}  // namespace nxrt
