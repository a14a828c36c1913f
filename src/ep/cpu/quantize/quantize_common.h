// Helpers shared by the quantization kernels (quantize.cpp, quantize_matmul.cpp).
#pragma once

#include <string>
#include <vector>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu::quant {

constexpr DataTypeMask bit_of(DataType type) { return DataTypeMask{1} << static_cast<int>(type); }

inline bool in_mask(DataTypeMask mask, DataType type) { return ((mask >> static_cast<int>(type)) & 1u) != 0; }

// Inclusive integer range of an integer quantized type; false for float8/float4 types.
bool integer_range(DataType type, double& lo, double& hi);

// Every element of `x` converted to float (any castable element type, packed types included).
Expected<std::vector<float>> to_floats(const Tensor& x, const std::string& description, ThreadPool& pool);
Expected<std::vector<double>> to_doubles(const Tensor& x, const std::string& description, ThreadPool& pool);

// Writes `values` (one per element of y) into y, converting to y's dtype; `saturate` applies to float8.
Status from_floats(const std::vector<float>& values, Tensor& y, bool saturate, const std::string& description,
                   ThreadPool& pool);

// `values` of shape `from` expanded to `to` under numpy broadcasting (from right-aligned, dims 1 or equal).
Expected<std::vector<double>> broadcast_values(const std::vector<double>& values, const Shape& from, const Shape& to,
                                               const std::string& what, const std::string& description);

// Rounds `value` to the precision of `type` (float16/bfloat16); other types leave it unchanged.
float round_to_precision(float value, DataType type);

}  // namespace nxrt::cpu::quant
