// AVX2 + FMA plain-layout depthwise convolution (contract in ep/cpu/conv/conv_direct.h): the shared kernel
// (microkernels/conv_depthwise_kernel.h) over 8-lane ymm registers. Built with -mavx2 -mfma on x86-64 only.
#include "ep/cpu/conv/conv_direct.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "ep/cpu/microkernels/avx2/activation_avx2.h"
#include "ep/cpu/microkernels/avx2/vector_lanes_avx2.h"
#include "ep/cpu/microkernels/conv_depthwise_kernel.h"

namespace nxrt::cpu::conv {

namespace {

struct Vec {
  using Reg = __m256;
  using Mask = __m256i;
  static constexpr int kLanes = 8;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg set1(float x) { return _mm256_set1_ps(x); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg load(Mask m, const float* p) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static void store(Mask m, float* p, Reg v) { _mm256_maskstore_ps(p, m, v); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static Reg bit_or(Reg a, Reg b) { return _mm256_or_ps(a, b); }
  static Mask mask(unsigned bits) { return avx2_lanes::lanes_of_bits(bits); }
  static Reg activate(const FusedActivation& activation, Reg v) { return avx2_activation::activate(activation, v); }
  static bool vectorised(ActivationKind kind) { return avx2_activation::vectorised(kind); }
};

}  // namespace

void f32_conv_depthwise__avx2(const DirectConvJob& job) { depthwise::run<Vec>(job); }

}  // namespace nxrt::cpu::conv

#endif
