// The CPU execution provider: host memory, every CPU kernel family, and the CPU graph passes.
#pragma once

#include <memory>

#include "ep/provider.h"

namespace nxrt::cpu {

inline constexpr std::string_view kCpuProviderName = "CPUExecutionProvider";

// Every CPU kernel row (the families listed in registry.cpp).
const ep::KernelRegistry& cpu_registry();

// The process-wide CPU provider (stateless; shared by every session).
std::shared_ptr<const ep::ExecutionProvider> cpu_provider();

}  // namespace nxrt::cpu
