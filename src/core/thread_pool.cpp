#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/scratch_space.h"

namespace nxrt {

namespace {

// How long a thread spins for the next job (or for the workers to finish) before it sleeps: long enough to bridge
// the gap between two kernels of a run and to outlast a futex wake on a virtual machine (tens of microseconds),
// short enough that a run's serial stretches do not burn a core for long. The spin never yields: on an
// oversubscribed machine sched_yield hands the core away for a whole time slice (milliseconds), which made
// 2-thread runs several times slower than sleeping at once.
constexpr int64_t kMaxSpinNs = 100'000;
// Spins that time out halve the budget down to this floor (e.g. when the thread that would end the wait shares
// this core, spinning only delays it); a spin that succeeds restores the full budget. The floor stays above zero:
// a thread that slept at every wait paid a wake-up per job, which measured up to 1.8x slower on small models.
constexpr int64_t kMinSpinNs = 25'000;

// Tells the core this is a spin-wait: on x86 `pause` hands the execution resources to the sibling hardware
// thread (a virtual CPU may share its core with the other one) and avoids the memory-order flush on exit.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class SpinBudget {
 public:
  int64_t take() const { return ns_; }
  void record(bool succeeded) { ns_ = succeeded ? kMaxSpinNs : std::max(kMinSpinNs, ns_ / 2); }

 private:
  int64_t ns_ = kMaxSpinNs;
};

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(state_mutex_);
    stopping_.store(true);
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

bool ThreadPool::spinning_allowed() const {
  return active_runs_.load(std::memory_order_relaxed) > 0 ||
         now_ns() - last_run_end_ns_.load(std::memory_order_relaxed) < kRunGraceNs;
}

template <class Done, class Budget>
bool ThreadPool::spin_until(const Done& done, Budget& budget) const {
  if (!spinning_allowed()) return done();
  const int64_t spin_ns = budget.take();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(spin_ns);
  for (int i = 1;; ++i) {
    if (done()) {
      budget.record(true);
      return true;
    }
    cpu_relax();
    if (i % 64 == 0) {
      if (!spinning_allowed()) return done();
      if (std::chrono::steady_clock::now() > deadline) {
        const bool succeeded = done();
        budget.record(succeeded);
        return succeeded;
      }
    }
  }
}

void ThreadPool::run_chunks() {
  for (;;) {
    const int64_t chunk = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    if (chunk >= job_chunks_) return;
    if (job_failed_.load(std::memory_order_relaxed)) continue;  // claim the rest without running them
    // Equal ranges are balanced: sizes differ by at most one, so 14 items on 8 chunks are 1-2 each, not 7 of 2.
    const int64_t begin = job_shrinking_ ? job_bounds_[chunk] : chunk * job_size_ / job_chunks_;
    const int64_t end = job_shrinking_ ? job_bounds_[chunk + 1] : (chunk + 1) * job_size_ / job_chunks_;
    try {
      (*job_)(begin, end);
    } catch (...) {
      const std::lock_guard lock(job_error_mutex_);
      if (!job_error_) job_error_ = std::current_exception();
      job_failed_.store(true, std::memory_order_relaxed);
    }
  }
}

void ThreadPool::worker_loop() {
  ScratchSpace scratch;  // the kernels' scratch buffers of every task this worker runs
  const ScratchScope scratch_scope(scratch);
  uint64_t seen = job_generation(job_word_.load(std::memory_order_acquire));
  SpinBudget budget;
  const auto has_news = [&] {
    return stopping_.load(std::memory_order_acquire) ||
           job_generation(job_word_.load(std::memory_order_acquire)) != seen;
  };
  for (;;) {
    if (!spin_until(has_news, budget)) {
      std::unique_lock lock(state_mutex_);
      const uint64_t starts = run_starts_.load(std::memory_order_relaxed);
      sleeping_workers_.fetch_add(1, std::memory_order_relaxed);
      wake_.wait(lock, [&] { return has_news() || run_starts_.load(std::memory_order_relaxed) != starts; });
      sleeping_workers_.fetch_sub(1, std::memory_order_relaxed);
      if (!has_news()) continue;  // woken for a run start: spin for its first job
    }
    if (stopping_.load(std::memory_order_acquire)) return;
    // Join the job unless the dispatcher closed it (it finished every chunk before this thread woke up).
    uint64_t word = job_word_.load(std::memory_order_acquire);
    bool joined = false;
    while (!(word & kClosedBit) && !joined) {
      joined = job_word_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel);
    }
    seen = job_generation(word);
    if (!joined) continue;
    run_chunks();
    const uint64_t before = job_word_.fetch_sub(1, std::memory_order_acq_rel);
    if ((before & kClosedBit) && job_participants(before) == 1) {
      std::lock_guard lock(state_mutex_);
      done_.notify_all();
    }
  }
}

