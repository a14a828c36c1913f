// Whether this build runs under AddressSanitizer (GCC defines __SANITIZE_ADDRESS__, clang answers
// __has_feature(address_sanitizer)). Allocation caches turn themselves off under it, so that a use after free
// stays detectable, and the memory plan poisons dead slots.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define NXRT_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NXRT_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef NXRT_ADDRESS_SANITIZER
#define NXRT_ADDRESS_SANITIZER 0
#endif

namespace nxrt {

inline constexpr bool kAddressSanitizer = NXRT_ADDRESS_SANITIZER != 0;

}  // namespace nxrt
