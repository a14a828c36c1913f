// Cast (opset 6+): between every numeric type, bool, string and the float8 formats (saturate from opset 19).
// Float -> integer truncates toward zero; NaN gives 0 and values beyond int64 clamp before the (modular)
// narrowing, which matches numpy on x86 for in-range values. Floats format as numpy's str() does: shortest
// round-trip digits, positional for 1e-4 <= |x| < 1e16, "nan", "inf", "-inf"; bool formats as "True"/"False".
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "core/float8.h"
#include "ep/cpu/cast_convert.h"
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
  if (std::isnan(value)) return D{0};
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

template <class S, class D>
D convert(S value) {
  if constexpr (std::is_same_v<D, bool>) {
    return widen(value) != 0;
  } else if constexpr (std::is_same_v<S, bool>) {
    if constexpr (is_half_v<D>) return D(value ? 1.0f : 0.0f);
    else return static_cast<D>(value ? 1 : 0);
  } else if constexpr (is_half_v<D>) {
    return D(static_cast<float>(widen(value)));
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

template <class S>
float read_float(S value) {
  return convert<S, float>(value);
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
      if (ok) y.data<uint8_t>()[i] = float_to_float8(static_cast<float>(value), *to_f8, saturate);
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

constexpr DataTypeMask float8_mask() {
  return (DataTypeMask{1} << static_cast<int>(DataType::kFloat8E4M3FN)) |
         (DataTypeMask{1} << static_cast<int>(DataType::kFloat8E4M3FNUZ)) |
         (DataTypeMask{1} << static_cast<int>(DataType::kFloat8E5M2)) |
         (DataTypeMask{1} << static_cast<int>(DataType::kFloat8E5M2FNUZ));
}
constexpr DataTypeMask kCastTypes = type_mask(AllPodTypes{}) | type_mask(TypeList<std::string>{}) | float8_mask();

class CastKernel final : public Kernel {
 public:
  CastKernel(std::string description, DataType to, bool saturate)
      : description_(std::move(description)), to_(to), saturate_(saturate) {}

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
    return cast_tensor(*inputs[0], outputs[0], saturate_, description_, pool);
  }

 private:
  std::string description_;
  DataType to_;
  bool saturate_;
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
  if (float8_format_of(*to) && info.opset() < 19) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": float8 types need opset 19, model uses ",
                      info.opset());
  }
  TRY_ASSIGN(const int64_t saturate, node.attr_int("saturate", 1));
  return std::unique_ptr<Kernel>(std::make_unique<CastKernel>(node.describe(), *to, info.opset() < 19 || saturate != 0));
}

const KernelDef kCastKernels[] = {
    {"Cast", graph::kOnnxDomain, 6, kLatestOpset, kCastTypes, 0, create_cast},
};

}  // namespace

bool castable(DataType type) {
  return type != DataType::kUndefined && ((kCastTypes >> static_cast<int>(type)) & 1u) != 0;
}

Status cast_tensor(const Tensor& x, Tensor& y, bool saturate, const std::string& description, ThreadPool& pool) {
  const DataType to = y.dtype();
  const DataType from = x.dtype();
  const int64_t n = x.numel();
  if (from == to) {
    if (from == DataType::kString) {
      for (int64_t i = 0; i < n; ++i) y.data<std::string>()[i] = x.data<std::string>()[i];
    } else if (n > 0) {
      std::memcpy(y.raw_data(), x.raw_data(), x.storage_bytes());
    }
    return Status::ok();
  }
  const auto from_f8 = float8_format_of(from);
  const auto to_f8 = float8_format_of(to);
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

std::span<const KernelDef> cast_kernels() { return kCastKernels; }

}  // namespace nxrt::cpu
