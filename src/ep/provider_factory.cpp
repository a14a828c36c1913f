#include "ep/provider_factory.h"

#include <algorithm>

#include "ep/cpu/cpu_provider.h"
#include "ep/test_device/test_device_provider.h"

namespace nxrt::ep {

namespace {

bool names(std::string_view requested, std::string_view full) {
  constexpr std::string_view kSuffix = "ExecutionProvider";
  return requested == full || (full.size() > kSuffix.size() && full.ends_with(kSuffix) &&
                               requested == full.substr(0, full.size() - kSuffix.size()));
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

}  // namespace

std::vector<std::string> available_providers() { return {std::string(cpu::kCpuProviderName)}; }

Expected<std::shared_ptr<const ExecutionProvider>> create_provider(std::string_view name) {
  if (names(name, cpu::kCpuProviderName)) return cpu::cpu_provider();
  if (names(name, kTestDeviceProviderName)) return test_device_provider();
  if (names(name, "CUDAExecutionProvider")) {
    return make_error(StatusCode::kEpFail, "CUDAExecutionProvider was requested but this build of nxrt has no CUDA "
                                           "support (available: ", joined(available_providers()), ")");
  }
  return make_error(StatusCode::kInvalidArgument, "unknown execution provider '", name, "' (available: ",
                    joined(available_providers()), "; for tests: ", kTestDeviceProviderName, ")");
}

Expected<std::vector<std::shared_ptr<const ExecutionProvider>>> session_providers(
    std::span<const std::string> requested) {
  std::vector<std::shared_ptr<const ExecutionProvider>> providers;
  for (const std::string& name : requested) {
    TRY_ASSIGN(auto provider, create_provider(name));
    const bool listed = std::any_of(providers.begin(), providers.end(),
                                    [&](const auto& other) { return other->name() == provider->name(); });
    if (!listed) providers.push_back(std::move(provider));
  }
  const bool has_cpu = std::any_of(providers.begin(), providers.end(),
                                   [](const auto& provider) { return provider->name() == cpu::kCpuProviderName; });
  if (!has_cpu) providers.push_back(cpu::cpu_provider());
  return providers;
}

}  // namespace nxrt::ep
