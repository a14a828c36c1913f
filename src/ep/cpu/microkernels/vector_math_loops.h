// The source of every ISA's vector math (see vector_math_kernels.h): plain loops that the compiler vectorises
// for the flags of the including translation unit. Include once per translation unit after defining
// NXRT_VECTOR_MATH_ISA (a namespace name); everything here has internal linkage, so copies built for different
// ISAs never merge. No std:: templates are used, for the same reason.
//
// Accuracy against the correctly rounded result (measured by vector_math_test over dense sweeps): exp 1 ulp,
// tanh and sigmoid 2 ulp, erf 3 ulp (absolute error below 1.2e-7); NaN propagates, infinities map to the limits.
#pragma once

#include <cstdint>

#include "ep/cpu/microkernels/two_sum.h"
#include "ep/cpu/microkernels/vector_math_kernels.h"

#ifndef NXRT_VECTOR_MATH_ISA
#error "define NXRT_VECTOR_MATH_ISA before including vector_math_loops.h"
#endif

namespace nxrt::cpu::NXRT_VECTOR_MATH_ISA {
namespace {

inline float bits_to_float(int32_t bits) { return __builtin_bit_cast(float, bits); }

// 2^n for n in [-126, 127].
inline float pow2(int32_t n) { return bits_to_float((n + 127) << 23); }

// exp(x): x = n ln2 + r with |r| <= ln2/2 (ln2 split so that n * kLn2Hi is exact), a degree-6 polynomial for
// exp(r), and 2^n applied in two halves so that results in the subnormal range and overflow to inf come out right.
inline float exp_one(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  // Written so that NaN clamps to -104 (a NaN must never reach the int conversion below: that is UB).
  float clamped = x > -104.0f ? x : -104.0f;
  clamped = clamped < 89.0f ? clamped : 89.0f;
  const float n = (clamped * kLog2e + kRoundMagic) - kRoundMagic;
  const float r = (clamped - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t half = ni >> 1;
  const float result = p * pow2(half) * pow2(ni - half);
  return x != x ? x : result;
}

inline float tanh_one(float x) {
  const float ax = __builtin_fabsf(x);
  // |x| < 0.625: odd polynomial; beyond: 1 - 2 / (exp(2|x|) + 1), which has no cancellation there.
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = x + x * z * p;
  const float large = 1.0f - 2.0f / (exp_one(2.0f * ax) + 1.0f);
  const float signed_large = x < 0.0f ? -large : large;
  return ax < 0.625f ? small : signed_large;
}

inline float sigmoid_one(float x) { return 1.0f / (1.0f + exp_one(-x)); }

// |x| < 1: x P(x^2); 1 <= |x| < 4: 1 - exp(-x^2) Q(1/|x|) (erfc(x) exp(x^2) is smooth in 1/x); beyond, erf
// rounds to +-1. P and Q are least-squares fits of relative error (1.4e-9 and 7e-8).
inline float erf_one(float x) {
  const float ax = __builtin_fabsf(x);
  const float z = x * x;
  float p = 7.897514052e-05f;
  p = p * z - 8.024131042e-04f;
  p = p * z + 5.190026131e-03f;
  p = p * z - 2.685479238e-02f;
  p = p * z + 1.128361197e-01f;
  p = p * z - 3.761262879e-01f;
  p = p * z + 1.128379166e+00f;
  const float small = x * p;
  const float a = ax > 4.0f ? 4.0f : (ax < 1.0f ? 1.0f : ax);
  const float u = 1.0f / a;
  float q = -1.207890115e-02f;
  q = q * u + 4.146859818e-02f;
  q = q * u - 3.248635274e-03f;
  q = q * u - 2.106013985e-01f;
  q = q * u + 4.749700853e-01f;
  q = q * u - 4.620621930e-01f;
  q = q * u + 3.947355943e-02f;
  q = q * u + 5.594154410e-01f;
  q = q * u + 2.469892962e-04f;
  const float large = 1.0f - exp_one(-(a * a)) * q;
  const float signed_large = x < 0.0f ? -large : large;
  return ax < 1.0f ? small : (x != x ? x : signed_large);
}

void exp_loop(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_one(in[i]);
}

void tanh_loop(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = tanh_one(in[i]);
}

void sigmoid_loop(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = sigmoid_one(in[i]);
}

void erf_loop(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = erf_one(in[i]);
}

void gelu_erf_loop(const float* in, float* out, int64_t n) {
  constexpr float kSqrtHalf = 0.70710678118654752f;
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i];
    out[i] = 0.5f * x * (1.0f + erf_one(x * kSqrtHalf));
  }
}

void gelu_tanh_loop(const float* in, float* out, int64_t n) {
  constexpr float kSqrtTwoOverPi = 0.79788456080286536f;
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i];
    out[i] = 0.5f * x * (1.0f + tanh_one(kSqrtTwoOverPi * (x + 0.044715f * x * x * x)));
  }
}

