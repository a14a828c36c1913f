// Fixed-size pool; the calling thread always takes part, so a pool of N threads starts N-1 workers.
// parallel_for may be called from several threads at once: a call that finds the workers busy runs inline.
// Workers sleep on a condition variable between calls (no spinning while idle).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nxrt {

class ThreadPool {
 public:
  // num_threads <= 0 picks the hardware concurrency.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over disjoint ranges covering [0, n); each range holds at least `grain` items
  // (except the last). Returns once every range is done.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void worker_loop();
  void run_chunks();

  std::vector<std::thread> workers_;
  std::mutex dispatch_mutex_;  // held by the caller whose job the workers run
  std::mutex state_mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  int active_workers_ = 0;

  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_size_ = 0;
  int64_t job_chunk_ = 0;
  std::atomic<int64_t> next_chunk_{0};
};

}  // namespace nxrt
