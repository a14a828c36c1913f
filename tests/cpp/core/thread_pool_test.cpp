#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <new>
#include <set>
#include <thread>
#include <vector>

namespace nxrt {
namespace {

void expect_covers_exactly_once(ThreadPool& pool, int64_t n, int64_t grain,
                                ThreadPool::RangeSplit split = ThreadPool::RangeSplit::kEqual) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  pool.parallel_for(
      n, grain,
      [&](int64_t begin, int64_t end) {
        ASSERT_LE(0, begin);
        ASSERT_LT(begin, end);
        ASSERT_LE(end, n);
        for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
      },
      split);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
}

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {0, 1, 2, 7, 64, 1000, 100003}) {
      for (int64_t grain : {1, 16, 4096}) {
        expect_covers_exactly_once(pool, n, grain);
        expect_covers_exactly_once(pool, n, grain, ThreadPool::RangeSplit::kShrinking);
      }
    }
  }
}

// More threads than a shrinking job has room for ranges: at most kMaxShrinkingRanges (128) of them.
TEST(ThreadPool, ShrinkingRangesCoverEveryIndexOnceWithManyThreads) {
  ThreadPool pool(130);
  for (int64_t n : {129, 1000, 100003}) {
    expect_covers_exactly_once(pool, n, 1, ThreadPool::RangeSplit::kShrinking);
  }
}

// Shrinking ranges: the first round gives each thread a quarter of 2 threads' work (half of it in all), every
// range holds at least `grain` items but the last round's, and the ranges end short.
TEST(ThreadPool, ShrinkingRangesStartLongAndEndShort) {
  ThreadPool pool(2);
  const ThreadPool::RunScope run(pool);
  for (int64_t n : {48, 2000, 100003}) {
    std::mutex mutex;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    pool.parallel_for(
        n, 1,
        [&](int64_t begin, int64_t end) {
          const std::lock_guard lock(mutex);
          ranges.emplace_back(begin, end);
        },
        ThreadPool::RangeSplit::kShrinking);
    std::sort(ranges.begin(), ranges.end());
    ASSERT_GE(ranges.size(), 4u) << n;
    EXPECT_LE(ranges.size(), 128u) << n;
    EXPECT_EQ(ranges[0], std::make_pair(int64_t{0}, n / 4)) << n;
    EXPECT_EQ(ranges[1].second, n / 2) << n;
    EXPECT_EQ(ranges.back().second, n) << n;
    EXPECT_LE(ranges.back().second - ranges.back().first, 2) << n;
  }
}

// An exception from any task (a kernel's std::bad_alloc) reaches the caller once no task runs; the ranges not yet
// started are skipped, and the pool runs the next job normally.
TEST(ThreadPool, ExceptionInATaskIsRethrownOnTheCaller) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    std::atomic<int64_t> ran{0};
    EXPECT_THROW(pool.parallel_for(1000, 1,
                                   [&](int64_t begin, int64_t end) {
                                     if (begin <= 500 && 500 < end) throw std::bad_alloc();
                                     ran.fetch_add(end - begin);
                                   }),
                 std::bad_alloc);
    EXPECT_LT(ran.load(), 1000);
    expect_covers_exactly_once(pool, 100003, 1);
  }
}

TEST(ThreadPool, UsesWorkersForLargeJobs) {
  ThreadPool pool(3);
  std::mutex mutex;
  std::set<std::thread::id> ids;
  for (int attempt = 0; attempt < 50 && ids.size() < 2; ++attempt) {
    pool.parallel_for(64, 1, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      std::lock_guard lock(mutex);
      ids.insert(std::this_thread::get_id());
    });
  }
  EXPECT_GE(ids.size(), 2u);
}

TEST(ThreadPool, ConcurrentCallersAllComplete) {
  ThreadPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int r = 0; r < 100; ++r) {
        pool.parallel_for(1000, 10, [&](int64_t begin, int64_t end) { total.fetch_add(end - begin); });
      }
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(total.load(), 4 * 100 * 1000);
}

TEST(ThreadPool, BackToBackCallsInsideARunCoverEveryIndex) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    ThreadPool::RunScope run(pool);
    for (int repeat = 0; repeat < 50; ++repeat) {
      for (int64_t n : {2, 3, 17, 1000}) expect_covers_exactly_once(pool, n, 1);
    }
  }
}

TEST(ThreadPool, OverlappingRunsFromSeveralThreads) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      ThreadPool::RunScope run(pool);
      for (int i = 0; i < 300; ++i) {
        pool.parallel_for(64, 1, [&](int64_t begin, int64_t end) { total.fetch_add(end - begin); });
      }
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(total.load(), 3 * 300 * 64);
}

// Runs that start while the workers sleep (woken by the run start) and jobs the dispatcher finishes before a
// worker joins: every index is still covered exactly once and no job waits for a sleeping worker.
TEST(ThreadPool, RunsStartingFromSleepCoverEveryIndex) {
  for (int threads : {2, 4}) {
    ThreadPool pool(threads);
    for (int run_index = 0; run_index < 40; ++run_index) {
      std::this_thread::sleep_for(std::chrono::microseconds(run_index % 4 == 0 ? 2000 : 0));
      ThreadPool::RunScope run(pool);
      for (int64_t n : {2, 5, 64, 4096}) expect_covers_exactly_once(pool, n, 1);
    }
  }
}

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// Workers spin only while a run is active and for 100 us after it: an idle pool burns (almost) no CPU.
TEST(ThreadPool, IdlePoolDoesNotSpin) {
  ThreadPool pool(3);
  {
    ThreadPool::RunScope run(pool);
    for (int i = 0; i < 100; ++i) pool.parallel_for(8, 1, [](int64_t, int64_t) {});
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // lets the last spin budget run out
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LT(process_cpu_seconds() - before, 0.03);
}

}  // namespace
}  // namespace nxrt
