// The Transpose kernel's per-ISA block transpose.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

// Element (r, c) of a rows x cols block of 32-bit elements (rows, cols <= 16), src row r at src + r * src_stride,
// goes to dst + c * dst_stride + r (strides in elements). Reads and writes nothing else. Defined only on x86-64;
// call only at the tier of the suffix (ep/cpu/microkernels/cpu_features.h).
void transpose_32bit_block__avx512(const void* src, int64_t src_stride, void* dst, int64_t dst_stride, int64_t rows,
                                   int64_t cols);
void transpose_32bit_block__avx2(const void* src, int64_t src_stride, void* dst, int64_t dst_stride, int64_t rows,
                                 int64_t cols);

}  // namespace nxrt::cpu
