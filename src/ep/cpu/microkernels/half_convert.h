// float16 <-> float32 conversion of whole arrays, per CPU tier. The __avx2 forms use F16C and exist only on
// x86-64; call them only at the avx2 tier or above (ep/cpu/microkernels/cpu_features.h).
#pragma once

#include <cstdint>

namespace nxrt::cpu {

// out[i] = in[i] for i < n; in holds float16 bit patterns.
void f16_to_f32__avx2(const uint16_t* in, float* out, int64_t n);
// out[i] = in[i] rounded to nearest even float16 (inf beyond the range), for i < n.
void f32_to_f16__avx2(const float* in, uint16_t* out, int64_t n);

}  // namespace nxrt::cpu
