// Private helpers shared by the attention family files (attention*.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu::attention_detail {

// Half types compute in float, double in double.
template <class T>
using AccOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
AccOf<T> to_acc(T x) {
  return static_cast<AccOf<T>>(static_cast<std::conditional_t<std::is_same_v<T, double>, double, float>>(x));
}

template <class T, class Acc>
T from_acc(Acc v) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    return static_cast<T>(v);
  } else {
    return T(static_cast<float>(v));
  }
}

// The value `v` would have after a store to T and a load back: models the per-op rounding of the reference.
template <class T, class Acc>
Acc round_as(Acc v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return static_cast<Acc>(static_cast<float>(T(static_cast<float>(v))));
  } else if constexpr (std::is_same_v<T, float>) {
    return static_cast<Acc>(static_cast<float>(v));
  } else {
    return v;
  }
}

inline void gemm(const GemmArgs& args, const float* a, const float* b, float* c, ThreadPool& pool) {
  gemm_f32(args, 1.0f, a, b, 0.0f, c, pool);
}
inline void gemm(const GemmArgs& args, const double* a, const double* b, double* c, ThreadPool& pool) {
  gemm_f64(args, 1.0, a, b, 0.0, c, pool);
}

inline bool has_type(DataTypeMask mask, DataType type) { return ((mask >> static_cast<int>(type)) & 1u) != 0; }

Expected<std::unique_ptr<Kernel>> create_rotary_embedding(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_tensor_scatter(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_swiglu(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_linear_attention(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_flex_attention(const KernelInfo& info);

}  // namespace nxrt::cpu::attention_detail
