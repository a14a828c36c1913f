// The test execution provider: a second device on every machine. Its "device memory" is host memory from its own
// allocator, tagged DeviceType::kTestDevice, which only its kernels and its data transfer touch; its kernels refuse
// inputs that are not on the device. It runs Add, Relu and MatMul (float) plus the copy nodes, so that
// partitioning, copies, streams, device feeds and IO binding to device memory are tested without a GPU.
// Name: "TestDeviceExecutionProvider" (short "TestDevice"). Not meant for production use.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "ep/provider.h"

namespace nxrt::ep {

inline constexpr std::string_view kTestDeviceProviderName = "TestDeviceExecutionProvider";

// Counters over every test-device provider of the process, since the last reset.
struct TestDeviceStats {
  int64_t allocations = 0;
  int64_t frees = 0;
  int64_t host_to_device = 0;  // copies
  int64_t device_to_host = 0;
  int64_t device_to_device = 0;
  int64_t kernel_runs = 0;     // Add / Relu / MatMul executions
  int64_t streams = 0;         // streams created (one per run)
  int64_t synchronizes = 0;
};

TestDeviceStats test_device_stats();
void reset_test_device_stats();

// The process-wide test provider (stateless apart from the counters).
std::shared_ptr<const ExecutionProvider> test_device_provider();

}  // namespace nxrt::ep
