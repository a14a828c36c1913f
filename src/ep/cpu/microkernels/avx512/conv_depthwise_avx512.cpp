// AVX-512 plain-layout depthwise convolution (contract in ep/cpu/conv/conv_direct.h): the shared kernel
// (microkernels/conv_depthwise_kernel.h) over 16-lane zmm registers. Compiled with -mavx512f and friends; the
// driver calls it only when the CPU has avx512f.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined_ps() pass-through operand inside _mm512_max_ps/_mm512_min_ps as
// maybe-uninitialized; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "ep/cpu/conv/conv_direct.h"
#include "ep/cpu/microkernels/avx512/activation_avx512.h"
#include "ep/cpu/microkernels/conv_depthwise_kernel.h"

namespace nxrt::cpu::conv {

namespace {

struct Vec {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg set1(float x) { return _mm512_set1_ps(x); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static void store(Mask m, float* p, Reg v) { _mm512_mask_storeu_ps(p, m, v); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg bit_or(Reg a, Reg b) { return _mm512_or_ps(a, b); }
  static Mask mask(unsigned bits) { return static_cast<Mask>(bits); }
  static Reg activate(const FusedActivation& activation, Reg v) { return cpu::activate(activation, v); }
  static bool vectorised(ActivationKind kind) { return cpu::vectorised(kind); }
};

}  // namespace

void f32_conv_depthwise__avx512(const DirectConvJob& job) { depthwise::run<Vec>(job); }

}  // namespace nxrt::cpu::conv
