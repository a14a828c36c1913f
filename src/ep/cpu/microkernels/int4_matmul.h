// Products of float rows with 4-bit block-quantized weights that stay packed in memory (MatMulNBits with
// bits = 4), dequantized in registers: the weights are read once per call at half a byte each, which is what
// bounds a decoder's token step.
//
// Layout (Int4Weights): N weight rows of `k_blocks` blocks of `block` codes each (block a multiple of 32). Row n,
// block b holds block / 2 code bytes at codes + (n * k_blocks + b) * block / 2, in groups of 32 codes per 16
// bytes: byte j of a group holds code j in its low nibble and code j + 16 in its high nibble. The weight is
// code * scale + offset with scale and offset = -zero_point * scale from scales / offsets [n * k_blocks + b].
// Codes past the real K are zero; A rows must then be zero there too (the caller pads them).
#pragma once

#include <cstdint>

namespace nxrt::cpu {

struct Int4Weights {
  const uint8_t* codes = nullptr;
  const float* scales = nullptr;
  const float* offsets = nullptr;
  int64_t k_blocks = 0;
  int64_t block = 0;
  int64_t padded_k() const { return k_blocks * block; }
};

// Repacks the weights from MatMulNBits' own layout (codes of row n, block b at blob + (n * k_blocks + b) *
// block / 2, low nibble first) into `codes` (N * k_blocks * block / 2 bytes), codes past `k` set to zero.
void repack_int4_codes(const uint8_t* blob, int64_t n, int64_t k, int64_t k_blocks, int64_t block, uint8_t* codes);

// Y[m, n] = sum_k A[m, k] W[n, k] (+ bias[n] when bias is not null) for m < rows and n in [n_begin, n_end):
// A row m at a + m * lda holds w.padded_k() floats, Y row m at y + m * ldy. Runs on the calling thread; the
// per-ISA copies below are chosen by the active CPU tier.
void int4_matmul_rows(const Int4Weights& w, const float* a, int64_t lda, int64_t rows, int64_t n_begin,
                      int64_t n_end, const float* bias, float* y, int64_t ldy);

// The per-ISA copies (same contract); call only when the CPU has the ISA. Defined only on x86-64.
void int4_matmul_rows__avx2(const Int4Weights& w, const float* a, int64_t lda, int64_t rows, int64_t n_begin,
                            int64_t n_end, const float* bias, float* y, int64_t ldy);
void int4_matmul_rows__avx512(const Int4Weights& w, const float* a, int64_t lda, int64_t rows, int64_t n_begin,
                              int64_t n_end, const float* bias, float* y, int64_t ldy);

// The portable copy, also the reference the per-ISA copies are tested against.
void int4_matmul_rows_generic(const Int4Weights& w, const float* a, int64_t lda, int64_t rows, int64_t n_begin,
                              int64_t n_end, const float* bias, float* y, int64_t ldy);

// Dequantizes weight rows [n_begin, n_end) into out (row n at out + (n - n_begin) * w.padded_k()).
void int4_dequantize_rows(const Int4Weights& w, int64_t n_begin, int64_t n_end, float* out);

// ---- Products with A quantized to int8 per block (MatMulNBits accuracy_level 4) ----------------------------------
//
// Layout (Int4Panels): weight rows in panels of `panel` rows (16 at the avx2 and avx512 tiers, 8 at generic; rows
// past N are zero), K in chunks of 8. Panel p, chunk c holds panel * 4 bytes at codes + (p * padded_k / 8 + c) * panel * 4:
// byte 4 i + j holds the code of (row i, k = 8 c + j) in its low nibble and of (row i, k = 8 c + 4 + j) in its
// high nibble, so one widening multiply-add per nibble half sums 4 k's of every row of the panel in its own lane.
// scales / offsets [(p * k_blocks + b) * panel + i] are block b's scale and -zero_point * scale of row i. Null
// offsets mean the zero point 8 of weights without zero points (offset -8 * scale): a decode step then reads no
// offsets at all.
struct Int4Panels {
  const uint8_t* codes = nullptr;
  const float* scales = nullptr;
  const float* offsets = nullptr;
  int64_t k_blocks = 0;
  int64_t block = 0;  // a multiple of 8
  int64_t panel = 8;
  int64_t padded_k() const { return k_blocks * block; }
};

// A row quantized per block of K: q[k] = round_half_even(a[k] * 127 / max|a in the block|) (0 for an all-zero
// block), scale = max / 127, sum = the block's sum of q. Rows of `q` hold padded_k int8 (zeros past `k`).
struct Int8Rows {
  const int8_t* q = nullptr;
  const float* scales = nullptr;  // [row * k_blocks + b]
  const int32_t* sums = nullptr;  // [row * k_blocks + b]
  // [row * k_blocks + b] = scales[...] * float(sums[...]) (scale_block_sums), formed once per product: the
  // int4_matmul_int8 copies need them; the int8-weight products do not read them.
  const float* scaled_sums = nullptr;

