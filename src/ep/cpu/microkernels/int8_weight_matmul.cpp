// Portable 8-bit weight products, the repacking into Int8Panels' layout and the per-ISA dispatch (contracts in
// int8_weight_matmul.h).
#include "ep/cpu/microkernels/int8_weight_matmul.h"

#include <algorithm>
#include <cstring>

#include "ep/cpu/microkernels/cpu_features.h"

namespace nxrt::cpu {

namespace {

// Where the code of (row i of panel p, k) lives in Int8Panels' layout.
inline size_t panel_byte(const Int8Panels& w, int64_t p, int64_t i, int64_t k) {
  return static_cast<size_t>((p * (w.padded_k() / 4) + k / 4) * w.panel * 4 + 4 * i + k % 4);
}

inline size_t block_at(const Int8Panels& w, int64_t p, int64_t b) {
  return static_cast<size_t>((p * w.k_blocks + b) * w.panel);
}

}  // namespace

int64_t int8_weight_panel_rows() { return cpu_isa_at_least(CpuIsa::kAvx512) ? 16 : 8; }

void repack_int8_weight_panels(const uint8_t* blob, const float* scales, const float* offsets, int64_t n, int64_t k,
                               int64_t k_blocks, int64_t block, int64_t panel, int8_t* codes, float* panel_scales,
                               float* panel_offsets) {
  const Int8Panels w{codes, panel_scales, panel_offsets, k_blocks, block, panel};
  const int64_t panels = (n + panel - 1) / panel;
  std::memset(codes, 0, static_cast<size_t>(panels * w.padded_k() * panel));
  std::fill_n(panel_scales, panels * k_blocks * panel, 0.0f);
  if (panel_offsets != nullptr) std::fill_n(panel_offsets, panels * k_blocks * panel, 0.0f);
  for (int64_t row = 0; row < n; ++row) {
    const int64_t p = row / panel, i = row % panel;
    for (int64_t b = 0; b < k_blocks; ++b) {
      const uint8_t* in = blob + (row * k_blocks + b) * block;
      const int64_t count = std::min(block, k - b * block);
      for (int64_t t = 0; t < count; ++t) {
        codes[panel_byte(w, p, i, b * block + t)] = static_cast<int8_t>(static_cast<int>(in[t]) - 128);
      }
      const float scale = scales[row * k_blocks + b];
      panel_scales[block_at(w, p, b) + static_cast<size_t>(i)] = scale;
      if (panel_offsets != nullptr) {
        panel_offsets[block_at(w, p, b) + static_cast<size_t>(i)] = offsets[row * k_blocks + b] + 128.0f * scale;
      }
    }
  }
}

void int8_weight_dequantize_rows(const Int8Panels& w, int64_t n_begin, int64_t n_end, float* out) {
  const int64_t kp = w.padded_k();
  for (int64_t n = n_begin; n < n_end; ++n) {
    const int64_t p = n / w.panel, i = n % w.panel;
    float* row = out + (n - n_begin) * kp;
    for (int64_t b = 0; b < w.k_blocks; ++b) {
      const float scale = w.scales[block_at(w, p, b) + static_cast<size_t>(i)];
      const float offset = w.offsets != nullptr ? w.offsets[block_at(w, p, b) + static_cast<size_t>(i)] : 0.0f;
      for (int64_t k = b * w.block; k < (b + 1) * w.block; ++k) {
        row[k] = static_cast<float>(w.codes[panel_byte(w, p, i, k)]) * scale + offset;
      }
    }
  }
}

void int8_weight_matmul_rows_generic(const Int8Panels& w, const float* a, int64_t lda, const float* a_sums,
                                     int64_t rows, int64_t panel_begin, int64_t panel_end, int64_t n_total,
                                     const float* bias, float* y, int64_t ldy) {
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    for (int64_t i = 0; i < w.panel && p * w.panel + i < n_total; ++i) {
      const int64_t n = p * w.panel + i;
      for (int64_t m = 0; m < rows; ++m) {
        const float* a_row = a + m * lda;
        float total = 0.0f;
        for (int64_t b = 0; b < w.k_blocks; ++b) {
          float dot = 0.0f;
          for (int64_t k = b * w.block; k < (b + 1) * w.block; ++k) {
            dot += a_row[k] * static_cast<float>(w.codes[panel_byte(w, p, i, k)]);
          }
          const size_t at = block_at(w, p, b) + static_cast<size_t>(i);
          const float offset = w.offsets != nullptr ? w.offsets[at] : 0.0f;
          total += dot * w.scales[at] + offset * a_sums[m * w.k_blocks + b];
        }
        y[m * ldy + n] = bias != nullptr ? total + bias[n] : total;
      }
    }
  }
}

