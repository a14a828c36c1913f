// AVX2 + FMA input and output transforms of the Winograd F(2x2, 3x3) convolution (contracts in
// ep/cpu/conv/conv_winograd.h), vectorised over 8 neighbouring tiles of one tile row. Same adds and subtracts in the
// same order as the AVX-512 transforms (microkernels/avx512/conv_winograd_avx512.cpp), so the results are the same
// bit for bit, except that where two NaNs meet either payload may survive (compilers commute adds). Compiled with
// -mavx2 -mfma; the driver calls them only at the avx2 tier.
#include "ep/cpu/conv/conv_winograd.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "ep/cpu/microkernels/avx2/activation_avx2.h"
#include "ep/cpu/microkernels/avx2/vector_lanes_avx2.h"

namespace nxrt::cpu::conv {

namespace {

using avx2_activation::activate;
using avx2_lanes::even_columns;
using avx2_lanes::first_lanes;
using avx2_lanes::load_first;
using avx2_lanes::odd_columns;
using avx2_lanes::store_first;

}  // namespace

void f32_winograd_input_row__avx2(const WinogradInputRow& row, float* v, int64_t xi_stride) {
  // Padded column c reads input column c - pad_left; columns outside the input, and rows outside it, read as zero.
  const float* in_rows[4];
  for (int a = 0; a < 4; ++a) {
    const int64_t ih = row.top + a;
    in_rows[a] = ih >= 0 && ih < row.in_h ? row.x + ih * row.in_w : nullptr;
  }
  const __m256 zero = _mm256_setzero_ps();
  const __m256i kRotate = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
  for (int64_t j = 0; j < row.tiles; j += 8) {
    // Tiles j .. j + 7 read padded columns 2j .. 2j + 17: rows of B^T d (d0 - d2, d1 + d2, d2 - d1, d1 - d3)
    // over two vectors of 8 columns and the first 2 lanes of a third, straight from the input.
    __m256 rows[4][3];
    for (int k = 0; k < 3; ++k) {
      const int64_t width = k < 2 ? 8 : 2;
      const int64_t col = 2 * j + 8 * k - row.pad_left;  // input column of lane 0
      const int64_t lo = std::clamp<int64_t>(-col, 0, width);
      const int64_t hi = std::clamp<int64_t>(row.in_w - col, lo, width);
      const bool full = lo == 0 && hi == 8;
      const __m256i lanes = _mm256_andnot_si256(first_lanes(lo), first_lanes(hi));
      __m256 d[4];
      for (int a = 0; a < 4; ++a) {
        if (in_rows[a] == nullptr || hi == lo) {
          d[a] = zero;
        } else if (full) {
          d[a] = _mm256_loadu_ps(in_rows[a] + col);
        } else {
          // The address of lane 0 may lie before the row (a masked-off lane): formed as an integer.
          d[a] = _mm256_maskload_ps(reinterpret_cast<const float*>(
                                        reinterpret_cast<uintptr_t>(in_rows[a]) +
                                        static_cast<uintptr_t>(col * static_cast<int64_t>(sizeof(float)))),
                                    lanes);
        }
      }
      rows[0][k] = _mm256_sub_ps(d[0], d[2]);
      rows[1][k] = _mm256_add_ps(d[1], d[2]);
      rows[2][k] = _mm256_sub_ps(d[2], d[1]);
      rows[3][k] = _mm256_sub_ps(d[1], d[3]);
    }
    // Columns of (B^T d) B: tile j + l reads columns 2l .. 2l + 3; e2 and e3 are e0 and e1 moved down one lane
    // with columns 16 and 17 (lanes 0 and 1 of the third vector) on top.
    const int64_t count = row.tiles - j;
    for (int a = 0; a < 4; ++a) {
      const __m256 e0 = even_columns(rows[a][0], rows[a][1]);
      const __m256 e1 = odd_columns(rows[a][0], rows[a][1]);
      const __m256 e2 = _mm256_permutevar8x32_ps(_mm256_blend_ps(e0, rows[a][2], 0x01), kRotate);
      const __m256 e3 = _mm256_permutevar8x32_ps(_mm256_blend_ps(e1, _mm256_movehdup_ps(rows[a][2]), 0x01), kRotate);
      float* out = v + (4 * a) * xi_stride + j;
      store_first(out, count, _mm256_sub_ps(e0, e2));
      store_first(out + xi_stride, count, _mm256_add_ps(e1, e2));
      store_first(out + 2 * xi_stride, count, _mm256_sub_ps(e2, e1));
      store_first(out + 3 * xi_stride, count, _mm256_sub_ps(e1, e3));
    }
  }
}

void f32_winograd_output_row__avx2(const WinogradOutputRow& row, const float* m, int64_t xi_stride) {
  const __m256 bias = _mm256_set1_ps(row.bias);
  const bool in_register = avx2_activation::vectorised(row.activation.kind);
  for (int64_t j = 0; j < row.tiles; j += 8) {
    const int64_t count = row.tiles - j;
    // A^T M: s0 = m0 + m1 + m2 and s1 = m1 - m2 - m3 over the rows, per column b.
    __m256 s0[4], s1[4];
    for (int b = 0; b < 4; ++b) {
      const __m256 m0 = load_first(m + b * xi_stride + j, count);
      const __m256 m1 = load_first(m + (4 + b) * xi_stride + j, count);
      const __m256 m2 = load_first(m + (8 + b) * xi_stride + j, count);
      const __m256 m3 = load_first(m + (12 + b) * xi_stride + j, count);
      s0[b] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
      s1[b] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
    }
    const __m256* s[2] = {s0, s1};
    // Output row r of the tiles covers columns 2j .. 2j + 15: (s0 + s1 + s2, s1 - s2 - s3) interleaved.
    const int64_t first_col = 2 * j;
    const int64_t low_count = row.out_w - first_col;
    const int64_t high_count = low_count - 8;
    for (int r = 0; r < row.rows; ++r) {
      const __m256* t = s[r];
      const __m256 left = _mm256_add_ps(_mm256_add_ps(t[0], t[1]), t[2]);
      const __m256 right = _mm256_sub_ps(_mm256_sub_ps(t[1], t[2]), t[3]);
      const __m256 pairs_low = _mm256_unpacklo_ps(left, right);    // tiles 0 1 | 4 5
      const __m256 pairs_high = _mm256_unpackhi_ps(left, right);   // tiles 2 3 | 6 7
      __m256 low = _mm256_add_ps(_mm256_permute2f128_ps(pairs_low, pairs_high, 0x20), bias);
      __m256 high = _mm256_add_ps(_mm256_permute2f128_ps(pairs_low, pairs_high, 0x31), bias);
      float* y = row.y + r * row.out_w + first_col;
      if (row.z != nullptr) {
        const float* z = row.z + r * row.out_w + first_col;
        low = _mm256_add_ps(low, load_first(z, low_count));
        high = _mm256_add_ps(high, load_first(z + 8, high_count));
      }
      if (in_register) {
        low = activate(row.activation, low);
        high = activate(row.activation, high);
      }
      store_first(y, low_count, low);
      store_first(y + 8, high_count, high);
    }
  }
  if (!in_register) {
    for (int r = 0; r < row.rows; ++r) apply_activation(row.activation, row.y + r * row.out_w, row.out_w);
  }
}

}  // namespace nxrt::cpu::conv

#endif
