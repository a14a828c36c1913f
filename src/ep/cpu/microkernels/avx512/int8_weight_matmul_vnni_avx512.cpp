// AVX-512 VNNI products of 8-bit weight panels with int8 A (MatMulNBits bits = 8, accuracy_level 4; contract and
// layout in ep/cpu/microkernels/int8_weight_matmul.h). Compiled with -mavx512vnni on top of the avx512 tier's flags;
// the dispatcher calls it only on processors that report AVX512_VNNI.
//
// One 16-row panel by up to 8 rows of A. The panels store each code c as the signed byte c - 128; flipping its top
// bit gives c back as an unsigned byte, so one unsigned x signed byte dot product (vpdpbusd) per row of A adds
// sum c * q over a chunk's 4 k's into every weight row's int32 lane. Starting a block's sums at -128 * sum q turns
// them into sum (c - 128) * q: exactly the integers of the AVX-512 copy without VNNI (|sum| <= 256 * 255 * 127 over
// the largest block fits int32), followed by the same float steps, so both copies give the same results.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined pass-through operands inside the conversion intrinsics as
// maybe-uninitialized; they are never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cstring>

#include "ep/cpu/microkernels/avx512/int4_panel_avx512.h"
#include "ep/cpu/microkernels/avx512/int8_weight_panel_avx512.h"
#include "ep/cpu/microkernels/int8_weight_matmul.h"

namespace nxrt::cpu {

namespace {

constexpr int kMaxRows = 8;
// Bytes ahead of the chunk being read that are prefetched: the panel is one sequential stream.
constexpr int64_t kPrefetchBytes = 4096;

template <int M>
void vnni_panel(const Int8Panels& w, const Int8Rows& a, int64_t p, int64_t n_total, const float* bias, float* y,
                int64_t ldy) {
  const int64_t kp = w.padded_k();
  const __m512i top_bits = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512 acc[M];
  for (auto& v : acc) v = _mm512_setzero_ps();
  const int8_t* codes = w.codes + p * (kp / 4) * 64;
  for (int64_t b = 0; b < w.k_blocks; ++b) {
    __m512i sums[M];
    for (int m = 0; m < M; ++m) sums[m] = _mm512_set1_epi32(-128 * a.sums[m * w.k_blocks + b]);
    for (int64_t kk = b * w.block; kk < (b + 1) * w.block; kk += 4, codes += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(codes) + kPrefetchBytes, _MM_HINT_T0);
      const __m512i unsigned_codes = _mm512_xor_si512(_mm512_loadu_si512(codes), top_bits);
      for (int m = 0; m < M; ++m) {
        sums[m] = _mm512_dpbusd_epi32(sums[m], unsigned_codes, broadcast_four_bytes(a.q + m * kp + kk));
      }
    }
    add_int8_weight_block<M>(w, a, p, b, sums, acc);
  }
  store_panel<M>(acc, p, n_total, bias, y, ldy);
}

using PanelFn = void (*)(const Int8Panels&, const Int8Rows&, int64_t, int64_t, const float*, float*, int64_t);
constexpr PanelFn kPanels[kMaxRows] = {vnni_panel<1>, vnni_panel<2>, vnni_panel<3>, vnni_panel<4>,
                                       vnni_panel<5>, vnni_panel<6>, vnni_panel<7>, vnni_panel<8>};

}  // namespace

void int8_weight_matmul_int8__avx512vnni(const Int8Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                                         int64_t panel_end, int64_t n_total, const float* bias, float* y,
                                         int64_t ldy) {
  const int64_t kp = w.padded_k();
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    for (int64_t m = 0; m < rows; m += kMaxRows) {
      const Int8Rows at = a.from_row(m, kp, w.k_blocks);
      kPanels[std::min<int64_t>(kMaxRows, rows - m) - 1](w, at, p, n_total, bias, y + m * ldy, ldy);
    }
  }
}

}  // namespace nxrt::cpu
