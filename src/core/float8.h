// 8-bit float formats of ONNX (opset 19+): E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ.
// Encoding rounds to nearest even. Out-of-range values and infinities follow the Cast spec's table:
//   saturate=true:  |x| > max -> +/-max; +/-inf -> +/-max (E4M3FN, E5M2) or NaN (the FNUZ formats)
//   saturate=false: |x| > max and +/-inf -> NaN, except E5M2 which keeps +/-inf
// NaN always encodes as NaN; the FNUZ formats have no negative zero (-0 encodes as +0).
#pragma once

#include <cstdint>
#include <optional>

#include "core/data_type.h"

namespace nxrt {

enum class Float8Format { kE4M3FN, kE4M3FNUZ, kE5M2, kE5M2FNUZ };

// nullopt when `type` is not one of the four float8 element types above.
std::optional<Float8Format> float8_format_of(DataType type);

uint8_t float_to_float8(float value, Float8Format format, bool saturate);
float float8_to_float(uint8_t bits, Float8Format format);

// Largest finite magnitude: 448, 240, 57344, 57344.
float float8_max(Float8Format format);

// FLOAT4E2M1 (sign, 2 exponent bits, 1 mantissa bit; magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6), as the 4-bit code
// in the low bits. Encoding rounds to nearest even and saturates to +/-6 (infinities too); having no NaN, a NaN
// encodes as 0x8 (or 0x0 with its sign bit set), as ml_dtypes does.
uint8_t double_to_float4e2m1(double value);
float float4e2m1_to_float(uint8_t code);

// FLOAT8E8M0: an unsigned power of two 2^(bits - 127); 0xFF is NaN. Encoding reads only the float32 exponent
// bits (the sign is ignored); kUp rounds any fraction up, kNearest rounds on the guard bit (ties up), kDown
// truncates. With `saturate` a round-up never reaches 0xFF; float NaN/inf encode as 0xFF.
enum class E8M0Rounding { kUp, kDown, kNearest };
uint8_t float_to_float8e8m0(float value, bool saturate, E8M0Rounding rounding);
float float8e8m0_to_float(uint8_t bits);

}  // namespace nxrt
