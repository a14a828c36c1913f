// nxrt_allocation_probe MODEL [--threads N] [--runs N]: counts heap allocations (every malloc-family call of the
// process, worker threads included) in steady-state runs of MODEL on random inputs (symbolic dims 1). Prints one
// line per way of running it, "<way> <allocations per run>", the least over the measured runs (after as many
// warm-up runs):
//   run           Session::run, outputs returned as new tensors
//   run_bound     Session::run_bound, every output bound to a caller tensor of the right shape
//   prepared      PreparedRun::run: names resolved, feeds and outputs bound once (the zero-allocation path)
//   c_binding     nxrt_session_run_with_binding with every input and output bound (C, C++ wrapper and Fortran)
// tests/python/test_allocation_counts.py runs it on every bench/suite model.
#include <dlfcn.h>
#include <execinfo.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "nxrt/nxrt.h"
#include "random_input.h"
#include "session/prepared_run.h"
#include "session/io_binding.h"
#include "session/session.h"

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace {
std::atomic<long> g_allocations{0};
// NXRT_PROBE_TRACE=1: the call stack of every allocation of the last measured run goes to stderr, as
// "binary(+offset)" frames for addr2line.
std::atomic<bool> g_tracing{false};
thread_local bool t_in_trace = false;

void count_allocation() {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (!g_tracing.load(std::memory_order_relaxed) || t_in_trace) return;
  t_in_trace = true;
  void* frames[24];
  const int depth = backtrace(frames, 24);
  static const char kMarker[] = "-- allocation\n";
  (void)!write(2, kMarker, sizeof(kMarker) - 1);
  backtrace_symbols_fd(frames + 1, depth - 1, 2);
  t_in_trace = false;
}
}  // namespace

// Interposes the C allocator for the whole process: operator new, std::aligned_alloc and the runtime's own
// allocators all end here. Counting only; memory comes from glibc as usual.
extern "C" {
void* malloc(size_t size) {
  count_allocation();
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  count_allocation();
  return __libc_calloc(count, size);
}
void* realloc(void* pointer, size_t size) {
  count_allocation();
  return __libc_realloc(pointer, size);
}
void* memalign(size_t alignment, size_t size) {
  count_allocation();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }
int posix_memalign(void** result, size_t alignment, size_t size) {
  void* pointer = memalign(alignment, size);
  if (pointer == nullptr) return ENOMEM;
  *result = pointer;
  return 0;
}
}

namespace {

using namespace nxrt;

// Least allocations of one call of `step` over `runs` calls, after `runs` warm-up calls; -1 when a call failed.
template <class Step>
long least_allocations(int runs, Step&& step) {
  for (int i = 0; i < runs; ++i) {
    if (!step()) return -1;
  }
  long least = -1;
  const bool trace = std::getenv("NXRT_PROBE_TRACE") != nullptr;
  for (int i = 0; i < runs; ++i) {
    const long before = g_allocations.load();
    g_tracing = trace && i + 1 == runs;
    const bool ok = step();
    g_tracing = false;
    if (!ok) return -1;
    const long used = g_allocations.load() - before;
    if (least < 0 || used < least) least = used;
  }
  return least;
}

int fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.to_string().c_str());
  return 1;
}

