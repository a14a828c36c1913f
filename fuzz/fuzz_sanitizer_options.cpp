// Sanitizer defaults of every fuzz executable (libFuzzer targets and replays); ASAN_OPTIONS / UBSAN_OPTIONS in
// the environment still override them.
// A model may ask for any amount of memory (Expand, ConstantOfShape, window sizes ...). Allocations past 64 MiB
// fail (malloc returns null) as on a machine that cannot serve them: what gets tested is the engine's handling
// of a failed allocation, not ASan's abort on sizes no machine serves, and the fuzzer does not spend its time
// filling huge outputs (fuzz inputs hold at most 4096 elements, far below the cap; libFuzzer itself needs
// about 20 MiB at once). UBSan prints the stack of each report. Builds without sanitizers never call these.

extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=64";
}

extern "C" const char* __ubsan_default_options() { return "print_stacktrace=1"; }
