#include "session/tensor_arena.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "core/sanitizer.h"

namespace nxrt {

constexpr bool kReuseBlocks = !kAddressSanitizer;

class TensorArena {
 public:
  TensorArena() = default;
  TensorArena(const TensorArena&) = delete;
  TensorArena& operator=(const TensorArena&) = delete;
  ~TensorArena() {
    for (const auto& entry : cached_) std::free(entry.second.block);
  }

  // Called when a session run starts (not for subgraph runs): blocks given back in the previous run or this one
  // are the working set that the next requests will hit.
  void begin_run() {
    std::lock_guard lock(mutex_);
    ++runs_;
  }

  // A 64-byte aligned block of at least `bytes`; its usable size is written to `size`. Null when out of memory.
  void* take(size_t bytes, size_t& size) {
    size = std::max<size_t>((bytes + 63) / 64 * 64, 64);
    if (kReuseBlocks) {
      std::lock_guard lock(mutex_);
      auto it = cached_.lower_bound(size);
      if (it != cached_.end() && it->first <= size + size / 8) {
        void* block = it->second.block;
        size = it->first;
        in_use_ += size;
        cached_bytes_ -= size;
        cached_.erase(it);
        return block;
      }
      in_use_ += size;
      peak_in_use_ = std::max(peak_in_use_, in_use_);
      ++system_allocations_;
      trim_cache();
    }
    void* block = std::aligned_alloc(64, size);
    if (block == nullptr && kReuseBlocks) {
      std::lock_guard lock(mutex_);
      in_use_ -= size;
    }
    return block;
  }

  // Frees every cached block; the peak starts again from what is in use now.
  void release_cached() {
    std::lock_guard lock(mutex_);
    for (const auto& entry : cached_) std::free(entry.second.block);
    cached_.clear();
    cached_bytes_ = 0;
    peak_in_use_ = in_use_;
  }

  Session::ArenaStats stats() {
    std::lock_guard lock(mutex_);
    return {static_cast<int64_t>(system_allocations_), static_cast<int64_t>(cached_bytes_),
            static_cast<int64_t>(peak_in_use_)};
  }

  void give_back(void* block, size_t size) {
    if (!kReuseBlocks) {
      std::free(block);
      return;
    }
    std::lock_guard lock(mutex_);
    in_use_ -= size;
    cached_bytes_ += size;
    cached_.emplace(size, CachedBlock{block, runs_});
  }

 private:
  struct CachedBlock {
    void* block;
    uint64_t run;  // the run during which it was given back
  };

  // After a miss (mutex held): frees cached blocks, largest first, while the blocks held exceed the peak in use.
  // Blocks of the previous and the current run are spared up to kWorkingSetFactor x the peak: the blocks one run
  // touches add up to more than its peak in use (a block serves only requests of about its size), and freeing
  // them would make the next run miss and page-fault fresh memory again.
  void trim_cache() {
    const auto stale = [&](const CachedBlock& cached) { return cached.run + 1 < runs_; };
    for (auto it = cached_.end(); it != cached_.begin() && in_use_ + cached_bytes_ > peak_in_use_;) {
      --it;
      if (stale(it->second)) it = release(it);
    }
    while (!cached_.empty() && in_use_ + cached_bytes_ > kWorkingSetFactor * peak_in_use_) {
      release(std::prev(cached_.end()));
    }
  }

  // Frees a cached block (mutex held); returns the entry after it.
  std::multimap<size_t, CachedBlock>::iterator release(std::multimap<size_t, CachedBlock>::iterator it) {
    cached_bytes_ -= it->first;
    std::free(it->second.block);
    return cached_.erase(it);
  }

  static constexpr size_t kWorkingSetFactor = 3;
  std::mutex mutex_;
  std::multimap<size_t, CachedBlock> cached_;  // usable size -> block
  size_t cached_bytes_ = 0;
  size_t in_use_ = 0;
  size_t peak_in_use_ = 0;
  uint64_t runs_ = 0;
  uint64_t system_allocations_ = 0;
};

std::shared_ptr<TensorArena> make_tensor_arena() { return std::make_shared<TensorArena>(); }
void begin_arena_run(TensorArena& arena) { arena.begin_run(); }
Session::ArenaStats tensor_arena_stats(TensorArena& arena) { return arena.stats(); }
void release_arena_cache(TensorArena& arena) { arena.release_cached(); }

Expected<Tensor> allocate_from_arena(const std::shared_ptr<TensorArena>& arena, DataType dtype, Shape shape) {
  if (dtype == DataType::kString) return Tensor::allocate(dtype, std::move(shape));
  const auto count = checked_numel(shape);
  if (!count) return make_error(StatusCode::kInvalidArgument, "invalid tensor shape ", shape_to_string(shape));
  const int bits = data_type_bits(dtype);
  if (bits == 0) return make_error(StatusCode::kInvalidArgument, "cannot allocate a tensor of undefined type");
  size_t bits_total = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(*count), static_cast<size_t>(bits), &bits_total) ||
      bits_total > (size_t{1} << 62)) {
    return make_error(StatusCode::kInvalidArgument, "tensor of shape ", shape_to_string(shape), " is too large");
  }
  size_t size = 0;
  void* block = arena->take((bits_total + 7) / 8, size);
  if (block == nullptr) {
    return make_error(StatusCode::kRuntimeException, "failed to allocate ", (bits_total + 7) / 8,
                      " bytes for a tensor of shape ", shape_to_string(shape));
  }
  std::shared_ptr<void> owner(block, [arena, size](void* pointer) { arena->give_back(pointer, size); });
  return Tensor::wrap(dtype, std::move(shape), block, Device{}, std::move(owner));
}

}  // namespace nxrt