// The gate is e / (1 + e) for alpha x < 0, e = exp(-|alpha x|): for large negative inputs the product is x e, still
// a normal float after 1 + exp(-alpha x) has overflowed.
void swish_loop(const float* in, float* out, int64_t n, float alpha) {
  for (int64_t i = 0; i < n; ++i) {
    const float z = alpha * in[i];
    const float e = exp_one(-__builtin_fabsf(z));
    out[i] = in[i] * ((z < 0.0f ? e : 1.0f) / (1.0f + e));
  }
}

float exp_shifted_sum_loop(const float* in, float* out, int64_t n, float shift) {
  constexpr int kLanes = 16;
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t i = 0; i < whole; ++i) out[i] = exp_one(in[i] - shift);
  // The tail goes through a full 16-lane block too (a scalar exp per element cost as much as the vector body of
  // a 197-wide attention row); its padding lanes are computed and dropped.
  float tail[kLanes];
  for (int l = 0; l < kLanes; ++l) tail[l] = whole + l < n ? in[whole + l] - shift : 0.0f;
  for (int l = 0; l < kLanes; ++l) tail[l] = exp_one(tail[l]);
  for (int64_t i = whole; i < n; ++i) out[i] = tail[i - whole];
  // 16 independent partial sums, so the reduction vectorises without reassociation flags.
  float lanes[kLanes] = {};
  for (int64_t i = 0; i < whole; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += out[i + l];
  }
  float sum = 0.0f;
  for (int64_t i = whole; i < n; ++i) sum += out[i];
  for (int l = 0; l < kLanes; ++l) sum += lanes[l];
  return sum;
}

// Max over x[0 .. n) skipping NaN (-inf when every value is NaN). A 16-float vector type, because GCC leaves
// the equivalent 16-lane array loop scalar; the compiler lowers it to the including unit's vector width.
float row_max_loop(const float* x, int64_t n) {
  typedef float Lanes __attribute__((vector_size(64)));
  constexpr float kMinusInf = -__builtin_inff();
  Lanes lanes = {kMinusInf, kMinusInf, kMinusInf, kMinusInf, kMinusInf, kMinusInf, kMinusInf, kMinusInf,
                 kMinusInf, kMinusInf, kMinusInf, kMinusInf, kMinusInf, kMinusInf, kMinusInf, kMinusInf};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    Lanes v;
    __builtin_memcpy(&v, x + i, sizeof(v));
    lanes = lanes < v ? v : lanes;
  }
  float m = kMinusInf;
  for (; i < n; ++i) m = m < x[i] ? x[i] : m;
  for (int l = 0; l < 16; ++l) m = m < lanes[l] ? lanes[l] : m;
  return m;
}

// exp_rows (see VectorMathKernels) from a copy's row max and shifted exponential sum. Rows are independent, so
// consecutive rows' exponentials overlap in the out-of-order window.
template <float (*kExpShiftedSum)(const float*, float*, int64_t, float), float (*kRowMax)(const float*, int64_t)>
void exp_rows_with(float* x, int64_t rows, int64_t n, int64_t ld, float* sums) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x + r * ld;
    sums[r] = kExpShiftedSum(row, row, n, kRowMax(row, n));
  }
}

// The row statistics of VectorMathKernels from a register copy's pass kSums(x, n, shift, &sum, &squares) over
// x - shift (the portable copy's own pass skips the squares where they are not needed; see row_moments_loop).
using ShiftedSumsFn = void (*)(const float* x, int64_t n, float shift, double* sum, double* squares);

template <ShiftedSumsFn kSums>
void row_moments_with(const float* x, int64_t n, double* mean, double* variance) {
  const double count = static_cast<double>(n);
  double sum = 0;
  double squares = 0;
  kSums(x, n, 0.0f, &sum, &squares);
  *mean = sum / count;
  kSums(x, n, static_cast<float>(*mean), &sum, &squares);
  const double offset = sum / count;
  const double v = squares / count - offset * offset;
  *variance = v > 0.0 ? v : 0.0;
}

