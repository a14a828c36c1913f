#include "core/thread_pool.h"

#include <algorithm>

namespace nxrt {

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(state_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run_chunks() {
  for (;;) {
    const int64_t chunk = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    const int64_t begin = chunk * job_chunk_;
    if (begin >= job_size_) return;
    (*job_)(begin, std::min(job_size_, begin + job_chunk_));
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(state_mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_chunks();
    {
      std::lock_guard lock(state_mutex_);
      if (--active_workers_ == 0) done_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = (n + grain - 1) / grain;
  std::unique_lock dispatch(dispatch_mutex_, std::try_to_lock);
  if (workers_.empty() || max_chunks <= 1 || !dispatch.owns_lock()) {
    fn(0, n);
    return;
  }
  const int64_t chunks = std::min<int64_t>(max_chunks, static_cast<int64_t>(num_threads()) * 4);
  {
    std::lock_guard lock(state_mutex_);
    job_ = &fn;
    job_size_ = n;
    job_chunk_ = (n + chunks - 1) / chunks;
    next_chunk_.store(0, std::memory_order_relaxed);
    active_workers_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  run_chunks();
  std::unique_lock lock(state_mutex_);
  done_.wait(lock, [&] { return active_workers_ == 0; });
  job_ = nullptr;
}

}  // namespace nxrt
