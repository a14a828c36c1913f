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

}  // namespace nxrt