// The same run through the C API's IO binding; -1 after printing the error.
long c_binding_allocations(const char* model, int threads, const std::vector<std::string>& input_names,
                           std::vector<Tensor>& feeds, const std::vector<std::string>& output_names,
                           std::vector<Tensor>& bound, int runs) {
  const auto check = [](NxrtStatus* status) {
    if (status == nullptr) return true;
    std::fprintf(stderr, "error: %s\n", nxrt_status_message(status));
    nxrt_release_status(status);
    return false;
  };
  const auto c_tensor = [&](Tensor& tensor, NxrtTensor** out) {
    return check(nxrt_create_tensor_with_data(static_cast<NxrtElementType>(tensor.dtype()), tensor.shape().data(),
                                              tensor.rank(), tensor.raw_data(), tensor.storage_bytes(), out));
  };
  NxrtSessionOptions* options = nullptr;
  NxrtSession* session = nullptr;
  NxrtIoBinding* binding = nullptr;
  std::vector<NxrtTensor*> tensors;
  bool ok = check(nxrt_create_session_options(&options)) &&
            check(nxrt_session_options_set_intra_op_threads(options, threads)) &&
            check(nxrt_create_session(model, options, &session)) && check(nxrt_create_io_binding(session, &binding));
  for (size_t i = 0; ok && i < feeds.size(); ++i) {
    tensors.push_back(nullptr);
    ok = c_tensor(feeds[i], &tensors.back()) &&
         check(nxrt_io_binding_bind_input(binding, input_names[i].c_str(), tensors.back()));
  }
  for (size_t i = 0; ok && i < bound.size(); ++i) {
    tensors.push_back(nullptr);
    ok = c_tensor(bound[i], &tensors.back()) &&
         check(nxrt_io_binding_bind_output(binding, output_names[i].c_str(), tensors.back()));
  }
  const long count = ok ? least_allocations(runs, [&] { return check(nxrt_session_run_with_binding(session, nullptr, binding)); })
                        : -1;
  for (NxrtTensor* tensor : tensors) nxrt_release_tensor(tensor);
  nxrt_release_io_binding(binding);
  nxrt_release_session(session);
  nxrt_release_session_options(options);
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL [--threads N] [--runs N]\n", argv[0]);
    return 2;
  }
  SessionOptions options;
  options.intra_op_num_threads = 1;
  int runs = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0) options.intra_op_num_threads = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--runs") == 0) runs = std::max(1, std::atoi(argv[i + 1]));
  }
  {
    void* warm[4];
    backtrace(warm, 4);  // loads the unwinder before any traced allocation
  }
  auto session = Session::create_from_file(argv[1], options);
  if (!session) return fail(session.status());

  std::mt19937_64 rng(0);
  std::vector<std::string> input_names;
  std::vector<Tensor> feeds;
  for (const ValueDesc& input : (*session)->inputs()) {
    auto tensor = cli::random_input(input, {}, rng);
    if (!tensor) return fail(tensor.status());
    input_names.push_back(input.name);
    feeds.push_back(std::move(*tensor));
  }
  std::vector<std::string> output_names;
  for (const ValueDesc& output : (*session)->outputs()) output_names.push_back(output.name);

  auto first = (*session)->run(input_names, feeds, output_names);
  if (!first) return fail(first.status());
  std::vector<Tensor> bound;
  for (const Tensor& result : *first) {
    auto tensor = Tensor::allocate(result.dtype(), result.shape());
    if (!tensor) return fail(tensor.status());
    bound.push_back(std::move(*tensor));
  }

  Status failed = Status::ok();
  const auto remember = [&](const Status& status) {
    if (!status.is_ok() && failed.is_ok()) failed = status;
    return status.is_ok();
  };
  const long plain = least_allocations(runs, [&] {
    auto results = (*session)->run(input_names, feeds, output_names);
    return remember(results ? Status::ok() : results.status());
  });
  const long with_binding = least_allocations(runs, [&] {
    auto results = (*session)->run_bound(input_names, feeds, output_names, bound);
    return remember(results ? Status::ok() : results.status());
  });
  auto prepared = PreparedRun::create(**session, input_names, feeds, output_names, bound);
  if (!prepared) return fail(prepared.status());
  const long prepared_count = least_allocations(runs, [&] { return remember((*prepared)->run()); });
  if (!failed.is_ok()) return fail(failed);
  const long c_binding = c_binding_allocations(argv[1], options.intra_op_num_threads, input_names, feeds,
                                               output_names, bound, runs);
  if (c_binding < 0) return 1;
  std::printf("run %ld\nrun_bound %ld\nprepared %ld\nc_binding %ld\n", plain, with_binding, prepared_count,
              c_binding);
  return 0;
}
