// The compute kernels of the test execution provider (float32 Add with broadcasting, Relu, 2-D MatMul). Each
// refuses an input that is not in test-device memory, so a missing copy shows up as an error.
#pragma once

#include <span>

#include "ep/kernel.h"

namespace nxrt::ep {

std::span<const KernelDef> test_device_kernels();
// Beyond its registry rows: MatMul only with both inputs known to be 2-D.
bool test_device_can_run(const graph::Graph& graph, const graph::Node& node);
// Counts one kernel execution in test_device_stats() (test_device_provider.cpp).
void count_test_device_kernel_run();

}  // namespace nxrt::ep
