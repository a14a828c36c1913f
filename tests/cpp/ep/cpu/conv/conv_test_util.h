// Shared by the plain-layout conv kernel tests (conv_direct_test.cpp, conv_depthwise_test.cpp): random inputs,
// the fused activations in double, and the bias / Z / activation variants each case runs with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ep/cpu/elementwise/fused_activation.h"

namespace nxrt::cpu::testing {

inline std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// The activations the variants use, in double.
inline double activate(const FusedActivation& a, double v) {
  switch (a.kind) {
    case ActivationKind::kRelu: return std::max(v, 0.0);
    case ActivationKind::kLeakyRelu: return v < 0 ? a.alpha * v : v;
    case ActivationKind::kClip: return std::clamp(v, static_cast<double>(a.alpha), static_cast<double>(a.beta));
    case ActivationKind::kSigmoid: return 1.0 / (1.0 + std::exp(-v));
    default: return v;
  }
}

// Z: none, a separate tensor, or the output itself (in place).
enum class ZMode { kNone, kSeparate, kInPlace };

struct Variant {
  bool bias;
  ZMode z;
  FusedActivation activation;
};

}  // namespace nxrt::cpu::testing
