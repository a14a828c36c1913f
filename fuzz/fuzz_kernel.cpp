// libFuzzer entry point: one node of any registered op, built from the fuzzer's bytes (fuzz_model_builder.h
// describes the format), run in a one-thread session. Any Status is fine; crashes, hangs, leaks and sanitizer
// reports are bugs.
#include <cstddef>
#include <cstdint>

#include "fuzz_model_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nxrt::fuzz::run_fuzz_case(nxrt::fuzz::decode_kernel_case({data, size}));
  return 0;
}
