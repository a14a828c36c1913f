// Fixed-size pool; the calling thread always takes part, so a pool of N threads starts N-1 workers.
// parallel_for may be called from several threads at once: a call that finds the workers busy runs inline.
// While a run is active (see RunScope), and for kRunGraceNs after the last one ended, workers and the
// dispatching thread spin for a bounded time before sleeping, so back-to-back parallel_for calls, and the
// back-to-back runs of a caller's loop, skip the futex wake (tens of microseconds on a virtual machine, which
// made short 2-thread runs slower than 1-thread ones); after that they sleep on a condition variable (no
// spinning while idle).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <type_traits>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace nxrt {

// A non-owning reference to a callable taking (begin, end): what parallel_for runs. Never allocates; the callable
// must outlive the call (a lambda passed to parallel_for does: it lives until the call returns).
class RangeFunction {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, RangeFunction> && std::is_invocable_v<F&, int64_t, int64_t>)
  RangeFunction(F&& fn)  // NOLINT: implicit, as std::function's converting constructor
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(fn)))),
        call_([](void* object, int64_t begin, int64_t end) {
          (*static_cast<std::remove_reference_t<F>*>(object))(begin, end);
        }) {}
  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, int64_t, int64_t);
};

class ThreadPool {
 public:
  // num_threads <= 0 picks the hardware concurrency.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // How parallel_for cuts [0, n) into ranges (each of at least `grain` items; one range of all n when
  // n < 2 * grain). Threads take ranges in order, so the last one bounds how long a thread waits for the others.
  enum class RangeSplit {
    kEqual,      // at most 4 ranges per thread, sizes differing by at most one
    kShrinking,  // rounds of one range per thread, each round covering half of what is left: a few long ranges
                 // first (uniform work that streams memory restarts the stream at each range) and short ones last
  };
  // Calls fn(begin, end) over disjoint ranges covering [0, n) (see RangeSplit). Returns once every range is done.
  // An exception thrown by fn (std::bad_alloc from a kernel's buffer) on any thread skips the ranges not yet
  // started and is rethrown on the calling thread once no thread runs fn any more.
  void parallel_for(int64_t n, int64_t grain, RangeFunction fn, RangeSplit split = RangeSplit::kEqual);

  // Marks a run active for its lifetime (runs may overlap; spinning lasts while any is active).
  class RunScope {
   public:
    // The first active run wakes sleeping workers, so they spin by the time its first parallel_for comes.
    explicit RunScope(ThreadPool& pool) : pool_(pool) {
      if (pool_.active_runs_.fetch_add(1, std::memory_order_relaxed) == 0) pool_.wake_for_run();
    }
    ~RunScope() {
      pool_.last_run_end_ns_.store(now_ns(), std::memory_order_relaxed);
      pool_.active_runs_.fetch_sub(1, std::memory_order_relaxed);
    }
    RunScope(const RunScope&) = delete;
    RunScope& operator=(const RunScope&) = delete;

   private:
    ThreadPool& pool_;
  };

 private:
  static constexpr int64_t kRunGraceNs = 100'000;
  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  // True while a run is active or the last one ended less than kRunGraceNs ago.
  bool spinning_allowed() const;
  void worker_loop();
  void wake_for_run();
  void run_chunks();
  // Fills job_bounds_ for a kShrinking job of n items; returns the number of ranges.
  int64_t shrinking_bounds(int64_t n, int64_t grain);
  // Spins while `done()` is false, a run is active and the thread's spin budget lasts (see thread_pool.cpp);
  // true when `done()` became true.
  template <class Done, class Budget>
  bool spin_until(const Done& done, Budget& budget) const;

  std::vector<std::thread> workers_;
  std::mutex dispatch_mutex_;  // held by the caller whose job the workers run
  std::mutex state_mutex_;     // guards sleeping on wake_/done_ against missed notifications
  std::condition_variable wake_;
  std::condition_variable done_;
  // The current job: generation (bits 33..63), closed flag (bit 32), workers inside it (bits 0..31). Workers
  // join only an open job; the dispatcher closes it once every chunk is claimed and waits for those inside, so it
  // never waits for a worker that is still waking up. Job fields below change only while nobody is inside.
  static constexpr int kGenerationShift = 33;
  static constexpr uint64_t kClosedBit = uint64_t{1} << 32;
  static uint64_t job_generation(uint64_t word) { return word >> kGenerationShift; }
  static uint64_t job_participants(uint64_t word) { return word & 0xffffffffu; }
  std::atomic<uint64_t> job_word_{kClosedBit};
  std::atomic<bool> stopping_{false};
  std::atomic<int> active_runs_{0};
  std::atomic<int64_t> last_run_end_ns_{std::numeric_limits<int64_t>::min() / 2};
  std::atomic<uint64_t> run_starts_{0};  // bumped by wake_for_run; sleeping workers wake on a change
  std::atomic<int> sleeping_workers_{0};

  const RangeFunction* job_ = nullptr;
  std::mutex job_error_mutex_;
  std::exception_ptr job_error_;  // the first exception of the current job; guarded by job_error_mutex_
  std::atomic<bool> job_failed_{false};
  int64_t job_size_ = 0;
  int64_t job_chunks_ = 0;
  bool job_shrinking_ = false;
  // Range c of a kShrinking job is [job_bounds_[c], job_bounds_[c + 1]).
  static constexpr int64_t kMaxShrinkingRanges = 128;
  std::array<int64_t, kMaxShrinkingRanges + 1> job_bounds_{};
  std::atomic<int64_t> next_chunk_{0};
};

}  // namespace nxrt
