// Process-wide limits of every fuzz executable (libFuzzer targets, replays, fuzz_case_to_model).
//
// A model may ask for any amount of memory (Expand, ConstantOfShape, Resize scales, window sizes ...). Until
// sessions take a memory limit, this file plays one: tensor storage (the engine allocates it, and nothing
// else, with std::aligned_alloc) past kMaxTensorBytes fails as on a machine that cannot serve it, so what gets
// tested is the engine's handling of a failed allocation, and the fuzzer does not spend its time filling huge
// outputs (fuzz inputs hold at most 4096 elements). Other allocations (a kernel's index tables, several times
// an output's size) may use up to 1 GiB under ASan, past which malloc returns null and operator new reports;
// -rss_limit_mb bounds the total.
// UBSan prints the stack of each report. ASAN_OPTIONS / UBSAN_OPTIONS in the environment override these.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>

namespace {

constexpr size_t kMaxTensorBytes = size_t{16} << 20;

}  // namespace

extern "C" void* aligned_alloc(size_t alignment, size_t size) {
  void* block = nullptr;
  if (size > kMaxTensorBytes || posix_memalign(&block, std::max(alignment, sizeof(void*)), size) != 0) {
    errno = ENOMEM;
    return nullptr;
  }
  return block;
}

extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=1024";
}

extern "C" const char* __ubsan_default_options() { return "print_stacktrace=1"; }
