#include "core/packed_memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <mutex>
#include <new>

namespace nxrt::packed_memory {

namespace {

// Arrays are carved from regions of this size; a larger array gets a region of its own.
constexpr size_t kRegionBytes = size_t{16} << 20;

}  // namespace

struct Region {
  char* base = nullptr;
  size_t capacity = 0;
  size_t used = 0;
  size_t live = 0;  // arrays carved from it and not yet released
};

namespace {

std::mutex& regions_mutex() {
  static std::mutex mutex;
  return mutex;
}
Region* current_region = nullptr;  // the region new small arrays come from; guarded by regions_mutex()
size_t held_regions = 0;

Region* new_region(size_t capacity) {
  capacity = (capacity + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* base = huge_page_block(capacity);
  if (base == nullptr) throw std::bad_alloc();
  ++held_regions;
  return new Region{static_cast<char*>(base), capacity, 0, 0};
}

void free_region(Region* region) {
  std::free(region->base);
  --held_regions;
  delete region;
}

}  // namespace

void* huge_page_block(size_t bytes) {
  const size_t pages = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* block = std::aligned_alloc(kHugePageBytes, pages);
  if (block != nullptr) ::madvise(block, pages, MADV_HUGEPAGE);
  return block;
}

void* allocate(size_t bytes, Region** region) {
  bytes = (bytes + 63) / 64 * 64;
  const std::lock_guard lock(regions_mutex());
  Region* target = nullptr;
  if (bytes > kRegionBytes / 4) {
    target = new_region(bytes);
  } else {
    if (current_region == nullptr || current_region->capacity - current_region->used < bytes) {
      Region* const full = current_region;
      current_region = new_region(kRegionBytes);
      if (full != nullptr && full->live == 0) free_region(full);
    }
    target = current_region;
  }
  void* out = target->base + target->used;
  target->used += bytes;
  ++target->live;
  std::memset(out, 0, bytes);
  *region = target;
  return out;
}

void release(Region* region) {
  const std::lock_guard lock(regions_mutex());
  if (--region->live > 0) return;
  if (region == current_region) current_region = nullptr;
  free_region(region);
}

size_t regions_held() {
  const std::lock_guard lock(regions_mutex());
  return held_regions;
}

}  // namespace nxrt::packed_memory
