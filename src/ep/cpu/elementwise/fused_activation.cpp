#include "ep/cpu/elementwise/fused_activation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu {

namespace {

struct NamedActivation {
  std::string_view name;
  ActivationKind kind;
};

constexpr NamedActivation kActivations[] = {
    {"Relu", ActivationKind::kRelu},           {"Sigmoid", ActivationKind::kSigmoid},
    {"Tanh", ActivationKind::kTanh},           {"LeakyRelu", ActivationKind::kLeakyRelu},
    {"Clip", ActivationKind::kClip},           {"HardSigmoid", ActivationKind::kHardSigmoid},
    {"Gelu", ActivationKind::kGelu},           {"GeluTanh", ActivationKind::kGeluTanh},
    {"Swish", ActivationKind::kSwish},         {"HardSwish", ActivationKind::kHardSwish},
};

template <class T>
void apply_typed(const FusedActivation& act, T* data, int64_t count) {
  const T alpha = static_cast<T>(act.alpha);
  const T beta = static_cast<T>(act.beta);
  if constexpr (std::is_same_v<T, float>) {
    switch (act.kind) {
      case ActivationKind::kSigmoid: vector_sigmoid(data, data, count); return;
      case ActivationKind::kTanh: vector_tanh(data, data, count); return;
      case ActivationKind::kGelu: vector_gelu_erf(data, data, count); return;
      case ActivationKind::kGeluTanh: vector_gelu_tanh(data, data, count); return;
      case ActivationKind::kSwish: vector_swish(data, data, count, act.alpha); return;
      default: break;
    }
  }
  switch (act.kind) {
    case ActivationKind::kNone: return;
    case ActivationKind::kRelu:
      for (int64_t i = 0; i < count; ++i) data[i] = data[i] < T{0} ? T{0} : data[i];
      return;
    case ActivationKind::kSigmoid:
      for (int64_t i = 0; i < count; ++i) data[i] = T{1} / (T{1} + std::exp(-data[i]));
      return;
    case ActivationKind::kTanh:
      for (int64_t i = 0; i < count; ++i) data[i] = std::tanh(data[i]);
      return;
    case ActivationKind::kLeakyRelu:
      for (int64_t i = 0; i < count; ++i) data[i] = data[i] < T{0} ? alpha * data[i] : data[i];
      return;
    case ActivationKind::kClip:
      for (int64_t i = 0; i < count; ++i) data[i] = std::min(std::max(data[i], alpha), beta);
      return;
    case ActivationKind::kHardSigmoid:
      for (int64_t i = 0; i < count; ++i) data[i] = std::max(T{0}, std::min(T{1}, alpha * data[i] + beta));
      return;
    case ActivationKind::kGelu:
      for (int64_t i = 0; i < count; ++i) {
        data[i] = T{0.5} * data[i] * (T{1} + std::erf(data[i] * static_cast<T>(0.7071067811865476)));
      }
      return;
    case ActivationKind::kGeluTanh:
      for (int64_t i = 0; i < count; ++i) {
        const T x = data[i];
        const T inner = static_cast<T>(0.7978845608028654) * (x + static_cast<T>(0.044715) * x * x * x);
        data[i] = T{0.5} * x * (T{1} + std::tanh(inner));
      }
      return;
    case ActivationKind::kSwish:
      for (int64_t i = 0; i < count; ++i) data[i] = data[i] / (T{1} + std::exp(-alpha * data[i]));
      return;
    case ActivationKind::kHardSwish:
      for (int64_t i = 0; i < count; ++i) {
        const T x = data[i];
        data[i] = x * std::max(T{0}, std::min(T{1}, x / T{6} + T{0.5}));
      }
      return;
  }
}

}  // namespace

Expected<FusedActivation> parse_fused_activation(std::string_view name, std::span<const float> params,
                                                 std::string_view description) {
  FusedActivation act;
  if (name.empty()) return act;
  const auto* found = std::find_if(std::begin(kActivations), std::end(kActivations),
                                   [&](const NamedActivation& entry) { return entry.name == name; });
  if (found == std::end(kActivations)) {
    return make_error(StatusCode::kInvalidArgument, description, ": unsupported fused activation '",
                      std::string(name), "'");
  }
  act.kind = found->kind;
  const auto param = [&](size_t index, float fallback) { return index < params.size() ? params[index] : fallback; };
  switch (act.kind) {
    case ActivationKind::kLeakyRelu: act.alpha = param(0, 0.01f); break;
    case ActivationKind::kClip:
      act.alpha = param(0, -std::numeric_limits<float>::infinity());
      act.beta = param(1, std::numeric_limits<float>::infinity());
      break;
    case ActivationKind::kHardSigmoid:
      act.alpha = param(0, 0.2f);
      act.beta = param(1, 0.5f);
      break;
    case ActivationKind::kSwish: act.alpha = param(0, 1.0f); break;
    default: break;
  }
  return act;
}

bool activation_in_avx512_registers(ActivationKind kind) {
  return kind == ActivationKind::kNone || kind == ActivationKind::kRelu || kind == ActivationKind::kLeakyRelu ||
         kind == ActivationKind::kClip;
}

std::string_view fused_activation_name(ActivationKind kind) {
  for (const NamedActivation& entry : kActivations) {
    if (entry.kind == kind) return entry.name;
  }
  return "";
}

void apply_activation(const FusedActivation& activation, float* data, int64_t count) {
  apply_typed(activation, data, count);
}
void apply_activation(const FusedActivation& activation, double* data, int64_t count) {
  apply_typed(activation, data, count);
}

}  // namespace nxrt::cpu