template <ShiftedSumsFn kSums>
double row_mean_square_with(const float* x, int64_t n) {
  double sum = 0;
  double squares = 0;
  kSums(x, n, 0.0f, &sum, &squares);
  return squares / static_cast<double>(n);
}

// Sum over x[0 .. n) of (x - shift), and of (x - shift)^2 when `squares` is non-null, in 16 float lanes flushed
// into double totals every 1024 values.
double shifted_sums_loop(const float* x, int64_t n, float shift, double* squares) {
  typedef float Lanes __attribute__((vector_size(64)));
  constexpr int64_t kBlock = 1024;
  double total = 0;
  double total_squares = 0;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = start + kBlock < n ? start + kBlock : n;
    Lanes sum = {};
    Lanes sum_squares = {};
    int64_t i = start;
    for (; i + 16 <= end; i += 16) {
      Lanes v;
      __builtin_memcpy(&v, x + i, sizeof(v));
      v -= shift;
      sum += v;
      sum_squares += v * v;
    }
    for (; i < end; ++i) {
      const float d = x[i] - shift;
      sum[0] += d;
      sum_squares[0] += d * d;
    }
    for (int l = 0; l < 16; ++l) {
      total += static_cast<double>(sum[l]);
      total_squares += static_cast<double>(sum_squares[l]);
    }
  }
  if (squares != nullptr) *squares = total_squares;
  return total;
}

void row_moments_loop(const float* x, int64_t n, double* mean, double* variance) {
  const double count = static_cast<double>(n);
  *mean = shifted_sums_loop(x, n, 0.0f, nullptr) / count;
  double squares = 0;
  const double offset = shifted_sums_loop(x, n, static_cast<float>(*mean), &squares) / count;
  const double v = squares / count - offset * offset;
  *variance = v > 0.0 ? v : 0.0;
}

double row_mean_square_loop(const float* x, int64_t n) {
  double squares = 0;
  shifted_sums_loop(x, n, 0.0f, &squares);
  return squares / static_cast<double>(n);
}

void normalize_row_loop(const float* x, float mean, float inv_std, const float* scale, const float* bias, float* y,
                        int64_t n) {
  if (bias != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv_std * scale[i] + bias[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv_std * scale[i];
  }
}

// Columns [e0, e0 + Width) of weighted_rows, summed in fixed-size arrays the compiler keeps in registers: even and
// odd rows into separate sums, so that two chains of multiply-adds run side by side.
template <int Width, bool SkipZero>
void weighted_columns(const float* p, const float* v, int64_t rows, int64_t ldv, int64_t e0, float* out) {
  float even[Width] = {}, odd[Width] = {};
  int64_t j = 0;
  for (; j + 2 <= rows; j += 2) {
    const float first = p[j], second = p[j + 1];
    const float* row = v + j * ldv + e0;
    if (!SkipZero || first != 0.0f) {
      for (int e = 0; e < Width; ++e) even[e] += first * row[e];
    }
    if (!SkipZero || second != 0.0f) {
      for (int e = 0; e < Width; ++e) odd[e] += second * row[ldv + e];
    }
  }
  if (j < rows && (!SkipZero || p[j] != 0.0f)) {
    const float* row = v + j * ldv + e0;
    for (int e = 0; e < Width; ++e) even[e] += p[j] * row[e];
  }
  for (int e = 0; e < Width; ++e) out[e0 + e] = even[e] + odd[e];
}

template <bool SkipZero>
void weighted_rows_of(const float* p, const float* v, int64_t rows, int64_t ldv, int64_t n, float* out) {
  int64_t e0 = 0;
  for (; e0 + 64 <= n; e0 += 64) weighted_columns<64, SkipZero>(p, v, rows, ldv, e0, out);
  for (; e0 + 16 <= n; e0 += 16) weighted_columns<16, SkipZero>(p, v, rows, ldv, e0, out);
  for (; e0 < n; ++e0) weighted_columns<1, SkipZero>(p, v, rows, ldv, e0, out);
}

void weighted_rows_loop(const float* p, const float* v, int64_t rows, int64_t ldv, int64_t n, float* out,
                        bool skip_zero_weights) {
  if (skip_zero_weights) {
    weighted_rows_of<true>(p, v, rows, ldv, n, out);
  } else {
    weighted_rows_of<false>(p, v, rows, ldv, n, out);
  }
}

// Columns in L1-sized tiles: each feature's pass reads and writes one tile of the sums.
constexpr int64_t kDistanceTile = 512;

void squared_distances_loop(const float* x, const float* vt, int64_t features, int64_t count, int64_t ld,
                            double* out) {
  for (int64_t j0 = 0; j0 < count; j0 += kDistanceTile) {
    const int64_t width = count - j0 < kDistanceTile ? count - j0 : kDistanceTile;
    double* sums = out + j0;
    for (int64_t j = 0; j < width; ++j) sums[j] = 0.0;
    for (int64_t f = 0; f < features; ++f) {
      const double xf = x[f];
      const float* v = vt + f * ld + j0;
      for (int64_t j = 0; j < width; ++j) {
        const double d = xf - static_cast<double>(v[j]);
        sums[j] += d * d;
      }
    }
  }
}

void softmax_row_loop(const float* in, float* out, int64_t n) {
  const float inverse = 1.0f / exp_shifted_sum_loop(in, out, n, row_max_loop(in, n));
  for (int64_t i = 0; i < n; ++i) out[i] *= inverse;
}

template <int Op, class T>
inline T binary_one(T x, T y) {
  if constexpr (Op == 0) return x + y;
  if constexpr (Op == 1) return x - y;
  if constexpr (Op == 2) return x * y;
  if constexpr (Op == 3) return x / y;
}

// At the avx512 tier the loop is vectorised 256 bits wide: the arrays of a binary op (numpy's are 16-byte aligned)
// rarely share an alignment, and a misaligned 64-byte access splits a cache line on every iteration (a 4 MB Add
// measured 5% slower at 512 bits on Zen 4; the loop streams from memory, so width buys nothing there). GCC's
// attribute; clang has no per-function form and keeps the file's width.
template <class T, int Op, int Shape>
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target("prefer-vector-width=256")))
#endif
void binary_array_loop(const T* a, const T* b, T* out, int64_t n) {
  if constexpr (Shape == 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = binary_one<Op>(a[i], b[i]);
  } else if constexpr (Shape == 1) {
    const T x = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = binary_one<Op>(x, b[i]);
  } else {
    const T y = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = binary_one<Op>(a[i], y);
  }
}

