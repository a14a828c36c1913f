// 4-bit weight products with A quantized to int8 per block (MatMulNBits accuracy_level 4): the panel repacking,
// the quantization of A, the portable product and the per-ISA dispatch (contracts in int4_matmul.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/microkernels/int4_matmul.h"

namespace nxrt::cpu {

namespace {

// Where the code of (row i of panel p, k) lives in Int4Panels' layout, and its nibble's shift.
inline size_t panel_byte(const Int4Panels& w, int64_t p, int64_t i, int64_t k) {
  return static_cast<size_t>((p * (w.padded_k() / 8) + k / 8) * w.panel * 4 + 4 * i + k % 4);
}
inline int panel_shift(int64_t k) { return k % 8 < 4 ? 0 : 4; }

}  // namespace

int64_t int4_panel_rows() { return cpu_isa_at_least(CpuIsa::kAvx2) ? 16 : 8; }

void repack_int4_panels(const uint8_t* blob, const float* scales, const float* offsets, int64_t n, int64_t k,
                        int64_t k_blocks, int64_t block, int64_t panel, uint8_t* codes, float* panel_scales,
                        float* panel_offsets) {
  const Int4Panels w{codes, panel_scales, panel_offsets, k_blocks, block, panel};
  const int64_t panels = (n + panel - 1) / panel;
  std::memset(codes, 0, static_cast<size_t>(panels * w.padded_k() * panel / 2));
  std::fill_n(panel_scales, panels * k_blocks * panel, 0.0f);
  if (panel_offsets != nullptr) std::fill_n(panel_offsets, panels * k_blocks * panel, 0.0f);
  for (int64_t row = 0; row < n; ++row) {
    const int64_t p = row / panel, i = row % panel;
    for (int64_t b = 0; b < k_blocks; ++b) {
      const uint8_t* in = blob + (row * k_blocks + b) * (block / 2);
      const int64_t count = std::min(block, k - b * block);
      // Whole chunks of 8 codes: the 4 input bytes hold codes t..t+7 low nibble first; output byte j pairs code
      // t + j (low nibble) with code t + 4 + j (high nibble).
      const int64_t whole = count / 8 * 8;
      for (int64_t t = 0; t < whole; t += 8) {
        uint8_t* out = codes + panel_byte(w, p, i, b * block + t);
        const uint8_t* chunk = in + t / 2;
        for (int j = 0; j < 4; ++j) {
          const uint32_t first = (chunk[j / 2] >> ((j % 2) * 4)) & 0xFu;
          const uint32_t second = (chunk[2 + j / 2] >> ((j % 2) * 4)) & 0xFu;
          out[j] = static_cast<uint8_t>(first | (second << 4));
        }
      }
      for (int64_t t = whole; t < count; ++t) {
        const uint32_t code = (in[t / 2] >> ((t % 2) * 4)) & 0xFu;
        const int64_t kk = b * block + t;
        uint8_t& byte = codes[panel_byte(w, p, i, kk)];
        byte = static_cast<uint8_t>(byte | (code << panel_shift(kk)));
      }
      panel_scales[(p * k_blocks + b) * panel + i] = scales[row * k_blocks + b];
      if (panel_offsets != nullptr) panel_offsets[(p * k_blocks + b) * panel + i] = offsets[row * k_blocks + b];
    }
  }
}

void quantize_int8_blocks(const float* a, int64_t lda, int64_t rows, int64_t k, int64_t k_blocks, int64_t block,
                          int8_t* q, float* scales, int32_t* sums) {
#if defined(__x86_64__)
  if (cpu_isa_at_least(CpuIsa::kAvx512)) {
    quantize_int8_blocks__avx512(a, lda, rows, k, k_blocks, block, q, scales, sums);
    return;
  }
  if (cpu_isa_at_least(CpuIsa::kAvx2)) {
    quantize_int8_blocks__avx2(a, lda, rows, k, k_blocks, block, q, scales, sums);
    return;
  }
#endif
  quantize_int8_blocks_generic(a, lda, rows, k, k_blocks, block, q, scales, sums);
}

void quantize_int8_blocks_generic(const float* a, int64_t lda, int64_t rows, int64_t k, int64_t k_blocks,
                                  int64_t block, int8_t* q, float* scales, int32_t* sums) {
  const int64_t kp = k_blocks * block;
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t b = 0; b < k_blocks; ++b) {
      const float* x = a + m * lda + b * block;
      const int64_t count = std::min(block, k - b * block);
      float largest = 0.0f;
      bool nan = false;
      for (int64_t t = 0; t < count; ++t) {
        largest = std::max(largest, std::fabs(x[t]));
        nan = nan || std::isnan(x[t]);
      }
      const float inverse = largest > 0.0f ? 127.0f / largest : 0.0f;
      int8_t* out = q + m * kp + b * block;
      int32_t sum = 0;
      for (int64_t t = 0; t < block; ++t) {
        const float r = t < count ? x[t] * inverse : 0.0f;
        const int32_t v = std::isnan(r) ? 0 : static_cast<int32_t>(std::clamp(std::nearbyint(r), -127.0f, 127.0f));
        out[t] = static_cast<int8_t>(v);
        sum += v;
      }
      // A NaN in the block makes its products NaN, as a float product would.
      scales[m * k_blocks + b] = nan ? std::nanf("") : largest / 127.0f;
      sums[m * k_blocks + b] = sum;
    }
  }
}

