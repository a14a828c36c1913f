// The copy nodes the partitioner inserts where a value crosses devices, and their kernels, which every provider
// with device memory lists in its registry. Both run on the device provider: CopyToDevice reads host memory and
// writes the provider's device; CopyToHost reads the device and writes host memory (a host output).
#pragma once

#include <span>

#include "ep/kernel.h"

namespace nxrt::ep {

inline constexpr const char* kCopyDomain = "com.nxrt";
inline constexpr const char* kCopyToDevice = "CopyToDevice";
inline constexpr const char* kCopyToHost = "CopyToHost";

// The two rows (any dtype but string). A CopyToDevice of a constant copies once, when the session is created.
std::span<const KernelDef> copy_kernels();

}  // namespace nxrt::ep
