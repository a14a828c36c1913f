// float16 (IEEE binary16) and bfloat16 storage types. Arithmetic happens in float;
// conversions round to nearest even and keep NaN a NaN.
#pragma once

#include <bit>
#include <cstdint>

namespace nxrt {

struct Float16 {
  uint16_t bits = 0;

  Float16() = default;
  explicit Float16(float value) : bits(from_float(value)) {}
  static Float16 from_bits(uint16_t raw) {
    Float16 h;
    h.bits = raw;
    return h;
  }
  operator float() const { return to_float(bits); }

  static uint16_t from_float(float value) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t abs = f & 0x7fffffffu;
    if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
    if (abs < 0x38800000u) {  // result is a float16 subnormal or zero
      const float magic = std::bit_cast<float>(0x3f000000u);  // 0.5: aligns the mantissa for rounding
      const float shifted = std::bit_cast<float>(abs) + magic;
      return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(shifted) - 0x3f000000u));
    }
    const uint32_t mantissa_odd = (abs >> 13) & 1u;
    uint32_t rounded = abs + 0xc8000fffu + mantissa_odd;  // rebias exponent (-112 << 23) and round half to even
    return static_cast<uint16_t>(sign | (rounded >> 13));
  }

  static float to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) {
      const float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);  // mantissa * 2^-24
      return sign ? -magnitude : magnitude;
    }
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
};

struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  explicit BFloat16(float value) : bits(from_float(value)) {}
  static BFloat16 from_bits(uint16_t raw) {
    BFloat16 b;
    b.bits = raw;
    return b;
  }
  operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

  static uint16_t from_float(float value) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);
    const uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
    return static_cast<uint16_t>((f + rounding) >> 16);
  }
};

}  // namespace nxrt
