// AVX-512 input and output transforms of the Winograd F(2x2, 3x3) convolution (contracts in
// ep/cpu/conv/conv_winograd.h), vectorised over 16 neighbouring tiles of one tile row. Compiled with -mavx512f and
// friends; the driver calls them only when the CPU has avx512f.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined_ps() pass-through operand inside _mm512_max_ps/_mm512_min_ps as
// maybe-uninitialized; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cstdint>

#include "ep/cpu/conv/conv_winograd.h"
#include "ep/cpu/microkernels/avx512/activation_avx512.h"
#include "ep/cpu/microkernels/avx512/vector_lanes_avx512.h"

namespace nxrt::cpu::conv {

namespace {

// Indices interleaving two 16-lane vectors a, b: low half a0 b0 a1 b1 ... a7 b7, high half a8 b8 ... a15 b15.
inline __m512i interleave_low() { return _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23); }
inline __m512i interleave_high() {
  return _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
}

}  // namespace

void f32_winograd_input_row__avx512(const WinogradInputRow& row, float* v, int64_t xi_stride) {
  // Padded column c reads input column c - pad_left; columns outside the input, and rows outside it, read as zero.
  const float* in_rows[4];
  for (int a = 0; a < 4; ++a) {
    const int64_t ih = row.top + a;
    in_rows[a] = ih >= 0 && ih < row.in_h ? row.x + ih * row.in_w : nullptr;
  }
  const __m512 zero = _mm512_setzero_ps();
  const __m512i kEven = even_lanes(), kOdd = odd_lanes();
  for (int64_t j = 0; j < row.tiles; j += 16) {
    // Tiles j .. j + 15 read padded columns 2j .. 2j + 33: rows of B^T d (d0 - d2, d1 + d2, d2 - d1, d1 - d3)
    // over three vectors of 16 columns, straight from the input with masked loads.
    __m512 rows[4][3];
    for (int k = 0; k < 3; ++k) {
      const int64_t col = 2 * j + 16 * k - row.pad_left;  // input column of lane 0
      const int64_t lo = std::clamp<int64_t>(-col, 0, 16);
      const int64_t hi = std::clamp<int64_t>(row.in_w - col, lo, 16);
      const __mmask16 lanes = static_cast<__mmask16>(first_lanes(hi) & ~first_lanes(lo));
      __m512 d[4];
      for (int a = 0; a < 4; ++a) {
        // The address of lane 0 may lie before the row (a masked-off lane): formed as an integer.
        d[a] = in_rows[a] == nullptr || lanes == 0
                   ? zero
                   : _mm512_maskz_loadu_ps(lanes, reinterpret_cast<const void*>(
                                                      reinterpret_cast<uintptr_t>(in_rows[a]) +
                                                      static_cast<uintptr_t>(col * static_cast<int64_t>(sizeof(float)))));
      }
      rows[0][k] = _mm512_sub_ps(d[0], d[2]);
      rows[1][k] = _mm512_add_ps(d[1], d[2]);
      rows[2][k] = _mm512_sub_ps(d[2], d[1]);
      rows[3][k] = _mm512_sub_ps(d[1], d[3]);
    }
    // Columns of (B^T d) B: tile j + l reads columns 2l .. 2l + 3 of the three vectors; e2 and e3 are e0 and
    // e1 moved down one lane with columns 32 and 33 on top.
    const __mmask16 lanes = first_lanes(row.tiles - j);
    for (int a = 0; a < 4; ++a) {
      const __m512 e0 = _mm512_permutex2var_ps(rows[a][0], kEven, rows[a][1]);
      const __m512 e1 = _mm512_permutex2var_ps(rows[a][0], kOdd, rows[a][1]);
      const __m512i top = _mm512_castps_si512(rows[a][2]);
      const __m512 e2 = _mm512_castsi512_ps(_mm512_alignr_epi32(top, _mm512_castps_si512(e0), 1));
      const __m512 e3 =
          _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_alignr_epi32(top, top, 1), _mm512_castps_si512(e1), 1));
      float* out = v + (4 * a) * xi_stride + j;
      _mm512_mask_storeu_ps(out, lanes, _mm512_sub_ps(e0, e2));
      _mm512_mask_storeu_ps(out + xi_stride, lanes, _mm512_add_ps(e1, e2));
      _mm512_mask_storeu_ps(out + 2 * xi_stride, lanes, _mm512_sub_ps(e2, e1));
      _mm512_mask_storeu_ps(out + 3 * xi_stride, lanes, _mm512_sub_ps(e1, e3));
    }
  }
}

void f32_winograd_output_row__avx512(const WinogradOutputRow& row, const float* m, int64_t xi_stride) {
  const __m512 bias = _mm512_set1_ps(row.bias);
  const bool in_register = vectorised(row.activation.kind);
  const __m512i kInterleaveLow = interleave_low(), kInterleaveHigh = interleave_high();
  for (int64_t j = 0; j < row.tiles; j += 16) {
    const __mmask16 lanes = first_lanes(row.tiles - j);
    // A^T M: s0 = m0 + m1 + m2 and s1 = m1 - m2 - m3 over the rows, per column b.
    __m512 s0[4], s1[4];
    for (int b = 0; b < 4; ++b) {
      const __m512 m0 = _mm512_maskz_loadu_ps(lanes, m + b * xi_stride + j);
      const __m512 m1 = _mm512_maskz_loadu_ps(lanes, m + (4 + b) * xi_stride + j);
      const __m512 m2 = _mm512_maskz_loadu_ps(lanes, m + (8 + b) * xi_stride + j);
      const __m512 m3 = _mm512_maskz_loadu_ps(lanes, m + (12 + b) * xi_stride + j);
      s0[b] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
      s1[b] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
    }
    const __m512* s[2] = {s0, s1};
    // Output row r of the tiles covers columns 2j .. 2j + 31: (s0 + s1 + s2, s1 - s2 - s3) interleaved.
    const int64_t first_col = 2 * j;
    const __mmask16 low_lanes = first_lanes(row.out_w - first_col);
    const __mmask16 high_lanes = first_lanes(row.out_w - first_col - 16);
    for (int r = 0; r < row.rows; ++r) {
      const __m512* t = s[r];
      const __m512 left = _mm512_add_ps(_mm512_add_ps(t[0], t[1]), t[2]);
      const __m512 right = _mm512_sub_ps(_mm512_sub_ps(t[1], t[2]), t[3]);
      __m512 low = _mm512_add_ps(_mm512_permutex2var_ps(left, kInterleaveLow, right), bias);
      __m512 high = _mm512_add_ps(_mm512_permutex2var_ps(left, kInterleaveHigh, right), bias);
      float* y = row.y + r * row.out_w + first_col;
      if (row.z != nullptr) {
        const float* z = row.z + r * row.out_w + first_col;
        low = _mm512_add_ps(low, _mm512_maskz_loadu_ps(low_lanes, z));
        high = _mm512_add_ps(high, _mm512_maskz_loadu_ps(high_lanes, z + 16));
      }
      if (in_register) {
        low = activate(row.activation, low);
        high = activate(row.activation, high);
      }
      _mm512_mask_storeu_ps(y, low_lanes, low);
      _mm512_mask_storeu_ps(y + 16, high_lanes, high);
    }
  }
  if (!in_register) {
    for (int r = 0; r < row.rows; ++r) apply_activation(row.activation, row.y + r * row.out_w, row.out_w);
  }
}

}  // namespace nxrt::cpu::conv
