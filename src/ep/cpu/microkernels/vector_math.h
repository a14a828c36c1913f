// Fast float math over contiguous arrays, vectorised for the best ISA the CPU has (chosen once, see
// kernels/vector_math_kernels.h). out[i] = f(in[i]) for i < n; `out` may equal `in`. Errors against the correctly
// rounded result: exp 1 ulp, tanh/sigmoid 2 ulp, erf 3 ulp (absolute < 1.2e-7); the Gelu forms inherit them.
// NaN propagates; +-inf give the function's limits.
#pragma once

#include <cstdint>
#include <string_view>

#include "ep/cpu/microkernels/vector_math_kernels.h"

namespace nxrt::cpu {

void vector_exp(const float* in, float* out, int64_t n);
void vector_tanh(const float* in, float* out, int64_t n);
void vector_sigmoid(const float* in, float* out, int64_t n);
void vector_erf(const float* in, float* out, int64_t n);
// 0.5 x (1 + erf(x / sqrt 2)).
void vector_gelu_erf(const float* in, float* out, int64_t n);
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
void vector_gelu_tanh(const float* in, float* out, int64_t n);
// x * sigmoid(alpha x) (SiLU at alpha 1).
void vector_swish(const float* in, float* out, int64_t n, float alpha);
// out[i] = exp(in[i] - shift); returns the sum of out.
float vector_exp_shifted_sum(const float* in, float* out, int64_t n, float shift);
// Softmax of one row of n > 0 floats: exp(in[i] - max) / sum, NaN skipped by the max (and then NaN everywhere
// through the sum); in and out may alias.
void vector_softmax_row(const float* in, float* out, int64_t n);
// Unnormalised softmax of `rows` rows (stride ld) in place, with each row's sum (see VectorMathKernels).
void vector_exp_rows(float* x, int64_t rows, int64_t n, int64_t ld, float* sums);
// Row statistics and the affine normalisation of LayerNormalization (see VectorMathKernels).
void vector_row_moments(const float* x, int64_t n, double* mean, double* variance);
double vector_row_mean_square(const float* x, int64_t n);
void vector_normalize_row(const float* x, float mean, float inv_std, const float* scale, const float* bias, float* y,
                          int64_t n);
// out[j] = sum over f < features of (double(x[f]) - double(vt[f * ld + j]))^2 for j < count (vectors stored
// feature-major; see VectorMathKernels).
void vector_squared_distances(const float* x, const float* vt, int64_t features, int64_t count, int64_t ld,
                              double* out);
// out[e] = sum over j < rows of p[j] * v[j * ldv + e] for e < n, rows of weight 0 skipped when skip_zero_weights
// (see VectorMathKernels).
void vector_weighted_rows(const float* p, const float* v, int64_t rows, int64_t ldv, int64_t n, float* out,
                          bool skip_zero_weights);
// Softmax of one float row as the Softmax kernel computes it (defined in softmax.cpp); x and y may alias.
void softmax_row_f32(const float* x, float* y, int64_t n);

// The compensated sum of x[0 .. n) as the pair (*sum, *lost) (see VectorMathKernels::compensated_sum_f32).
void vector_compensated_sum(const float* x, int64_t n, float* sum, float* lost);
void vector_compensated_sum(const double* x, int64_t n, double* sum, double* lost);
// For j < n: (sum[j], lost[j]) = the compensated sum of base[offsets[r] + j] over r < rows.
void vector_compensated_column_sums(const float* base, const int64_t* offsets, int64_t rows, int64_t n, float* sum,
                                    float* lost);
void vector_compensated_column_sums(const double* base, const int64_t* offsets, int64_t rows, int64_t n,
                                    double* sum, double* lost);

// Elementwise arithmetic over arrays for the binary kernels: `op` 0 add, 1 sub, 2 mul, 3 div; `shape` 0 both
// arrays, 1 a is a scalar (a[0]), 2 b is a scalar. out[i] = a op b for i < n.
BinaryArrayFn<float> binary_array_f32(int op, int shape);
BinaryArrayFn<double> binary_array_f64(int op, int shape);

// The ISA the functions above use: "avx512", "avx2" or "generic".
const char* vector_math_isa();

// For tests: use the copy for `isa` ("generic", "avx2", "avx512"; "" for the CPU's best). False, changing
// nothing, when the CPU lacks the ISA. Not thread-safe with concurrent callers of the functions above.
bool vector_math_force_isa(std::string_view isa);

}  // namespace nxrt::cpu
