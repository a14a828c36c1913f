// Cast (opset 6+): between every numeric type, bool, string and the float8 formats (saturate from opset 19),
// int4/uint4 (21+), float4e2m1 (23+), float8e8m0 with round_mode (24+) and int2/uint2 (25+). Packed types are
// converted through an unpacked int64/float32/float64 tensor; see encode_one for their out-of-range rules.
// Float -> integer truncates toward zero. Out of the destination's range the spec leaves the result undefined;
// nxrt gives 0 for NaN and +-inf (8- and 16-bit destinations get 0 from numpy and onnxruntime on x86 too) and
// clamps other values to int64 before the (modular) narrowing, so in-range values and the wrap of moderately
// out-of-range ones (-1.0 -> uint8 255, 300.5 -> int8 44) match numpy. Conversions into float16, bfloat16 and
// the float8 formats round once to nearest even from the source value (a float64 or a wide integer goes through
// float rounded to odd, which keeps the single rounding). Floats format as numpy's str() does: shortest
// round-trip digits, positional for 1e-4 <= |x| < 1e16, "nan", "inf", "-inf"; bool formats as "True"/"False".
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "core/float8.h"
#include "ep/cpu/elementwise/cast_convert.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/microkernels/half_convert.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <class T>
constexpr bool is_floating_v = std::is_floating_point_v<T> || is_half_v<T>;

template <class T>
auto widen(T value) {
  if constexpr (is_half_v<T>) {
    return static_cast<float>(value);
  } else {
    return value;
  }
}

bool strcasecmp_ascii(const std::string& text, const char* word) {
  const size_t length = std::strlen(word);
  if (text.size() != length) return false;
  for (size_t i = 0; i < length; ++i) {
    const char c = text[i] >= 'A' && text[i] <= 'Z' ? static_cast<char>(text[i] - 'A' + 'a') : text[i];
    if (c != word[i]) return false;
  }
  return true;
}

template <class D>
D float_to_integer(double value) {
  if (!std::isfinite(value)) return D{0};
  if constexpr (std::is_same_v<D, uint64_t>) {
    if (value >= 0) return value >= 18446744073709551616.0 ? std::numeric_limits<uint64_t>::max() : static_cast<D>(value);
  }
  const double truncated = std::trunc(value);
  int64_t wide = 0;
  if (truncated >= 9223372036854775808.0) wide = std::numeric_limits<int64_t>::max();
  else if (truncated < -9223372036854775808.0) wide = std::numeric_limits<int64_t>::min();
  else wide = static_cast<int64_t>(truncated);
  return static_cast<D>(wide);
}

// `value` as a float rounded to odd: toward zero, with the lowest mantissa bit set when the result is inexact.
// Rounding that float to nearest even into a format of at most 22 significant bits (float16, bfloat16, float8)
// gives the value rounded once, where rounding through a float rounded to nearest could round twice
// (1 + 2^-11 + 2^-40 in float64 is 1 + 2^-11 in float, a tie that float16 rounds down to 1).
float to_float_rounded_to_odd(double value) {
  float rounded = static_cast<float>(value);
  if (std::isnan(value) || static_cast<double>(rounded) == value) return rounded;
  if (std::fabs(static_cast<double>(rounded)) > std::fabs(value)) rounded = std::nextafter(rounded, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(rounded) | 1u);
}

// An integer as a float rounded to odd (see above): its top 24 significant bits, the lowest one set when any bit
// below them is.
template <class I>
float to_float_rounded_to_odd(I value) {
  bool negative = false;
  if constexpr (std::is_signed_v<I>) negative = value < 0;
  const uint64_t magnitude = negative ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  const int width = std::bit_width(magnitude);
  if (width <= 24) return static_cast<float>(value);
  const int shift = width - 24;
  uint64_t kept = magnitude >> shift;
  if ((magnitude & ((uint64_t{1} << shift) - 1u)) != 0) kept |= 1u;
  const float rounded = std::ldexp(static_cast<float>(kept), shift);
  return negative ? -rounded : rounded;
}

// `value` as a float from which rounding to nearest even into a narrower float type rounds only once: exact for
// float, the half types and integers of up to 16 bits, rounded to odd for float64 and wider integers.
template <class S>
float narrowing_float(S value) {
  if constexpr (std::is_same_v<S, double> || (std::is_integral_v<S> && sizeof(S) > 2 && !std::is_same_v<S, bool>)) {
    return to_float_rounded_to_odd(value);
  } else {
    return static_cast<float>(widen(value));
  }
}

