#include "core/float8.h"

#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace nxrt {

namespace {

struct Float8Spec {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  uint32_t max_code;  // largest finite magnitude code (sign bit excluded)
  bool has_inf;       // E5M2 only: 0x7C is inf, 0x7D..0x7F NaN
  bool unsigned_zero; // FNUZ: 0x80 is the only NaN, no -0
};

constexpr Float8Spec spec_of(Float8Format format) {
  switch (format) {
    case Float8Format::kE4M3FN: return {4, 3, 7, 0x7e, false, false};
    case Float8Format::kE4M3FNUZ: return {4, 3, 8, 0x7f, false, true};
    case Float8Format::kE5M2: return {5, 2, 15, 0x7b, true, false};
    case Float8Format::kE5M2FNUZ: return {5, 2, 16, 0x7f, false, true};
  }
  return {4, 3, 7, 0x7e, false, false};
}

uint8_t nan_code(const Float8Spec& spec, uint8_t sign) { return spec.unsigned_zero ? 0x80 : (sign | 0x7f); }

// Magnitude code of |value| (finite, non-zero bits `abs`) rounded to nearest even; may exceed max_code.
uint32_t round_magnitude(uint32_t abs, const Float8Spec& spec) {
  const int exponent = static_cast<int>(abs >> 23) - 127;
  const uint32_t mantissa = abs & 0x7fffffu;
  const int min_exponent = 1 - spec.bias;
  uint32_t code = 0;
  int shift = 0;
  uint32_t significand = 0;
  if (exponent >= min_exponent) {
    shift = 23 - spec.mantissa_bits;
    significand = mantissa;
    code = (static_cast<uint32_t>(exponent + spec.bias) << spec.mantissa_bits) | (mantissa >> shift);
  } else {
    // Subnormal in float8 (float subnormals have exponent -127 here and always round to zero).
    shift = 24 - spec.bias - spec.mantissa_bits - exponent;
    if (shift > 24 || (abs >> 23) == 0) return 0;
    significand = mantissa | 0x800000u;
    code = significand >> shift;
  }
  const uint32_t remainder = significand & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (remainder > half || (remainder == half && (code & 1u))) ++code;
  return code;
}

std::array<float, 256> build_table(Float8Format format) {
  const Float8Spec spec = spec_of(format);
  std::array<float, 256> table{};
  const uint32_t mantissa_mask = (1u << spec.mantissa_bits) - 1u;
  for (uint32_t bits = 0; bits < 256; ++bits) {
    const uint32_t magnitude = bits & 0x7fu;
    const bool negative = (bits & 0x80u) != 0;
    float value = 0;
    if (spec.unsigned_zero && bits == 0x80u) {
      value = std::numeric_limits<float>::quiet_NaN();
    } else if (magnitude > spec.max_code) {
      value = spec.has_inf && magnitude == 0x7cu ? std::numeric_limits<float>::infinity()
                                                 : std::numeric_limits<float>::quiet_NaN();
    } else {
      const int exponent = static_cast<int>(magnitude >> spec.mantissa_bits);
      const float mantissa = static_cast<float>(magnitude & mantissa_mask);
      if (exponent == 0) {
        value = std::ldexp(mantissa, 1 - spec.bias - spec.mantissa_bits);
      } else {
        value = std::ldexp(1.0f + mantissa / static_cast<float>(1u << spec.mantissa_bits), exponent - spec.bias);
      }
    }
    table[bits] = negative ? -value : value;
  }
  return table;
}

}  // namespace

std::optional<Float8Format> float8_format_of(DataType type) {
  switch (type) {
    case DataType::kFloat8E4M3FN: return Float8Format::kE4M3FN;
    case DataType::kFloat8E4M3FNUZ: return Float8Format::kE4M3FNUZ;
    case DataType::kFloat8E5M2: return Float8Format::kE5M2;
    case DataType::kFloat8E5M2FNUZ: return Float8Format::kE5M2FNUZ;
    default: return std::nullopt;
  }
}

uint8_t float_to_float8(float value, Float8Format format, bool saturate) {
  const Float8Spec spec = spec_of(format);
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return nan_code(spec, sign);
  if (abs == 0x7f800000u) {
    if (spec.has_inf) return static_cast<uint8_t>(sign | (saturate ? spec.max_code : 0x7cu));
    if (saturate) return static_cast<uint8_t>(sign | spec.max_code);
    return nan_code(spec, sign);
  }
  const uint32_t code = round_magnitude(abs, spec);
  if (code > spec.max_code) {
    if (saturate) return static_cast<uint8_t>(sign | spec.max_code);
    return spec.has_inf ? static_cast<uint8_t>(sign | 0x7cu) : nan_code(spec, sign);
  }
  if (code == 0 && spec.unsigned_zero) return 0;
  return static_cast<uint8_t>(sign | code);
}

float float8_to_float(uint8_t bits, Float8Format format) {
  static const std::array<std::array<float, 256>, 4> tables = {
      build_table(Float8Format::kE4M3FN), build_table(Float8Format::kE4M3FNUZ), build_table(Float8Format::kE5M2),
      build_table(Float8Format::kE5M2FNUZ)};
  return tables[static_cast<size_t>(format)][bits];
}

float float8_max(Float8Format format) {
  const Float8Spec spec = spec_of(format);
  return float8_to_float(static_cast<uint8_t>(spec.max_code), format);
}

uint8_t double_to_float4e2m1(double value) {
  if (std::isnan(value)) return std::signbit(value) ? 0x0 : 0x8;
  const uint8_t sign = std::signbit(value) ? 0x8 : 0x0;
  const double magnitude = std::fabs(value);
  // Midpoints between consecutive magnitude codes 0..7; a tie goes to the even code.
  static constexpr double kMidpoints[7] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0};
  uint8_t code = 0;
  while (code < 7 && magnitude > kMidpoints[code]) ++code;
  if (code < 7 && magnitude == kMidpoints[code] && (code & 1u) != 0) ++code;
  return static_cast<uint8_t>(sign | code);
}

float float4e2m1_to_float(uint8_t code) {
  static constexpr float kMagnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float magnitude = kMagnitudes[code & 0x7u];
  return (code & 0x8u) != 0 ? -magnitude : magnitude;
}

uint8_t float_to_float8e8m0(float value, bool saturate, E8M0Rounding rounding) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  uint32_t exponent = (bits >> 23) & 0xffu;
  if (exponent == 0xffu) return 0xff;
  bool round_up = false;
  if (rounding == E8M0Rounding::kUp) {
    round_up = (bits & 0x7fffffu) != 0;
  } else if (rounding == E8M0Rounding::kNearest) {
    const bool guard = (bits & 0x400000u) != 0;
    const bool rest = (bits & 0x3fffffu) != 0;
    round_up = guard && (rest || exponent > 0);
  }
  if (round_up && !(saturate && exponent == 0xfeu)) ++exponent;
  return static_cast<uint8_t>(exponent);
}

float float8e8m0_to_float(uint8_t bits) {
  if (bits == 0xff) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

}  // namespace nxrt
