// AVX2 interior rows and whole planes of MaxPool 3x3 stride 2 (contract in ep/cpu/pool/pool_kernels.h), 8 outputs
// per vector, bit for bit the results of the avx512 twins. Compiled with -mavx2 -mfma on x86-64 only; callers
// check the CPU tier first.
#include "ep/cpu/pool/pool_kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "ep/cpu/microkernels/avx2/vector_lanes_avx2.h"

namespace nxrt::cpu::pool {

namespace {

using avx2_lanes::load_first;
using avx2_lanes::store_first;

// Floats past 2 * out_w + 1 of the plane's column scratch that the last vector's taps read: columns up to
// 2 * (out_w - 1) + 16.
constexpr int64_t kColsReadPastPadded = 14;
static_assert(kColsReadPastPadded <= kMaxPoolPlaneSlack);

// The running max of pool.cpp: v replaces best when v is not NaN and not <= best (so NaN best is replaced, ties
// keep the earlier tap).
inline __m256 take_max(__m256 best, __m256 v) {
  const __m256 unordered = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  const __m256 take = _mm256_andnot_ps(unordered, _mm256_cmp_ps(v, best, _CMP_NLE_UQ));
  return _mm256_blendv_ps(best, v, take);
}

// The three taps of 8 stride-2 windows along one row, row[2 * j], row[2 * j + 1] and row[2 * j + 2], from
// v0 = row[0 .. 8), v1 = row[8 .. 16), w0 = row[1 .. 9) and w1 = row[9 .. 17). _mm256_shuffle_ps works within
// 128-bit halves, so the lanes hold outputs j = 0 1 4 5 2 3 6 7; lane-wise maxima keep that order until
// in_output_order.
inline void stride_two_taps(__m256 v0, __m256 v1, __m256 w0, __m256 w1, __m256 taps[3]) {
  taps[0] = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
  taps[1] = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(3, 1, 3, 1));
  taps[2] = _mm256_shuffle_ps(w0, w1, _MM_SHUFFLE(3, 1, 3, 1));
}

// Reads row[0 .. 17).
inline void stride_two_taps(const float* row, __m256 taps[3]) {
  stride_two_taps(_mm256_loadu_ps(row), _mm256_loadu_ps(row + 8), _mm256_loadu_ps(row + 1),
                  _mm256_loadu_ps(row + 9), taps);
}

// Reads row[0 .. needed) only (needed < 17); the floats past it read as 0.
inline void stride_two_taps(const float* row, int64_t needed, __m256 taps[3]) {
  stride_two_taps(load_first(row, needed), load_first(row + 8, needed - 8), load_first(row + 1, needed - 1),
                  load_first(row + 9, needed - 9), taps);
}

// Lanes in the order of stride_two_taps (outputs 0 1 4 5 2 3 6 7) back to outputs 0 .. 7.
inline __m256 in_output_order(__m256 v) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
}

// All bits set in the lanes holding NaN or -0.
inline __m256i nan_or_minus_zero(__m256 v) {
  const __m256i unordered = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  const __m256i minus_zero = _mm256_cmpeq_epi32(_mm256_castps_si256(v), _mm256_set1_epi32(INT32_MIN));
  return _mm256_or_si256(unordered, minus_zero);
}

}  // namespace

void f32_max_pool_3x3s2_row__avx2(const float* window, int64_t in_w, int64_t count, float* out) {
  for (int64_t j = 0; j < count; j += 8) {
    const int64_t lanes = std::min<int64_t>(8, count - j);
    const int64_t needed = 2 * lanes + 1;  // window columns 0 .. 2 * lanes of this vector's outputs
    __m256 best = _mm256_set1_ps(__builtin_nanf(""));  // pool.cpp's start value: any non-NaN tap replaces it
    for (int a = 0; a < 3; ++a) {
      const float* row = window + a * in_w + 2 * j;
      __m256 taps[3];
      if (lanes == 8) {
        stride_two_taps(row, taps);
      } else {
        stride_two_taps(row, needed, taps);
      }
      best = take_max(best, taps[0]);
      best = take_max(best, taps[1]);
      best = take_max(best, taps[2]);
    }
    store_first(out + j, lanes, in_output_order(best));
  }
}

bool f32_max_pool_3x3s2_plane__avx2(const float* x, int64_t in_h, int64_t in_w, float* y, int64_t out_h,
                                    int64_t out_w, int64_t pad_top, int64_t pad_left, float* cols) {
  // cols: vertical maxima of one output row's window rows, indexed by padded column (input column + pad_left);
  // the columns outside the input and those read past the padded row hold -inf, which never wins against a
  // present tap.
  const int64_t padded_w = 2 * out_w + 1;
  const float minus_inf = -__builtin_inff();
  const int64_t in_end = std::min(padded_w, pad_left + in_w);  // padded columns [pad_left, in_end) are input
  for (int64_t c = 0; c < pad_left; ++c) cols[c] = minus_inf;
  for (int64_t c = in_end; c < padded_w + kColsReadPastPadded; ++c) cols[c] = minus_inf;
  const int64_t width = in_end - pad_left;
  // Lanes past width load as +0, so the flags see only input taps.
  __m256i unordered_or_minus_zero = _mm256_setzero_si256();
  for (int64_t oh = 0; oh < out_h; ++oh) {
    const int64_t top = 2 * oh - pad_top;
    const int64_t r0 = std::max<int64_t>(top, 0);
    const int64_t r1 = std::min<int64_t>(top + 3, in_h);
    for (int64_t c = 0; c < width; c += 8) {
      const int64_t lanes = std::min<int64_t>(8, width - c);
      __m256 m = load_first(x + r0 * in_w + c, lanes);
      unordered_or_minus_zero = _mm256_or_si256(unordered_or_minus_zero, nan_or_minus_zero(m));
      for (int64_t r = r0 + 1; r < r1; ++r) {
        const __m256 v = load_first(x + r * in_w + c, lanes);
        unordered_or_minus_zero = _mm256_or_si256(unordered_or_minus_zero, nan_or_minus_zero(v));
        m = _mm256_max_ps(v, m);
      }
      store_first(cols + pad_left + c, lanes, m);
    }
    float* out = y + oh * out_w;
    for (int64_t j = 0; j < out_w; j += 8) {
      __m256 taps[3];
      stride_two_taps(cols + 2 * j, taps);
      const __m256 best = _mm256_max_ps(taps[2], _mm256_max_ps(taps[1], taps[0]));
      store_first(out + j, out_w - j, in_output_order(best));
    }
  }
  return _mm256_testz_si256(unordered_or_minus_zero, unordered_or_minus_zero) != 0;
}

}  // namespace nxrt::cpu::pool

#endif
