// The one place that says which x86-64 instruction-set tier kernels may use. Every SIMD dispatch site asks
// cpu_isa_at_least(); nothing else queries the processor.
//
// Tiers: generic (baseline x86-64 / any other architecture); avx2 = AVX2 + FMA + F16C; avx512 = AVX-512 F, BW, VL
// and DQ on top of the avx2 tier. The active tier is the detected one, lowered for the whole process by the
// environment variable NXRT_CPU_ISA=generic|avx2|avx512 (read once, at the first query), so that every tier the
// machine can run is testable and measurable on it. A value above what the processor runs, or an unknown one, is
// ignored with one line on stderr.
#pragma once

#include <optional>
#include <string_view>

namespace nxrt::cpu {

enum class CpuIsa : int { kGeneric = 0, kAvx2 = 1, kAvx512 = 2 };

std::string_view cpu_isa_name(CpuIsa isa);  // "generic", "avx2", "avx512"
std::optional<CpuIsa> parse_cpu_isa(std::string_view name);

// The highest tier the processor runs.
CpuIsa detected_cpu_isa();
// The tier kernels dispatch on (see above). Constant for the life of the process.
CpuIsa active_cpu_isa();
inline bool cpu_isa_at_least(CpuIsa tier) { return static_cast<int>(active_cpu_isa()) >= static_cast<int>(tier); }

// Whether the processor reports AVX512_VNNI (byte dot products), an extension some avx512-tier processors lack.
// Kernels use it only at the avx512 tier: true when the active tier is avx512 and the processor has it.
bool cpu_has_avx512_vnni();

}  // namespace nxrt::cpu
