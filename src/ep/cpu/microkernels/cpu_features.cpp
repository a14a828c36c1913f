#include "ep/cpu/microkernels/cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <string>

namespace nxrt::cpu {

namespace {

#if defined(__x86_64__)
// CPUID leaf 1, ECX bit 29 (F16C): asked directly, as clang's __builtin_cpu_supports does not know "f16c".
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
}
#endif

CpuIsa detect() {
#if defined(__x86_64__)
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (avx512) return CpuIsa::kAvx512;
  if (avx2) return CpuIsa::kAvx2;
#endif
  return CpuIsa::kGeneric;
}

CpuIsa choose() {
  const CpuIsa detected = detected_cpu_isa();
  const char* requested = std::getenv("NXRT_CPU_ISA");
  if (requested == nullptr || *requested == '\0') return detected;
  const std::optional<CpuIsa> tier = parse_cpu_isa(requested);
  if (!tier) {
    std::fprintf(stderr, "nxrt: NXRT_CPU_ISA=%s is not one of generic, avx2, avx512; using %s\n", requested,
                 std::string(cpu_isa_name(detected)).c_str());
    return detected;
  }
  if (static_cast<int>(*tier) > static_cast<int>(detected)) {
    std::fprintf(stderr, "nxrt: NXRT_CPU_ISA=%s is above what this processor runs; using %s\n", requested,
                 std::string(cpu_isa_name(detected)).c_str());
    return detected;
  }
  return *tier;
}

}  // namespace

std::string_view cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512: return "avx512";
    case CpuIsa::kAvx2: return "avx2";
    case CpuIsa::kGeneric: break;
  }
  return "generic";
}

std::optional<CpuIsa> parse_cpu_isa(std::string_view name) {
  for (CpuIsa isa : {CpuIsa::kGeneric, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (name == cpu_isa_name(isa)) return isa;
  }
  return std::nullopt;
}

CpuIsa detected_cpu_isa() {
  static const CpuIsa detected = detect();
  return detected;
}

CpuIsa active_cpu_isa() {
  static const CpuIsa active = choose();
  return active;
}

bool cpu_has_avx512_vnni() {
#if defined(__x86_64__)
  static const bool vnni = __builtin_cpu_supports("avx512vnni");
  return vnni && cpu_isa_at_least(CpuIsa::kAvx512);
#else
  return false;
#endif
}

}  // namespace nxrt::cpu