template <class S, class D>
D convert(S value) {
  if constexpr (std::is_same_v<D, bool>) {
    return widen(value) != 0;
  } else if constexpr (std::is_same_v<S, bool>) {
    if constexpr (is_half_v<D>) return D(value ? 1.0f : 0.0f);
    else return static_cast<D>(value ? 1 : 0);
  } else if constexpr (is_half_v<D>) {
    return D(narrowing_float(value));
  } else if constexpr (std::is_floating_point_v<D>) {
    return static_cast<D>(widen(value));
  } else if constexpr (is_floating_v<S>) {
    return float_to_integer<D>(static_cast<double>(widen(value)));
  } else {
    return static_cast<D>(value);
  }
}

// numpy's str() layout for a shortest round-trip scientific string "d.ddde+XX".
std::string numpy_layout(const char* begin, const char* end) {
  const std::string scientific(begin, end);
  const size_t e = scientific.find('e');
  const int exponent = std::atoi(scientific.c_str() + e + 1);
  if (exponent < -4 || exponent >= 16) return scientific;
  const bool negative = scientific[0] == '-';
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i) {
    if (scientific[i] != '.') digits += scientific[i];
  }
  std::string out = negative ? "-" : "";
  const size_t integer_digits = static_cast<size_t>(exponent) + 1;
  if (exponent < 0) {
    out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  } else if (integer_digits >= digits.size()) {
    out += digits + std::string(integer_digits - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, integer_digits) + "." + digits.substr(integer_digits);
  }
  return out;
}

template <class F>
std::string format_float(F value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  return numpy_layout(buffer, result.ptr);
}

// Half-precision: the fewest significant digits that read back to the same 16-bit value.
template <class H>
std::string format_half(H value) {
  const float f = static_cast<float>(value);
  if (std::isnan(f) || std::isinf(f)) return format_float(f);
  char buffer[64];
  std::to_chars_result result{};
  for (int precision = 0; precision <= 9; ++precision) {
    result = std::to_chars(buffer, buffer + sizeof(buffer) - 1, f, std::chars_format::scientific, precision);
    *result.ptr = '\0';
    if (H(std::strtof(buffer, nullptr)).bits == value.bits) break;
  }
  return numpy_layout(buffer, result.ptr);
}

template <class S>
std::string to_string_value(S value) {
  if constexpr (std::is_same_v<S, bool>) {
    return value ? "True" : "False";
  } else if constexpr (std::is_floating_point_v<S>) {
    return format_float(value);
  } else if constexpr (is_half_v<S>) {
    return format_half(value);
  } else {
    return std::to_string(value);
  }
}

bool parse_double(const std::string& text, double& value) {
  const char* begin = text.c_str();
  char* end = nullptr;
  value = std::strtod(begin, &end);
  if (end == begin) return false;
  while (*end == ' ' || *end == '\t' || *end == '\n') ++end;
  return *end == '\0';
}

template <class D>
bool parse_value(const std::string& text, D& value) {
  if constexpr (std::is_same_v<D, bool>) {
    if (strcasecmp_ascii(text, "true")) return value = true, true;
    if (strcasecmp_ascii(text, "false")) return value = false, true;
  }
  if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool>) {
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    if constexpr (std::is_signed_v<D>) {
      const long long parsed = std::strtoll(begin, &end, 10);
      if (end != begin && *end == '\0' && errno == 0) return value = static_cast<D>(parsed), true;
    } else {
      const unsigned long long parsed = std::strtoull(begin, &end, 10);
      if (end != begin && *end == '\0' && errno == 0 && text.find('-') == std::string::npos) {
        return value = static_cast<D>(parsed), true;
      }
    }
  }
  double parsed = 0;
  if (!parse_double(text, parsed)) return false;
  value = convert<double, D>(parsed);
  return true;
}

constexpr int64_t kGrain = 16384;

// Element `value` as the float a float8 destination rounds from (see narrowing_float).
template <class S>
float read_float(S value) {
  if constexpr (std::is_same_v<S, bool>) {
    return value ? 1.0f : 0.0f;
  } else {
    return narrowing_float(value);
  }
}

Status parse_strings(const Tensor& x, Tensor& y, bool saturate, const std::string& description) {
  const DataType to = y.dtype();
  const std::string* in = x.data<std::string>();
  const auto to_f8 = float8_format_of(to);
  Status status;
  for (int64_t i = 0; i < x.numel() && status.is_ok(); ++i) {
    bool ok = false;
    if (to_f8) {
      double value = 0;
      ok = parse_double(in[i], value);
      if (ok) y.data<uint8_t>()[i] = float_to_float8(to_float_rounded_to_odd(value), *to_f8, saturate);
    } else {
      visit_dtype<AllPodTypes>(to, [&]<class D>() { ok = parse_value<D>(in[i], y.data<D>()[i]); });
    }
    if (!ok) {
      status = make_error(StatusCode::kInvalidArgument, description, ": input 0 element ", i, " \"", in[i],
                          "\" cannot be parsed as ", data_type_name(to));
    }
  }
  return status;
}

