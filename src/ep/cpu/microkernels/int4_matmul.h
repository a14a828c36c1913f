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

}  // namespace nxrt::cpu