void ThreadPool::wake_for_run() {
  if (sleeping_workers_.load(std::memory_order_relaxed) == 0) return;
  {
    std::lock_guard lock(state_mutex_);
    run_starts_.fetch_add(1, std::memory_order_relaxed);
  }
  wake_.notify_all();
}

int64_t ThreadPool::shrinking_bounds(int64_t n, int64_t grain) {
  const int64_t threads = num_threads();
  int64_t count = 0;
  job_bounds_[0] = 0;
  for (int64_t start = 0; start < n;) {
    const int64_t left = n - start;
    int64_t covered = std::max(left / 2, threads * grain);
    if (covered >= left || count + 2 * threads > kMaxShrinkingRanges) covered = left;
    // The last round (covered == left) has room for `threads` ranges unless there are more threads than
    // kMaxShrinkingRanges: then it has at most that many.
    const int64_t pieces = std::clamp<int64_t>(covered / grain, 1, std::min(threads, kMaxShrinkingRanges - count));
    for (int64_t p = 1; p <= pieces; ++p) job_bounds_[++count] = start + p * covered / pieces;
    start += covered;
  }
  return count;
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, RangeFunction fn, RangeSplit split) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = n / grain;  // balanced chunks of at least `grain` items
  if (workers_.empty() || max_chunks <= 1) {
    fn(0, n);
    return;
  }
  std::unique_lock dispatch(dispatch_mutex_, std::try_to_lock);
  if (!dispatch.owns_lock()) {
    fn(0, n);
    return;
  }
  job_shrinking_ = split == RangeSplit::kShrinking;
  const int64_t chunks = job_shrinking_ ? shrinking_bounds(n, grain)
                                        : std::min<int64_t>(max_chunks, static_cast<int64_t>(num_threads()) * 4);
  job_ = &fn;
  job_failed_.store(false, std::memory_order_relaxed);
  job_size_ = n;
  job_chunks_ = chunks;
  next_chunk_.store(0, std::memory_order_relaxed);
  {
    // Publishing under the lock pairs with the predicate check of a worker about to sleep.
    std::lock_guard lock(state_mutex_);
    const uint64_t generation = job_generation(job_word_.load(std::memory_order_relaxed)) + 1;
    job_word_.store(generation << kGenerationShift, std::memory_order_release);
  }
  wake_.notify_all();
  run_chunks();
  // Every chunk is claimed: close the job so late workers stay out, then wait only for those inside it.
  const uint64_t at_close = job_word_.fetch_or(kClosedBit, std::memory_order_acq_rel);
  if (job_participants(at_close) > 0) {
    const auto finished = [&] { return job_participants(job_word_.load(std::memory_order_acquire)) == 0; };
    thread_local SpinBudget budget;
    if (!spin_until(finished, budget)) {
      std::unique_lock lock(state_mutex_);
      done_.wait(lock, finished);
    }
  }
  job_ = nullptr;
  if (job_failed_.load(std::memory_order_relaxed)) {
    std::exception_ptr error;
    {
      const std::lock_guard lock(job_error_mutex_);
      error = std::exchange(job_error_, nullptr);
    }
    std::rethrow_exception(error);
  }
}

}  // namespace nxrt