constexpr DataTypeMask bit_of(DataType type) { return DataTypeMask{1} << static_cast<int>(type); }
constexpr DataTypeMask float8_mask() {
  return bit_of(DataType::kFloat8E4M3FN) | bit_of(DataType::kFloat8E4M3FNUZ) | bit_of(DataType::kFloat8E5M2) |
         bit_of(DataType::kFloat8E5M2FNUZ);
}
constexpr DataTypeMask packed_mask() {
  return bit_of(DataType::kInt4) | bit_of(DataType::kUInt4) | bit_of(DataType::kInt2) | bit_of(DataType::kUInt2) |
         bit_of(DataType::kFloat4E2M1) | bit_of(DataType::kFloat8E8M0);
}
constexpr DataTypeMask kCastTypes =
    type_mask(AllPodTypes{}) | type_mask(TypeList<std::string>{}) | float8_mask() | packed_mask();

// First opset whose Cast lists `type` (0 for the types of opset 6).
int64_t first_opset_of(DataType type) {
  switch (type) {
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: return 19;
    case DataType::kInt4:
    case DataType::kUInt4: return 21;
    case DataType::kFloat4E2M1: return 23;
    case DataType::kFloat8E8M0: return 24;
    case DataType::kInt2:
    case DataType::kUInt2: return 25;
    default: return 0;
  }
}

class CastKernel final : public Kernel {
 public:
  CastKernel(std::string description, DataType to, bool saturate, E8M0Rounding rounding)
      : description_(std::move(description)), to_(to), saturate_(saturate), rounding_(rounding) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    }
    if (!castable(inputs[0]->dtype())) {
      return make_error(StatusCode::kNotImplemented, description_, ": casting input 0 of type ",
                        data_type_name(inputs[0]->dtype()), " is not supported");
    }
    outputs.assign(1, OutputDesc{to_, inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    return cast_tensor(*inputs[0], outputs[0], saturate_, rounding_, description_, pool);
  }

 private:
  std::string description_;
  DataType to_;
  bool saturate_;
  E8M0Rounding rounding_;
};

Expected<std::unique_ptr<Kernel>> create_cast(const KernelInfo& info) {
  const graph::Node& node = info.node;
  if (node.find_attribute("to") == nullptr) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": required attribute 'to' is missing");
  }
  TRY_ASSIGN(const int64_t to_value, node.attr_int("to", 0));
  const auto to = data_type_from_int(to_value);
  if (!to || !castable(*to)) {
    return make_error(StatusCode::kNotImplemented, node.describe(), ": casting to type ", to_value,
                      to ? std::string(" (") + std::string(data_type_name(*to)) + ")" : std::string(),
                      " is not supported");
  }
  if (info.opset() < first_opset_of(*to)) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": type ", data_type_name(*to), " needs opset ",
                      first_opset_of(*to), ", model uses ", info.opset());
  }
  TRY_ASSIGN(const int64_t saturate, node.attr_int("saturate", 1));
  TRY_ASSIGN(const E8M0Rounding rounding, cast_rounding_of(node));
  return std::unique_ptr<Kernel>(
      std::make_unique<CastKernel>(node.describe(), *to, info.opset() < 19 || saturate != 0, rounding));
}

const KernelDef kCastKernels[] = {
    {"Cast", graph::kOnnxDomain, 6, kLatestOpset, kCastTypes, 0, create_cast},
};

Status cast_regular(const Tensor& x, Tensor& y, bool saturate, const std::string& description, ThreadPool& pool);

}  // namespace

bool castable(DataType type) {
  return type != DataType::kUndefined && ((kCastTypes >> static_cast<int>(type)) & 1u) != 0;
}

