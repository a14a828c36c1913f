// Vectorised float math over contiguous arrays, one copy per ISA built from the same source
// (vector_math_loops.h): generic (baseline x86-64 / any target), AVX2+FMA and AVX-512. vector_math.cpp picks one
// at start by CPU features. Every function writes out[i] = f(in[i]) for i < n; `out` may equal `in`.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

// Elementwise binary arithmetic, indexed [op][shape]: op 0 add, 1 sub, 2 mul, 3 div; shape 0: out[i] = a[i] op
// b[i], 1: a[0] op b[i] (a scalar), 2: a[i] op b[0] (b scalar). `out` may equal `a` or `b`.
inline constexpr int kBinaryOps = 4;
inline constexpr int kBinaryShapes = 3;
template <class T>
using BinaryArrayFn = void (*)(const T* a, const T* b, T* out, int64_t n);

struct VectorMathKernels {
  void (*exp)(const float* in, float* out, int64_t n);
  void (*tanh)(const float* in, float* out, int64_t n);
  void (*sigmoid)(const float* in, float* out, int64_t n);
  void (*erf)(const float* in, float* out, int64_t n);
  void (*gelu_erf)(const float* in, float* out, int64_t n);
  void (*gelu_tanh)(const float* in, float* out, int64_t n);
  // out[i] = in[i] * sigmoid(alpha * in[i]) (SiLU at alpha 1).
  void (*swish)(const float* in, float* out, int64_t n, float alpha);
  // out[i] = exp(in[i] - shift); returns the sum of out.
  float (*exp_shifted_sum)(const float* in, float* out, int64_t n, float shift);
  // out = softmax(in) over one row of n > 0 values: exp(in[i] - max) / sum; NaN inputs are skipped by the max
  // and make every output NaN through the sum.
  void (*softmax_row)(const float* in, float* out, int64_t n);
  // For each row r < rows of x (row stride ld, n > 0 values): x[i] = exp(x[i] - max) in place, with the max and
  // NaN rules of softmax_row, and sums[r] = the row's sum; softmax is then x[i] / sums[r].
  void (*exp_rows)(float* x, int64_t rows, int64_t n, int64_t ld, float* sums);
  // Mean and variance of one row of n > 0 floats: the mean from float lanes flushed into a double every 1024
  // values, the variance from the deviations d from the float-rounded mean, as mean(d^2) - mean(d)^2 (>= 0).
  void (*row_moments)(const float* x, int64_t n, double* mean, double* variance);
  // Mean of x[i]^2 over one row of n > 0 floats (RMSNormalization's statistic), float lanes flushed into a double
  // every 1024 values.
  double (*row_mean_square)(const float* x, int64_t n);
  // y[i] = (x[i] - mean) * inv_std * scale[i] + bias[i] (bias may be null: + 0). y may equal x.
  void (*normalize_row)(const float* x, float mean, float inv_std, const float* scale, const float* bias, float* y,
                        int64_t n);
  // out[e] = sum over j < rows of p[j] * v[j * ldv + e], for e < n. skip_zero_weights: rows whose weight is 0 are
  // never read (a NaN or infinity in them does not reach the sum); otherwise every row is the IEEE product
  // (0 * NaN = NaN), as a matrix product would give.
  void (*weighted_rows)(const float* p, const float* v, int64_t rows, int64_t ldv, int64_t n, float* out,
                        bool skip_zero_weights);
  // out[j] = sum over f < features of (double(x[f]) - double(vt[f * ld + j]))^2 for j < count: the squared
  // distances from x to `count` vectors stored feature-major (vector j's feature f at vt[f * ld + j]), in double.
  void (*squared_distances_f64)(const float* x, const float* vt, int64_t features, int64_t count, int64_t ld,
                                double* out);
  // The compensated sum of x[0 .. n) (n >= 0) as a pair: *sum the rounded sum, *lost the exact errors of its
  // additions (TwoSum in every lane, lanes merged by TwoSum); *sum + *lost is the sum to within about one rounding
  // while *sum is finite (an infinite or NaN *sum is the result, *lost then meaningless).
  void (*compensated_sum_f32)(const float* x, int64_t n, float* sum, float* lost);
  void (*compensated_sum_f64)(const double* x, int64_t n, double* sum, double* lost);
  // For j < n: (sum[j], lost[j]) = the compensated sum of base[offsets[r] + j] over r < rows (column sums).
  void (*compensated_column_sums_f32)(const float* base, const int64_t* offsets, int64_t rows, int64_t n,
                                      float* sum, float* lost);
  void (*compensated_column_sums_f64)(const double* base, const int64_t* offsets, int64_t rows, int64_t n,
                                      double* sum, double* lost);
  BinaryArrayFn<float> binary_f32[kBinaryOps][kBinaryShapes];
  BinaryArrayFn<double> binary_f64[kBinaryOps][kBinaryShapes];
};

VectorMathKernels vector_math_kernels_generic();
// Defined only on x86-64; call only when the CPU has the ISA.
VectorMathKernels vector_math_kernels_avx2();
VectorMathKernels vector_math_kernels_avx512();

}  // namespace nxrt::cpu