  // The rows from `row` on, of rows holding padded_k codes and k_blocks blocks.
  Int8Rows from_row(int64_t row, int64_t padded_k, int64_t k_blocks) const {
    return {q + row * padded_k, scales + row * k_blocks, sums + row * k_blocks,
            scaled_sums != nullptr ? scaled_sums + row * k_blocks : nullptr};
  }
};

// scaled[i] = scales[i] * float(sums[i]) for i < count (Int8Rows::scaled_sums).
void scale_block_sums(const float* scales, const int32_t* sums, int64_t count, float* scaled);

// The panel width the active tier's kernels use.
int64_t int4_panel_rows();
// Repacks MatMulNBits' codes (see repack_int4_codes) of N rows into `codes` (Int4Panels' layout; its size is
// panels * padded_k * panel / 2 bytes), and scales / offsets [n * k_blocks + b] into the panel order (offsets and
// panel_offsets null for the implicit zero point 8).
void repack_int4_panels(const uint8_t* blob, const float* scales, const float* offsets, int64_t n, int64_t k,
                        int64_t k_blocks, int64_t block, int64_t panel, uint8_t* codes, float* panel_scales,
                        float* panel_offsets);
// Quantizes `rows` rows of `k` floats (a + m * lda) into q (rows of k_blocks * block), scales and sums.
void quantize_int8_blocks(const float* a, int64_t lda, int64_t rows, int64_t k, int64_t k_blocks, int64_t block,
                          int8_t* q, float* scales, int32_t* sums);
// The portable copy and the per-ISA copies (call only when the CPU has the ISA): the same bytes, scales and sums.
void quantize_int8_blocks_generic(const float* a, int64_t lda, int64_t rows, int64_t k, int64_t k_blocks,
                                  int64_t block, int8_t* q, float* scales, int32_t* sums);
void quantize_int8_blocks__avx2(const float* a, int64_t lda, int64_t rows, int64_t k, int64_t k_blocks,
                                int64_t block, int8_t* q, float* scales, int32_t* sums);
void quantize_int8_blocks__avx512(const float* a, int64_t lda, int64_t rows, int64_t k, int64_t k_blocks,
                                  int64_t block, int8_t* q, float* scales, int32_t* sums);

// Y[m, n] = sum_b a_scale[m, b] (w_scale[n, b] sum_k q_a[m, k] code[n, k] + w_offset[n, b] a_sum[m, b])
// (+ bias[n]) for m < rows and the rows n < n_total of panels [panel_begin, panel_end). Runs on the calling thread.
void int4_matmul_int8(const Int4Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin, int64_t panel_end,
                      int64_t n_total, const float* bias, float* y, int64_t ldy);
void int4_matmul_int8__avx2(const Int4Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                            int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy);
void int4_matmul_int8__avx512(const Int4Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                              int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy);
// The avx512 copy with VNNI byte dot products (panel 16; call only when cpu_has_avx512_vnni()); same results.
void int4_matmul_int8__avx512vnni(const Int4Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                                  int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy);
void int4_matmul_int8_generic(const Int4Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                              int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy);

}  // namespace nxrt::cpu