// Native-width vectors of the including translation unit's ISA (16 bytes generic, 32 AVX2, 64 AVX-512): wider
// portable vectors split over registers and spill.
typedef float FloatVector __attribute__((vector_size(__BIGGEST_ALIGNMENT__)));
typedef double DoubleVector __attribute__((vector_size(__BIGGEST_ALIGNMENT__)));

// VectorMathKernels::compensated_sum_*: four independent vector accumulators (their additions overlap in the
// pipeline), the tail and then every lane folded into one pair by TwoSum.
template <class F, class V>
void compensated_sum_loop(const F* x, int64_t n, F* sum_out, F* lost_out) {
  constexpr int64_t kWidth = sizeof(V) / sizeof(F);
  constexpr int kVectors = 4;
  V sum[kVectors] = {};
  V lost[kVectors] = {};
  int64_t i = 0;
  for (; i + kVectors * kWidth <= n; i += kVectors * kWidth) {
    for (int k = 0; k < kVectors; ++k) {
      V v;
      __builtin_memcpy(&v, x + i + k * kWidth, sizeof(v));
      two_sum_add(sum[k], lost[k], v);
    }
  }
  for (; i + kWidth <= n; i += kWidth) {
    V v;
    __builtin_memcpy(&v, x + i, sizeof(v));
    two_sum_add(sum[0], lost[0], v);
  }
  for (int k = 1; k < kVectors; ++k) {
    two_sum_add(sum[0], lost[0], sum[k]);
    lost[0] += lost[k];
  }
  F total = 0;
  F total_lost = 0;
  for (; i < n; ++i) two_sum_add(total, total_lost, x[i]);
  for (int64_t l = 0; l < kWidth; ++l) {
    two_sum_add(total, total_lost, sum[0][l]);
    total_lost += lost[0][l];
  }
  *sum_out = total;
  *lost_out = total_lost;
}

