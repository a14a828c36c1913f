// Products with 8-bit block-quantized weights that stay packed in memory (MatMulNBits with bits = 8), read at one
// byte per weight: with float rows of A (weights dequantized in registers) or with A quantized to int8 per block
// (accuracy_level 4, Int8Rows of int4_matmul.h).
//
// Layout (Int8Panels): weight rows in panels of `panel` rows (16 at the avx512 tier, else 8; rows past N are zero),
// K in chunks of 4. Panel p, chunk c holds panel * 4 bytes at codes + (p * padded_k / 4 + c) * panel * 4: byte
// 4 i + j is the code of (row i, k = 4 c + j) minus 128, a signed byte. The weight is stored_code * scale + offset
// with scales / offsets [(p * k_blocks + b) * panel + i] for block b of row i, so offset = (128 - zero_point) *
// scale; null offsets mean 0 (the implicit zero point 128), and the products then read no offsets. Codes past the real K are zero, and so must the A rows be there (the callers pad them).
#pragma once

#include <cstdint>

#include "ep/cpu/microkernels/int4_matmul.h"

namespace nxrt::cpu {

struct Int8Panels {
  const int8_t* codes = nullptr;
  const float* scales = nullptr;
  const float* offsets = nullptr;
  int64_t k_blocks = 0;
  int64_t block = 0;  // a multiple of 4
  int64_t panel = 8;
  int64_t padded_k() const { return k_blocks * block; }
};

// The panel width the active tier's kernels use.
int64_t int8_weight_panel_rows();

// Repacks MatMulNBits' 8-bit codes of N rows (row n, block b at blob + (n * k_blocks + b) * block) into `codes`
// (Int8Panels' layout; panels * padded_k * panel bytes), and scales / offsets [n * k_blocks + b] (offsets being
// -zero_point * scale) into the panel order with the offsets shifted for the signed codes (offsets and
// panel_offsets null for the implicit zero point 128).
void repack_int8_weight_panels(const uint8_t* blob, const float* scales, const float* offsets, int64_t n, int64_t k,
                               int64_t k_blocks, int64_t block, int64_t panel, int8_t* codes, float* panel_scales,
                               float* panel_offsets);

// Float A: Y[m, n] = sum_k A[m, k] W[n, k] (+ bias[n]) for m < rows and the rows n < n_total of panels
// [panel_begin, panel_end). A row m at a + m * lda holds padded_k floats; a_sums[m * k_blocks + b] is the sum of
// row m's block b. Runs on the calling thread.
void int8_weight_matmul_rows(const Int8Panels& w, const float* a, int64_t lda, const float* a_sums, int64_t rows,
                             int64_t panel_begin, int64_t panel_end, int64_t n_total, const float* bias, float* y,
                             int64_t ldy);
void int8_weight_matmul_rows__avx2(const Int8Panels& w, const float* a, int64_t lda, const float* a_sums,
                                   int64_t rows, int64_t panel_begin, int64_t panel_end, int64_t n_total,
                                   const float* bias, float* y, int64_t ldy);
void int8_weight_matmul_rows__avx512(const Int8Panels& w, const float* a, int64_t lda, const float* a_sums,
                                     int64_t rows, int64_t panel_begin, int64_t panel_end, int64_t n_total,
                                     const float* bias, float* y, int64_t ldy);
void int8_weight_matmul_rows_generic(const Int8Panels& w, const float* a, int64_t lda, const float* a_sums,
                                     int64_t rows, int64_t panel_begin, int64_t panel_end, int64_t n_total,
                                     const float* bias, float* y, int64_t ldy);

// Int8 A: Y[m, n] = sum_b a_scale[m, b] (w_scale[n, b] sum_k q_a[m, k] stored_code[n, k] + w_offset[n, b]
// a_sum[m, b]) (+ bias[n]), same ranges. Runs on the calling thread.
void int8_weight_matmul_int8(const Int8Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                             int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy);
void int8_weight_matmul_int8__avx2(const Int8Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                                   int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy);
void int8_weight_matmul_int8__avx512(const Int8Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                                     int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy);
// The avx512 copy with VNNI byte dot products (panel 16; call only when cpu_has_avx512_vnni()); same results.
void int8_weight_matmul_int8__avx512vnni(const Int8Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                                         int64_t panel_end, int64_t n_total, const float* bias, float* y,
                                         int64_t ldy);
void int8_weight_matmul_int8_generic(const Int8Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                                     int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy);

// Dequantizes the weight rows [n_begin, n_end) (n_end <= N) into out (row n at out + (n - n_begin) * padded_k).
void int8_weight_dequantize_rows(const Int8Panels& w, int64_t n_begin, int64_t n_end, float* out);

}  // namespace nxrt::cpu
