// Vector math compiled for AVX-512 (F, DQ, BW, VL) with 512-bit vectors (see vector_math_loops.h).
#define NXRT_VECTOR_MATH_ISA avx512
#include "ep/cpu/kernels/vector_math_loops.h"

namespace nxrt::cpu {

VectorMathKernels vector_math_kernels_avx512() { return avx512::make_kernels(); }

}  // namespace nxrt::cpu
