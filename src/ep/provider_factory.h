// Execution providers by name, as sessions and the APIs request them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ep/provider.h"

namespace nxrt::ep {

// "CPU" / "CPUExecutionProvider", "TestDevice" / "TestDeviceExecutionProvider". A provider this build lacks
// (CUDA) is EP_FAIL naming it; an unknown name is INVALID_ARGUMENT listing the available ones.
Expected<std::shared_ptr<const ExecutionProvider>> create_provider(std::string_view name);

// Full names of the providers this build runs models on, in preference order (the CPU last). The test provider is
// not listed (code that picks every available provider must not land on it) but is created by name.
std::vector<std::string> available_providers();

// The session's provider list for the requested names (empty: the CPU alone): duplicates dropped, and the CPU
// appended when absent, as the provider of last resort for nodes no other provider takes.
Expected<std::vector<std::shared_ptr<const ExecutionProvider>>> session_providers(
    std::span<const std::string> requested);

}  // namespace nxrt::ep
