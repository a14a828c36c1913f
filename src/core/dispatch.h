// Maps DataType to C++ element types and back, and dispatches a generic lambda on a runtime dtype.
// Type lists are the single source for registration and dispatch:
//   visit_dtype<NumericTypes>(dtype, [&]<class T>() { ... });
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/data_type.h"
#include "core/half.h"

namespace nxrt {

template <class... Ts>
struct TypeList {};

template <class T>
struct DataTypeOf;
#define NXRT_DATA_TYPE_OF(cpp_type, enum_value) \
  template <>                                   \
  struct DataTypeOf<cpp_type> {                 \
    static constexpr DataType value = DataType::enum_value; \
  };
NXRT_DATA_TYPE_OF(float, kFloat32)
NXRT_DATA_TYPE_OF(double, kFloat64)
NXRT_DATA_TYPE_OF(Float16, kFloat16)
NXRT_DATA_TYPE_OF(BFloat16, kBFloat16)
NXRT_DATA_TYPE_OF(int8_t, kInt8)
NXRT_DATA_TYPE_OF(int16_t, kInt16)
NXRT_DATA_TYPE_OF(int32_t, kInt32)
NXRT_DATA_TYPE_OF(int64_t, kInt64)
NXRT_DATA_TYPE_OF(uint8_t, kUInt8)
NXRT_DATA_TYPE_OF(uint16_t, kUInt16)
NXRT_DATA_TYPE_OF(uint32_t, kUInt32)
NXRT_DATA_TYPE_OF(uint64_t, kUInt64)
NXRT_DATA_TYPE_OF(bool, kBool)
NXRT_DATA_TYPE_OF(std::string, kString)
NXRT_DATA_TYPE_OF(std::complex<float>, kComplex64)
NXRT_DATA_TYPE_OF(std::complex<double>, kComplex128)
#undef NXRT_DATA_TYPE_OF

template <class T>
inline constexpr DataType data_type_of = DataTypeOf<T>::value;

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using NumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                              uint16_t, uint32_t, uint64_t>;
using SignedNumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t>;
using AllPodTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                             uint16_t, uint32_t, uint64_t, bool>;

template <class... Ts>
constexpr bool type_list_contains(TypeList<Ts...>, DataType type) {
  return ((data_type_of<Ts> == type) || ...);
}

// Calls fn.template operator()<T>() for the T in List whose DataType equals `type`.
// Returns false (without calling) when `type` is not in List.
template <class List, class Fn>
bool visit_dtype(DataType type, Fn&& fn) {
  return [&]<class... Ts>(TypeList<Ts...>) {
    return ((data_type_of<Ts> == type ? (fn.template operator()<Ts>(), true) : false) || ...);
  }(List{});
}

// Unsigned integer of the given byte width, for data-movement kernels that dispatch on element size.
template <size_t Bytes>
struct UIntOfSize;
template <>
struct UIntOfSize<1> { using type = uint8_t; };
template <>
struct UIntOfSize<2> { using type = uint16_t; };
template <>
struct UIntOfSize<4> { using type = uint32_t; };
template <>
struct UIntOfSize<8> { using type = uint64_t; };

}  // namespace nxrt
