// GEMM micro-kernels per ISA, chosen once at start by CPU features (see gemm.cpp). Each computes one
// MR x NR tile: acc[r * NR + c] = sum over p < kc of a[p * MR + r] * b[p * NR + c], where `a` and `b` are the
// zero-padded k-major strips gemm.cpp packs. `acc` is overwritten.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

inline constexpr int kAvx2F32TileM = 6;
inline constexpr int kAvx2F32TileN = 16;
inline constexpr int kAvx2F64TileM = 6;
inline constexpr int kAvx2F64TileN = 8;

// True when the CPU and OS support AVX2 with FMA (x86-64 only).
bool cpu_has_avx2_fma();

// Defined only on x86-64 (kernels/avx2/, compiled with -mavx2 -mfma); never called unless cpu_has_avx2_fma().
void f32_gemm_6x16__avx2(int64_t kc, const float* a, const float* b, float* acc);
void f64_gemm_6x8__avx2(int64_t kc, const double* a, const double* b, double* acc);

}  // namespace nxrt::cpu
