// libFuzzer entry point: a graph of 2-6 nodes (outputs of earlier nodes feeding later ones, initializers,
// subgraph bodies), built from the fuzzer's bytes (fuzz_model_builder.h describes the format) and run in a
// one-thread session. Any Status is fine; crashes, hangs, leaks and sanitizer reports are bugs.
#include <cstddef>
#include <cstdint>

#include "fuzz_model_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nxrt::fuzz::run_fuzz_case(nxrt::fuzz::decode_graph_case({data, size}));
  return 0;
}
