// float16 <-> float32 array conversion with F16C (part of the avx2 tier, ep/cpu/microkernels/cpu_features.h).
// Built with -mavx2 -mfma -mf16c; callers check the tier first. Conversions round to nearest even, as Float16
// does; a NaN stays a NaN (F16C keeps the top payload bits where Float16 writes the canonical quiet NaN).
#include "ep/cpu/microkernels/half_convert.h"

#include <immintrin.h>

namespace nxrt::cpu {

void f16_to_f32__avx2(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
  if (i < n) {
    alignas(16) uint16_t tail_in[8] = {};
    alignas(32) float tail_out[8];
    for (int64_t j = i; j < n; ++j) tail_in[j - i] = in[j];
    _mm256_store_ps(tail_out, _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(tail_in))));
    for (int64_t j = i; j < n; ++j) out[j] = tail_out[j - i];
  }
}

void f32_to_f16__avx2(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  if (i < n) {
    alignas(32) float tail_in[8] = {};
    alignas(16) uint16_t tail_out[8];
    for (int64_t j = i; j < n; ++j) tail_in[j - i] = in[j];
    _mm_store_si128(reinterpret_cast<__m128i*>(tail_out),
                    _mm256_cvtps_ph(_mm256_load_ps(tail_in), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (int64_t j = i; j < n; ++j) out[j] = tail_out[j - i];
  }
}

}  // namespace nxrt::cpu
