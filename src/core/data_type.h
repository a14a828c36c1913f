// Every ONNX tensor element type, with the numeric values of onnx.TensorProto.DataType.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nxrt {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

inline constexpr int32_t kMaxDataTypeValue = 26;

// nullopt for values outside the enum (a malformed model).
std::optional<DataType> data_type_from_int(int64_t value);

// Storage bits of one element: 2, 4, 8, 16, 32, 64 or 128; string elements report sizeof(std::string) * 8.
int data_type_bits(DataType type);
// Bytes needed to store `count` elements, packed for sub-byte types (rounded up).
size_t data_type_storage_bytes(DataType type, int64_t count);
// data_type_storage_bytes for a `count` >= 0 that came from outside (a model, a feed): nullopt when the bit count
// overflows size_t.
std::optional<size_t> checked_storage_bytes(DataType type, int64_t count);

// ONNX spelling used in type strings: "float", "double", "float16", "int64", "string", ...
std::string_view data_type_name(DataType type);
// "tensor(float)" as ONNX Runtime prints input types.
std::string tensor_type_string(DataType type);

bool is_float_type(DataType type);    // f16, bf16, f32, f64 and the float8/float4 formats
bool is_signed_int_type(DataType type);
bool is_unsigned_int_type(DataType type);
bool is_sub_byte_type(DataType type);  // int4, uint4, float4e2m1, int2, uint2

}  // namespace nxrt