namespace {

Status cast_regular(const Tensor& x, Tensor& y, bool saturate, const std::string& description, ThreadPool& pool) {
  const DataType to = y.dtype();
  const DataType from = x.dtype();
  const int64_t n = x.numel();
  const auto from_f8 = float8_format_of(from);
  const auto to_f8 = float8_format_of(to);
  // A saturating cast applies the spec's table even within one float8 type: float8e5m2's +-inf become +-max.
  const bool saturates_infinities = to == DataType::kFloat8E5M2 && saturate;
  if (from == to && !saturates_infinities) {
    if (from == DataType::kString) {
      for (int64_t i = 0; i < n; ++i) y.data<std::string>()[i] = x.data<std::string>()[i];
    } else if (n > 0) {
      std::memcpy(y.raw_data(), x.raw_data(), x.storage_bytes());
    }
    return Status::ok();
  }
  if (to == DataType::kString) {
    std::string* out = y.data<std::string>();
    if (from_f8) {
      const uint8_t* in = x.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) out[i] = to_string_value(float8_to_float(in[i], *from_f8));
    } else {
      visit_dtype<AllPodTypes>(from, [&]<class S>() {
        const S* in = x.data<S>();
        for (int64_t i = 0; i < n; ++i) out[i] = to_string_value(in[i]);
      });
    }
    return Status::ok();
  }
  if (from == DataType::kString) return parse_strings(x, y, saturate, description);
  if (to_f8) {
    uint8_t* out = y.data<uint8_t>();
    const auto encode = [&](const auto* in) {
      pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = float_to_float8(read_float(in[i]), *to_f8, saturate);
      });
    };
    if (from_f8) {
      const uint8_t* in = x.data<uint8_t>();
      pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          out[i] = float_to_float8(float8_to_float(in[i], *from_f8), *to_f8, saturate);
        }
      });
    } else {
      visit_dtype<AllPodTypes>(from, [&]<class S>() { encode(x.data<S>()); });
    }
    return Status::ok();
  }
  if (from_f8) {
    const uint8_t* in = x.data<uint8_t>();
    visit_dtype<AllPodTypes>(to, [&]<class D>() {
      D* out = y.data<D>();
      pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = convert<float, D>(float8_to_float(in[i], *from_f8));
      });
    });
    return Status::ok();
  }
#if defined(__x86_64__)
  // float16 <-> float32 through F16C (the same round-to-nearest-even results).
  if (cpu_isa_at_least(CpuIsa::kAvx2) && ((from == DataType::kFloat16 && to == DataType::kFloat32) ||
                                          (from == DataType::kFloat32 && to == DataType::kFloat16))) {
    const bool widen = from == DataType::kFloat16;
    pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
      if (widen) {
        f16_to_f32__avx2(x.data<uint16_t>() + begin, y.data<float>() + begin, end - begin);
      } else {
        f32_to_f16__avx2(x.data<float>() + begin, y.data<uint16_t>() + begin, end - begin);
      }
    });
    return Status::ok();
  }
#endif
  visit_dtype<AllPodTypes>(from, [&]<class S>() {
    visit_dtype<AllPodTypes>(to, [&]<class D>() {
      const S* in = x.data<S>();
      D* out = y.data<D>();
      pool.parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = convert<S, D>(in[i]);
      });
    });
  });
  return Status::ok();
}

bool is_packed_int(DataType type) {
  return type == DataType::kInt4 || type == DataType::kUInt4 || type == DataType::kInt2 || type == DataType::kUInt2;
}
bool is_packed(DataType type) { return ((packed_mask() >> static_cast<int>(type)) & 1u) != 0; }

// Bits per element (2, 4 or 8 for e8m0) and, for the packed integers, the value range.
struct PackedSpec {
  int bits;
  int64_t low;
  int64_t high;
};

PackedSpec packed_spec(DataType type) {
  switch (type) {
    case DataType::kInt4: return {4, -8, 7};
    case DataType::kUInt4: return {4, 0, 15};
    case DataType::kInt2: return {2, -2, 1};
    case DataType::kUInt2: return {2, 0, 3};
    case DataType::kFloat4E2M1: return {4, 0, 0};
    default: return {8, 0, 0};
  }
}

uint8_t code_at(const uint8_t* data, int64_t i, int bits) {
  const int64_t bit = i * bits;
  return static_cast<uint8_t>((data[bit / 8] >> (bit % 8)) & ((1u << bits) - 1u));
}

// Unpacks `x` (a packed type) into `mid`: int64 for the packed integers, float32 for float4e2m1 and e8m0.
void decode_packed(const Tensor& x, Tensor& mid, ThreadPool& pool) {
  const DataType from = x.dtype();
  const PackedSpec spec = packed_spec(from);
  const uint8_t* in = x.data<uint8_t>();
  pool.parallel_for(x.numel(), kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint8_t code = code_at(in, i, spec.bits);
      if (is_packed_int(from)) {
        const int64_t value = static_cast<int64_t>(code);
        mid.data<int64_t>()[i] = spec.low < 0 && value > spec.high ? value - (int64_t{1} << spec.bits) : value;
      } else if (from == DataType::kFloat4E2M1) {
        mid.data<float>()[i] = float4e2m1_to_float(code);
      } else {
        mid.data<float>()[i] = float8e8m0_to_float(code);
      }
    }
  });
}

