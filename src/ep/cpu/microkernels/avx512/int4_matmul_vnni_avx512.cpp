// AVX-512 VNNI products of 4-bit weight panels with int8 A (MatMulNBits accuracy_level 4; contract and layout in
// ep/cpu/microkernels/int4_matmul.h). Compiled with -mavx512vnni on top of the avx512 tier's flags; the dispatcher
// calls it only on processors that report AVX512_VNNI.
//
// One 16-row panel by up to 8 rows of A. Each 64-byte chunk (8 k's of 16 rows) splits into its low and high nibbles
// once for all rows of A; one unsigned x signed byte dot product (vpdpbusd) per nibble half adds every row's sum over
// 4 k's into its int32 lane. The integer sums are those of the AVX-512 copy without VNNI (whose 16-bit partial sums
// cannot saturate: 2 x 15 x 127 per pair), and the float steps are the same, so both give the same results.
#include <immintrin.h>

// GCC 12 reports the _mm512_undefined pass-through operands inside the conversion intrinsics as
// maybe-uninitialized; they are never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cstring>

#include "ep/cpu/microkernels/avx512/int4_panel_avx512.h"
#include "ep/cpu/microkernels/int4_matmul.h"

namespace nxrt::cpu {

namespace {

constexpr int kMaxRows = 8;
constexpr int64_t kPrefetchBytes = 4096;

template <int M>
void vnni_panel(const Int4Panels& w, const Int8Rows& a, int64_t p, int64_t n_total, const float* bias, float* y,
                int64_t ldy) {
  const int64_t kp = w.padded_k();
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  __m512 acc[M];
  for (auto& v : acc) v = _mm512_setzero_ps();
  const uint8_t* codes = w.codes + p * (kp / 8) * 64;
  for (int64_t b = 0; b < w.k_blocks; ++b) {
    __m512i sums[M];
    for (auto& v : sums) v = _mm512_setzero_si512();
    for (int64_t kk = b * w.block; kk < (b + 1) * w.block; kk += 8, codes += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(codes) + kPrefetchBytes, _MM_HINT_T0);
      const __m512i bytes = _mm512_loadu_si512(codes);
      const __m512i low = _mm512_and_si512(bytes, nibble);
      const __m512i high = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble);
      for (int m = 0; m < M; ++m) {
        const int8_t* q = a.q + m * kp + kk;
        sums[m] = _mm512_dpbusd_epi32(sums[m], low, broadcast_four_bytes(q));
        sums[m] = _mm512_dpbusd_epi32(sums[m], high, broadcast_four_bytes(q + 4));
      }
    }
    add_panel_block<M>(w, a, p, b, sums, acc);
  }
  store_panel<M>(acc, p, n_total, bias, y, ldy);
}

using PanelFn = void (*)(const Int4Panels&, const Int8Rows&, int64_t, int64_t, const float*, float*, int64_t);
constexpr PanelFn kPanels[kMaxRows] = {vnni_panel<1>, vnni_panel<2>, vnni_panel<3>, vnni_panel<4>,
                                       vnni_panel<5>, vnni_panel<6>, vnni_panel<7>, vnni_panel<8>};

}  // namespace

void int4_matmul_int8__avx512vnni(const Int4Panels& w, const Int8Rows& a, int64_t rows, int64_t panel_begin,
                                  int64_t panel_end, int64_t n_total, const float* bias, float* y, int64_t ldy) {
  const int64_t kp = w.padded_k();
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    for (int64_t m = 0; m < rows; m += kMaxRows) {
      const Int8Rows at = a.from_row(m, kp, w.k_blocks);
      kPanels[std::min<int64_t>(kMaxRows, rows - m) - 1](w, at, p, n_total, bias, y + m * ldy, ldy);
    }
  }
}

}  // namespace nxrt::cpu