// VectorMathKernels::compensated_column_sums_*: the rows in tiles of about 16 KiB (each tile is read from memory
// once and then from L1); within a tile, column chunks of up to kVectors vectors accumulate in registers over the
// tile's rows, then single vectors, then single columns.
template <class F, class V>
void compensated_column_sums_loop(const F* base, const int64_t* offsets, int64_t rows, int64_t n, F* sum_out,
                                  F* lost_out) {
  constexpr int64_t kWidth = sizeof(V) / sizeof(F);
  constexpr int kVectors = 4;
  const int64_t row_bytes = n * static_cast<int64_t>(sizeof(F));
  const int64_t tile = row_bytes >= 16384 ? 1 : 16384 / (row_bytes > 0 ? row_bytes : 1);
  for (int64_t j = 0; j < n; ++j) sum_out[j] = lost_out[j] = 0;
  for (int64_t first = 0; first < rows; first += tile) {
    const int64_t last = first + tile < rows ? first + tile : rows;
    int64_t j = 0;
    for (; j + kVectors * kWidth <= n; j += kVectors * kWidth) {
      V sum[kVectors];
      V lost[kVectors];
      __builtin_memcpy(sum, sum_out + j, sizeof(sum));
      __builtin_memcpy(lost, lost_out + j, sizeof(lost));
      for (int64_t r = first; r < last; ++r) {
        const F* row = base + offsets[r] + j;
        for (int k = 0; k < kVectors; ++k) {
          V v;
          __builtin_memcpy(&v, row + k * kWidth, sizeof(v));
          two_sum_add(sum[k], lost[k], v);
        }
      }
      __builtin_memcpy(sum_out + j, sum, sizeof(sum));
      __builtin_memcpy(lost_out + j, lost, sizeof(lost));
    }
    for (; j + kWidth <= n; j += kWidth) {
      V sum;
      V lost;
      __builtin_memcpy(&sum, sum_out + j, sizeof(sum));
      __builtin_memcpy(&lost, lost_out + j, sizeof(lost));
      for (int64_t r = first; r < last; ++r) {
        V v;
        __builtin_memcpy(&v, base + offsets[r] + j, sizeof(v));
        two_sum_add(sum, lost, v);
      }
      __builtin_memcpy(sum_out + j, &sum, sizeof(sum));
      __builtin_memcpy(lost_out + j, &lost, sizeof(lost));
    }
    for (; j < n; ++j) {
      for (int64_t r = first; r < last; ++r) two_sum_add(sum_out[j], lost_out[j], base[offsets[r] + j]);
    }
  }
}

template <class T, int Op>
void fill_binary_row(BinaryArrayFn<T> (&row)[kBinaryShapes]) {
  row[0] = binary_array_loop<T, Op, 0>;
  row[1] = binary_array_loop<T, Op, 1>;
  row[2] = binary_array_loop<T, Op, 2>;
}

template <class T>
void fill_binary_table(BinaryArrayFn<T> (&table)[kBinaryOps][kBinaryShapes]) {
  fill_binary_row<T, 0>(table[0]);
  fill_binary_row<T, 1>(table[1]);
  fill_binary_row<T, 2>(table[2]);
  fill_binary_row<T, 3>(table[3]);
}

VectorMathKernels make_kernels() {
  VectorMathKernels kernels{};
  kernels.exp = exp_loop;
  kernels.tanh = tanh_loop;
  kernels.sigmoid = sigmoid_loop;
  kernels.erf = erf_loop;
  kernels.gelu_erf = gelu_erf_loop;
  kernels.gelu_tanh = gelu_tanh_loop;
  kernels.swish = swish_loop;
  kernels.exp_shifted_sum = exp_shifted_sum_loop;
  kernels.softmax_row = softmax_row_loop;
  kernels.exp_rows = exp_rows_with<exp_shifted_sum_loop, row_max_loop>;
  kernels.row_moments = row_moments_loop;
  kernels.row_mean_square = row_mean_square_loop;
  kernels.normalize_row = normalize_row_loop;
  kernels.weighted_rows = weighted_rows_loop;
  kernels.squared_distances_f64 = squared_distances_loop;
  kernels.compensated_sum_f32 = compensated_sum_loop<float, FloatVector>;
  kernels.compensated_sum_f64 = compensated_sum_loop<double, DoubleVector>;
  kernels.compensated_column_sums_f32 = compensated_column_sums_loop<float, FloatVector>;
  kernels.compensated_column_sums_f64 = compensated_column_sums_loop<double, DoubleVector>;
  fill_binary_table<float>(kernels.binary_f32);
  fill_binary_table<double>(kernels.binary_f64);
  return kernels;
}

}  // namespace
}  // namespace nxrt::cpu::NXRT_VECTOR_MATH_ISA
