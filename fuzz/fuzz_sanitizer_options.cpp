// Sanitizer defaults of every fuzz executable (libFuzzer targets and replays); ASAN_OPTIONS / UBSAN_OPTIONS in
// the environment still override them. A model may ask for any amount of memory: allocations past 256 MiB fail
// (malloc returns null) as on a machine that cannot serve them, so what gets tested is the engine's handling of
// a failed allocation, not ASan's abort on sizes no machine serves, and no kernel spends libFuzzer's whole
// per-input timeout filling one huge output. UBSan prints the stack of each report. Builds without sanitizers
// never call these functions.

extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=256";
}

extern "C" const char* __ubsan_default_options() { return "print_stacktrace=1"; }
