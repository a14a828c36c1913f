#include "ep/cpu/microkernels/vector_math.h"

#include "ep/cpu/microkernels/cpu_features.h"

#define NXRT_VECTOR_MATH_ISA generic
#include "ep/cpu/microkernels/vector_math_loops.h"

namespace nxrt::cpu {

VectorMathKernels vector_math_kernels_generic() { return generic::make_kernels(); }

namespace {

enum class VectorIsa { kGeneric, kAvx2, kAvx512 };

VectorIsa best_isa() {
  if (cpu_isa_at_least(CpuIsa::kAvx512)) return VectorIsa::kAvx512;
  return cpu_isa_at_least(CpuIsa::kAvx2) ? VectorIsa::kAvx2 : VectorIsa::kGeneric;
}

VectorMathKernels kernels_for(VectorIsa isa) {
#if defined(__x86_64__)
  if (isa == VectorIsa::kAvx512) return vector_math_kernels_avx512();
  if (isa == VectorIsa::kAvx2) return vector_math_kernels_avx2();
#endif
  return vector_math_kernels_generic();
}

struct Selected {
  VectorIsa isa = best_isa();
  VectorMathKernels kernels = kernels_for(isa);
};

Selected& selected() {
  static Selected chosen;
  return chosen;
}

}  // namespace

void vector_exp(const float* in, float* out, int64_t n) { selected().kernels.exp(in, out, n); }
void vector_tanh(const float* in, float* out, int64_t n) { selected().kernels.tanh(in, out, n); }
void vector_sigmoid(const float* in, float* out, int64_t n) { selected().kernels.sigmoid(in, out, n); }
void vector_erf(const float* in, float* out, int64_t n) { selected().kernels.erf(in, out, n); }
void vector_gelu_erf(const float* in, float* out, int64_t n) { selected().kernels.gelu_erf(in, out, n); }
void vector_gelu_tanh(const float* in, float* out, int64_t n) { selected().kernels.gelu_tanh(in, out, n); }
void vector_swish(const float* in, float* out, int64_t n, float alpha) { selected().kernels.swish(in, out, n, alpha); }
float vector_exp_shifted_sum(const float* in, float* out, int64_t n, float shift) {
  return selected().kernels.exp_shifted_sum(in, out, n, shift);
}

void vector_softmax_row(const float* in, float* out, int64_t n) { selected().kernels.softmax_row(in, out, n); }
void vector_exp_rows(float* x, int64_t rows, int64_t n, int64_t ld, float* sums) {
  selected().kernels.exp_rows(x, rows, n, ld, sums);
}
void vector_row_moments(const float* x, int64_t n, double* mean, double* variance) {
  selected().kernels.row_moments(x, n, mean, variance);
}
double vector_row_mean_square(const float* x, int64_t n) { return selected().kernels.row_mean_square(x, n); }
void vector_squared_distances(const float* x, const float* vt, int64_t features, int64_t count, int64_t ld,
                              double* out) {
  selected().kernels.squared_distances_f64(x, vt, features, count, ld, out);
}
void vector_weighted_rows(const float* p, const float* v, int64_t rows, int64_t ldv, int64_t n, float* out,
                          bool skip_zero_weights) {
  selected().kernels.weighted_rows(p, v, rows, ldv, n, out, skip_zero_weights);
}
void vector_normalize_row(const float* x, float mean, float inv_std, const float* scale, const float* bias, float* y,
                          int64_t n) {
  selected().kernels.normalize_row(x, mean, inv_std, scale, bias, y, n);
}

void vector_compensated_sum(const float* x, int64_t n, float* sum, float* lost) {
  selected().kernels.compensated_sum_f32(x, n, sum, lost);
}
void vector_compensated_sum(const double* x, int64_t n, double* sum, double* lost) {
  selected().kernels.compensated_sum_f64(x, n, sum, lost);
}
void vector_compensated_column_sums(const float* base, const int64_t* offsets, int64_t rows, int64_t n, float* sum,
                                    float* lost) {
  selected().kernels.compensated_column_sums_f32(base, offsets, rows, n, sum, lost);
}
void vector_compensated_column_sums(const double* base, const int64_t* offsets, int64_t rows, int64_t n,
                                    double* sum, double* lost) {
  selected().kernels.compensated_column_sums_f64(base, offsets, rows, n, sum, lost);
}
BinaryArrayFn<float> binary_array_f32(int op, int shape) { return selected().kernels.binary_f32[op][shape]; }
BinaryArrayFn<double> binary_array_f64(int op, int shape) { return selected().kernels.binary_f64[op][shape]; }

const char* vector_math_isa() {
  switch (selected().isa) {
    case VectorIsa::kAvx512: return "avx512";
    case VectorIsa::kAvx2: return "avx2";
    case VectorIsa::kGeneric: break;
  }
  return "generic";
}

bool vector_math_force_isa(std::string_view isa) {
  const VectorIsa best = best_isa();
  VectorIsa wanted = best;
  if (isa == "generic") {
    wanted = VectorIsa::kGeneric;
  } else if (isa == "avx2") {
    wanted = VectorIsa::kAvx2;
  } else if (isa == "avx512") {
    wanted = VectorIsa::kAvx512;
  } else if (!isa.empty()) {
    return false;
  }
  // The ISAs are ordered: a CPU with AVX-512 (F, DQ, BW, VL) also has AVX2 and FMA.
  if (static_cast<int>(wanted) > static_cast<int>(best)) return false;
  Selected& chosen = selected();
  chosen.isa = wanted;
  chosen.kernels = kernels_for(wanted);
  return true;
}

}  // namespace nxrt::cpu
