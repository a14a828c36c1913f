#include "core/data_type.h"

#include <string>

namespace nxrt {

std::optional<DataType> data_type_from_int(int64_t value) {
  if (value < 0 || value > kMaxDataTypeValue) return std::nullopt;
  return static_cast<DataType>(value);
}

int data_type_bits(DataType type) {
  switch (type) {
    case DataType::kUndefined: return 0;
    case DataType::kBool:
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0: return 8;
    case DataType::kUInt16:
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16: return 16;
    case DataType::kFloat32:
    case DataType::kInt32:
    case DataType::kUInt32: return 32;
    case DataType::kInt64:
    case DataType::kUInt64:
    case DataType::kFloat64:
    case DataType::kComplex64: return 64;
    case DataType::kComplex128: return 128;
    case DataType::kUInt4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1: return 4;
    case DataType::kUInt2:
    case DataType::kInt2: return 2;
    case DataType::kString: return static_cast<int>(sizeof(std::string) * 8);
  }
  return 0;
}

size_t data_type_storage_bytes(DataType type, int64_t count) {
  if (count <= 0) return 0;
  const int bits = data_type_bits(type);
  return (static_cast<size_t>(count) * static_cast<size_t>(bits) + 7) / 8;
}

std::optional<size_t> checked_storage_bytes(DataType type, int64_t count) {
  size_t bits = 0;
  const auto element_bits = static_cast<size_t>(data_type_bits(type));
  if (count < 0 || __builtin_mul_overflow(static_cast<size_t>(count), element_bits, &bits)) {
    return std::nullopt;
  }
  return bits / 8 + (bits % 8 != 0 ? 1 : 0);
}

std::string_view data_type_name(DataType type) {
  switch (type) {
    case DataType::kUndefined: return "undefined";
    case DataType::kFloat32: return "float";
    case DataType::kUInt8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUInt16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kFloat64: return "double";
    case DataType::kUInt32: return "uint32";
    case DataType::kUInt64: return "uint64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kFloat8E4M3FN: return "float8e4m3fn";
    case DataType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DataType::kFloat8E5M2: return "float8e5m2";
    case DataType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DataType::kUInt4: return "uint4";
    case DataType::kInt4: return "int4";
    case DataType::kFloat4E2M1: return "float4e2m1";
    case DataType::kFloat8E8M0: return "float8e8m0";
    case DataType::kUInt2: return "uint2";
    case DataType::kInt2: return "int2";
  }
  return "undefined";
}

std::string tensor_type_string(DataType type) {
  return "tensor(" + std::string(data_type_name(type)) + ")";
}

bool is_float_type(DataType type) {
  switch (type) {
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
    case DataType::kFloat4E2M1: return true;
    default: return false;
  }
}

bool is_signed_int_type(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kInt4:
    case DataType::kInt2: return true;
    default: return false;
  }
}

bool is_unsigned_int_type(DataType type) {
  switch (type) {
    case DataType::kUInt8:
    case DataType::kUInt16:
    case DataType::kUInt32:
    case DataType::kUInt64:
    case DataType::kUInt4:
    case DataType::kUInt2: return true;
    default: return false;
  }
}

bool is_sub_byte_type(DataType type) { return data_type_bits(type) < 8 && type != DataType::kUndefined; }

}  // namespace nxrt