void scale_block_sums(const float* scales, const int32_t* sums, int64_t count, float* scaled) {
  for (int64_t i = 0; i < count; ++i) scaled[i] = scales[i] * static_cast<float>(sums[i]);
}

void int4_matmul_int8_generic(const Int4Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                              int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy) {
  const int64_t panel = w.panel, kp = w.padded_k();
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    for (int64_t m = 0; m < rows; ++m) {
      float acc[16] = {};
      for (int64_t b = 0; b < w.k_blocks; ++b) {
        int32_t sums[16] = {};
        for (int64_t kk = b * w.block; kk < (b + 1) * w.block; kk += 8) {
          const int8_t* aq = a.q + m * kp + kk;
          for (int64_t i = 0; i < panel; ++i) {
            const uint8_t* bytes = w.codes + panel_byte(w, p, i, kk);
            for (int j = 0; j < 4; ++j) sums[i] += (bytes[j] & 0xF) * aq[j] + (bytes[j] >> 4) * aq[4 + j];
          }
        }
        const float a_scale = a.scales[m * w.k_blocks + b];
        const float a_sum = a.scaled_sums[m * w.k_blocks + b];
        const float* scales = w.scales + (p * w.k_blocks + b) * panel;
        const float* offsets = w.offsets != nullptr ? w.offsets + (p * w.k_blocks + b) * panel : nullptr;
        for (int64_t i = 0; i < panel; ++i) {
          const float offset = offsets != nullptr ? offsets[i] : -8.0f * scales[i];
          acc[i] += static_cast<float>(sums[i]) * (scales[i] * a_scale) + offset * a_sum;
        }
      }
      for (int64_t i = 0; i < panel && p * panel + i < n_total; ++i) {
        const int64_t n = p * panel + i;
        y[m * ldy + n] = bias != nullptr ? acc[i] + bias[n] : acc[i];
      }
    }
  }
}

void int4_matmul_int8(const Int4Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin, int64_t panel_end,
                      int64_t n_total, const float* bias, float* y, int64_t ldy) {
#if defined(__x86_64__)
  if (w.panel == 16 && cpu_has_avx512_vnni()) {
    int4_matmul_int8__avx512vnni(w, a, rows, panel_begin, panel_end, n_total, bias, y, ldy);
    return;
  }
  if (w.panel == 16 && cpu_isa_at_least(CpuIsa::kAvx512)) {
    int4_matmul_int8__avx512(w, a, rows, panel_begin, panel_end, n_total, bias, y, ldy);
    return;
  }
  if (w.panel == 16 && cpu_isa_at_least(CpuIsa::kAvx2)) {
    int4_matmul_int8__avx2(w, a, rows, panel_begin, panel_end, n_total, bias, y, ldy);
    return;
  }
#endif
  int4_matmul_int8_generic(w, a, rows, panel_begin, panel_end, n_total, bias, y, ldy);
}

}  // namespace nxrt::cpu
