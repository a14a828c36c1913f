#include "core/scratch_space.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <thread>

#include "core/thread_pool.h"

namespace nxrt {
namespace {

TEST(ScratchSpace, ABufferIsAlignedAndOnlyGrows) {
  ScratchSpace space;
  void* small = space.reserve(ScratchUse::kConvColumns, 100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  EXPECT_EQ(space.reserve(ScratchUse::kConvColumns, 50), small);  // smaller requests reuse the buffer
  EXPECT_EQ(space.bytes(), 100u);
  void* large = space.reserve(ScratchUse::kConvColumns, 4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % 64, 0u);
  EXPECT_EQ(space.bytes(), 4096u);
  EXPECT_EQ(space.reserve(ScratchUse::kConvColumns, 100), large);
}

TEST(ScratchSpace, UsesNeverShareABuffer) {
  ScratchSpace space;
  void* columns = space.reserve(ScratchUse::kConvColumns, 256);
  void* packed = space.reserve(ScratchUse::kGemmPackedA, 256);
  EXPECT_NE(columns, packed);
  EXPECT_EQ(space.bytes(), 512u);
}

TEST(ScratchSpace, ScopesNestAndRestoreThePreviousSpace) {
  ScratchSpace outer, inner;
  void* outside = scratch_buffer(ScratchUse::kAttentionScores, 64);  // the thread's own space
  {
    const ScratchScope outer_scope(outer);
    EXPECT_EQ(scratch_buffer(ScratchUse::kAttentionScores, 64), outer.reserve(ScratchUse::kAttentionScores, 64));
    {
      const ScratchScope inner_scope(inner);
      EXPECT_EQ(scratch_buffer(ScratchUse::kAttentionScores, 64), inner.reserve(ScratchUse::kAttentionScores, 64));
    }
    EXPECT_EQ(scratch_buffer(ScratchUse::kAttentionScores, 64), outer.reserve(ScratchUse::kAttentionScores, 64));
  }
  EXPECT_EQ(scratch_buffer(ScratchUse::kAttentionScores, 64), outside);
  EXPECT_EQ(outer.bytes(), 64u);
  EXPECT_EQ(inner.bytes(), 64u);
}

// Tasks on pool workers take buffers from the worker's own space, never from the caller's: two threads writing
// the same use at once get different memory.
TEST(ScratchSpace, PoolWorkersHaveTheirOwnSpaces) {
  ThreadPool pool(2);
  ScratchSpace caller;
  const ScratchScope scope(caller);
  std::mutex mutex;
  std::set<void*> buffers;
  std::set<std::thread::id> threads;
  for (int attempt = 0; attempt < 100 && threads.size() < 2; ++attempt) {
    pool.parallel_for(8, 1, [&](int64_t, int64_t) {
      void* buffer = scratch_buffer(ScratchUse::kGemmPackedA, 1024);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::lock_guard lock(mutex);
      buffers.insert(buffer);
      threads.insert(std::this_thread::get_id());
    });
  }
  ASSERT_EQ(threads.size(), 2u) << "the worker never took a task";
  EXPECT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers.count(caller.reserve(ScratchUse::kGemmPackedA, 1024)), 1u);
}

}  // namespace
}  // namespace nxrt
