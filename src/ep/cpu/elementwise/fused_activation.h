// Activations that fused kernels (FusedGemm, FusedConv, FusedMatMul, GEMM epilogues) apply to their output in
// place. Names and parameters follow ONNX Runtime's fused contrib ops: "Relu", "Sigmoid", "Tanh",
// "LeakyRelu" (alpha), "Clip" (min, max), "HardSigmoid" (alpha, beta); nxrt adds "Gelu" (erf form), "GeluTanh"
// (tanh approximation), "Swish" (alpha: x * sigmoid(alpha * x), SiLU at alpha 1) and "HardSwish"
// (x * max(0, min(1, x / 6 + 1 / 2))). Kind kNone leaves values unchanged.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/status.h"

namespace nxrt::cpu {

enum class ActivationKind {
  kNone,
  kRelu,
  kSigmoid,
  kTanh,
  kLeakyRelu,
  kClip,
  kHardSigmoid,
  kGelu,
  kGeluTanh,
  kSwish,
  kHardSwish
};

struct FusedActivation {
  ActivationKind kind = ActivationKind::kNone;
  float alpha = 0.0f;  // LeakyRelu slope, Clip min, HardSigmoid alpha, Swish alpha
  float beta = 0.0f;   // Clip max, HardSigmoid beta

  bool is_none() const { return kind == ActivationKind::kNone; }
};

// Parses an activation name ("" means none) and its parameters; missing parameters take the ONNX defaults of
// the standalone op. INVALID_ARGUMENT naming `description` for an unknown name.
Expected<FusedActivation> parse_fused_activation(std::string_view name, std::span<const float> params,
                                                 std::string_view description);

// The name parse_fused_activation accepts for `activation` ("" for none).
std::string_view fused_activation_name(ActivationKind kind);

// True for the activations the AVX-512 epilogues apply in registers (kNone, kRelu, kLeakyRelu, kClip; see
// kernels/avx512/activation_avx512.h); others run over the stored output with apply_activation.
bool activation_in_avx512_registers(ActivationKind kind);

// data[i] = activation(data[i]) for i < count.
void apply_activation(const FusedActivation& activation, float* data, int64_t count);
void apply_activation(const FusedActivation& activation, double* data, int64_t count);

}  // namespace nxrt::cpu
