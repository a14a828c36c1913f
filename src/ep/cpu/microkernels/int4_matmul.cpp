// Portable 4-bit weight products, the repacking into Int4Weights' layout and the per-ISA dispatch (contracts in
// int4_matmul.h).
#include "ep/cpu/microkernels/int4_matmul.h"

#include <algorithm>
#include <cstring>

#include "ep/cpu/microkernels/cpu_features.h"

namespace nxrt::cpu {

namespace {

// Code i of a block in Int4Weights' layout.
inline uint32_t grouped_code(const uint8_t* block_codes, int64_t i) {
  const uint8_t byte = block_codes[(i / 32) * 16 + i % 16];
  return (i % 32) < 16 ? byte & 0xFu : byte >> 4;
}

}  // namespace

void repack_int4_codes(const uint8_t* blob, int64_t n, int64_t k, int64_t k_blocks, int64_t block, uint8_t* codes) {
  const int64_t block_bytes = block / 2;
  std::memset(codes, 0, static_cast<size_t>(n * k_blocks * block_bytes));
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t b = 0; b < k_blocks; ++b) {
      const uint8_t* in = blob + (row * k_blocks + b) * block_bytes;
      uint8_t* out = codes + (row * k_blocks + b) * block_bytes;
      const int64_t count = std::min(block, k - b * block);
      for (int64_t i = 0; i < count; ++i) {
        const uint32_t code = (in[i / 2] >> ((i % 2) * 4)) & 0xFu;
        const int64_t at = (i / 32) * 16 + i % 16;
        out[at] = static_cast<uint8_t>(out[at] | ((i % 32) < 16 ? code : code << 4));
      }
    }
  }
}

void int4_dequantize_rows(const Int4Weights& w, int64_t n_begin, int64_t n_end, float* out) {
  const int64_t block_bytes = w.block / 2;
  for (int64_t n = n_begin; n < n_end; ++n) {
    float* row = out + (n - n_begin) * w.padded_k();
    for (int64_t b = 0; b < w.k_blocks; ++b) {
      const uint8_t* codes = w.codes + (n * w.k_blocks + b) * block_bytes;
      const float scale = w.scales[n * w.k_blocks + b];
      const float offset = w.offsets[n * w.k_blocks + b];
      for (int64_t g = 0; g < w.block / 32; ++g) {
        const uint8_t* bytes = codes + g * 16;
        float* group = row + b * w.block + g * 32;
        for (int j = 0; j < 16; ++j) {
          group[j] = static_cast<float>(bytes[j] & 0xF) * scale + offset;
          group[j + 16] = static_cast<float>(bytes[j] >> 4) * scale + offset;
        }
      }
    }
  }
}

void int4_matmul_rows_generic(const Int4Weights& w, const float* a, int64_t lda, int64_t rows, int64_t n_begin,
                              int64_t n_end, const float* bias, float* y, int64_t ldy) {
  const int64_t block_bytes = w.block / 2;
  for (int64_t n = n_begin; n < n_end; ++n) {
    for (int64_t m = 0; m < rows; ++m) {
      const float* a_row = a + m * lda;
      float sum = 0.0f;
      for (int64_t b = 0; b < w.k_blocks; ++b) {
        const uint8_t* codes = w.codes + (n * w.k_blocks + b) * block_bytes;
        const float scale = w.scales[n * w.k_blocks + b];
        const float offset = w.offsets[n * w.k_blocks + b];
        for (int64_t i = 0; i < w.block; ++i) {
          sum += a_row[b * w.block + i] * (static_cast<float>(grouped_code(codes, i)) * scale + offset);
        }
      }
      y[m * ldy + n] = bias != nullptr ? sum + bias[n] : sum;
    }
  }
}

void int4_matmul_rows(const Int4Weights& w, const float* a, int64_t lda, int64_t rows, int64_t n_begin,
                      int64_t n_end, const float* bias, float* y, int64_t ldy) {
#if defined(__x86_64__)
  if (cpu_isa_at_least(CpuIsa::kAvx512)) {
    int4_matmul_rows__avx512(w, a, lda, rows, n_begin, n_end, bias, y, ldy);
    return;
  }
  if (cpu_isa_at_least(CpuIsa::kAvx2)) {
    int4_matmul_rows__avx2(w, a, lda, rows, n_begin, n_end, bias, y, ldy);
    return;
  }
#endif
  int4_matmul_rows_generic(w, a, lda, rows, n_begin, n_end, bias, y, ldy);
}

}  // namespace nxrt::cpu
