// Vector math compiled with -mavx2 -mfma (see vector_math_loops.h).
#define NXRT_VECTOR_MATH_ISA avx2
#include "ep/cpu/microkernels/vector_math_loops.h"

namespace nxrt::cpu {

VectorMathKernels vector_math_kernels_avx2() { return avx2::make_kernels(); }

}  // namespace nxrt::cpu
