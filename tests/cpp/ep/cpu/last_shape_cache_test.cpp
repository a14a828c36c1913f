#include "ep/cpu/last_shape_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace nxrt::cpu {
namespace {

TEST(LastShapeCache, TheSameShapeReusesThePlanAndANewShapeReplacesIt) {
  LastShapeCache<int64_t> cache;
  int builds = 0;
  const auto numel_of = [&](const Shape& shape) {
    return [&builds, shape] {
      ++builds;
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      return n;
    };
  };
  const Shape a{2, 3}, b{4, 5};
  const auto first = cache.get(a, numel_of(a));
  EXPECT_EQ(*first, 6);
  EXPECT_EQ(cache.get(a, numel_of(a)), first);
  EXPECT_EQ(builds, 1);
  const auto second = cache.get(b, numel_of(b));
  EXPECT_EQ(*second, 20);
  EXPECT_EQ(builds, 2);
  EXPECT_EQ(*first, 6);  // a replaced plan stays valid for its holder
  EXPECT_EQ(*cache.get(a, numel_of(a)), 6);
  EXPECT_EQ(builds, 3);
}

TEST(LastShapeCache, ConcurrentCallersAlwaysGetThePlanOfTheirShape) {
  LastShapeCache<int64_t> cache;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const Shape shape{t + 1, 7};
      for (int i = 0; i < 2000; ++i) {
        const auto plan = cache.get(shape, [&] { return shape[0] * shape[1]; });
        if (*plan != (t + 1) * 7) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace nxrt::cpu