// Code of element i of `mid` (int64, float64 or float32) in packed type `to`. Integers keep their low bits;
// floats truncate toward zero and give 0 when NaN or out of range, as ml_dtypes does.
uint8_t encode_one(const Tensor& mid, int64_t i, DataType to, const PackedSpec& spec, bool saturate,
                   E8M0Rounding rounding) {
  const uint8_t mask = static_cast<uint8_t>((1u << spec.bits) - 1u);
  if (to == DataType::kFloat8E8M0) return float_to_float8e8m0(mid.data<float>()[i], saturate, rounding);
  if (to == DataType::kFloat4E2M1) return double_to_float4e2m1(mid.data<double>()[i]);
  if (mid.dtype() == DataType::kInt64) return static_cast<uint8_t>(static_cast<uint64_t>(mid.data<int64_t>()[i]) & mask);
  const double value = std::trunc(mid.data<double>()[i]);
  if (!(value >= static_cast<double>(spec.low) && value <= static_cast<double>(spec.high))) return 0;
  return static_cast<uint8_t>(static_cast<uint64_t>(static_cast<int64_t>(value)) & mask);
}

void encode_packed(const Tensor& mid, Tensor& y, bool saturate, E8M0Rounding rounding, ThreadPool& pool) {
  const DataType to = y.dtype();
  const PackedSpec spec = packed_spec(to);
  const int64_t n = y.numel();
  const int64_t per_byte = 8 / spec.bits;
  const int64_t bytes = (n + per_byte - 1) / per_byte;
  uint8_t* out = y.data<uint8_t>();
  pool.parallel_for(bytes, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      uint8_t byte = 0;
      for (int64_t k = 0; k < per_byte && b * per_byte + k < n; ++k) {
        byte = static_cast<uint8_t>(byte | (encode_one(mid, b * per_byte + k, to, spec, saturate, rounding)
                                            << (k * spec.bits)));
      }
      out[b] = byte;
    }
  });
}

// The unpacked type a cast to packed `to` goes through, from `from`.
DataType intermediate_to(DataType from, DataType to) {
  if (to == DataType::kFloat8E8M0) return DataType::kFloat32;
  if (to == DataType::kFloat4E2M1) return DataType::kFloat64;
  return is_float_type(from) ? DataType::kFloat64 : DataType::kInt64;
}

}  // namespace

Status cast_tensor(const Tensor& x, Tensor& y, bool saturate, E8M0Rounding rounding, const std::string& description,
                   ThreadPool& pool) {
  const DataType from = x.dtype();
  const DataType to = y.dtype();
  if (from != to && is_packed(from)) {
    const DataType mid_type = is_packed_int(from) ? DataType::kInt64 : DataType::kFloat32;
    TRY_ASSIGN(Tensor mid, Tensor::allocate(mid_type, x.shape()));
    decode_packed(x, mid, pool);
    return cast_tensor(mid, y, saturate, rounding, description, pool);
  }
  if (from != to && is_packed(to)) {
    const DataType mid_type = intermediate_to(from, to);
    if (from == mid_type) {
      encode_packed(x, y, saturate, rounding, pool);
      return Status::ok();
    }
    TRY_ASSIGN(Tensor mid, Tensor::allocate(mid_type, x.shape()));
    TRY(cast_regular(x, mid, saturate, description, pool));
    encode_packed(mid, y, saturate, rounding, pool);
    return Status::ok();
  }
  return cast_regular(x, y, saturate, description, pool);
}

Status cast_tensor(const Tensor& x, Tensor& y, bool saturate, const std::string& description, ThreadPool& pool) {
  return cast_tensor(x, y, saturate, E8M0Rounding::kUp, description, pool);
}

std::span<const KernelDef> cast_kernels() { return kCastKernels; }

Expected<E8M0Rounding> cast_rounding_of(const graph::Node& node) {
  if (node.opset < 24) return E8M0Rounding::kUp;
  TRY_ASSIGN(const std::string round_mode, node.attr_string("round_mode", "up"));
  if (round_mode == "up") return E8M0Rounding::kUp;
  if (round_mode == "down") return E8M0Rounding::kDown;
  if (round_mode == "nearest") return E8M0Rounding::kNearest;
  return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute 'round_mode' must be up, down or ",
                    "nearest, got \"", round_mode, "\"");
}

}  // namespace nxrt::cpu