void int8_weight_matmul_int8_generic(const Int8Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                                     int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy) {
  const int64_t kp = w.padded_k();
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    for (int64_t i = 0; i < w.panel && p * w.panel + i < n_total; ++i) {
      const int64_t n = p * w.panel + i;
      for (int64_t m = 0; m < rows; ++m) {
        float total = 0.0f;
        for (int64_t b = 0; b < w.k_blocks; ++b) {
          int32_t dot = 0;
          for (int64_t k = b * w.block; k < (b + 1) * w.block; ++k) {
            dot += static_cast<int32_t>(a.q[m * kp + k]) * w.codes[panel_byte(w, p, i, k)];
          }
          const size_t at = block_at(w, p, b) + static_cast<size_t>(i);
          const float a_scale = a.scales[m * w.k_blocks + b];
          const float a_sum = a_scale * static_cast<float>(a.sums[m * w.k_blocks + b]);
          const float offset = w.offsets != nullptr ? w.offsets[at] : 0.0f;
          total += static_cast<float>(dot) * (w.scales[at] * a_scale) + offset * a_sum;
        }
        y[m * ldy + n] = bias != nullptr ? total + bias[n] : total;
      }
    }
  }
}

void int8_weight_matmul_rows(const Int8Panels& w, const float* a, int64_t lda, const float* a_sums, int64_t rows,
                             int64_t panel_begin, int64_t panel_end, int64_t n_total, const float* bias, float* y,
                             int64_t ldy) {
#if defined(__x86_64__)
  if (w.panel == 16 && cpu_isa_at_least(CpuIsa::kAvx512)) {
    int8_weight_matmul_rows__avx512(w, a, lda, a_sums, rows, panel_begin, panel_end, n_total, bias, y, ldy);
    return;
  }
  if (w.panel == 8 && cpu_isa_at_least(CpuIsa::kAvx2)) {
    int8_weight_matmul_rows__avx2(w, a, lda, a_sums, rows, panel_begin, panel_end, n_total, bias, y, ldy);
    return;
  }
#endif
  int8_weight_matmul_rows_generic(w, a, lda, a_sums, rows, panel_begin, panel_end, n_total, bias, y, ldy);
}

void int8_weight_matmul_int8(const Int8Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                             int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy) {
#if defined(__x86_64__)
  if (w.panel == 16 && cpu_has_avx512_vnni()) {
    int8_weight_matmul_int8__avx512vnni(w, a, rows, panel_begin, panel_end, n_total, bias, y, ldy);
    return;
  }
  if (w.panel == 16 && cpu_isa_at_least(CpuIsa::kAvx512)) {
    int8_weight_matmul_int8__avx512(w, a, rows, panel_begin, panel_end, n_total, bias, y, ldy);
    return;
  }
  if (w.panel == 8 && cpu_isa_at_least(CpuIsa::kAvx2)) {
    int8_weight_matmul_int8__avx2(w, a, rows, panel_begin, panel_end, n_total, bias, y, ldy);
    return;
  }
#endif
  int8_weight_matmul_int8_generic(w, a, rows, panel_begin, panel_end, n_total, bias, y, ldy);
}

}  // namespace nxrt::cpu
