// The session arena: the blocks that runs allocate their unplanned host tensors from.
#pragma once

#include <memory>

#include "core/tensor.h"
#include "session/session.h"

namespace nxrt {

// The tensors a session's runs produce (intermediates and outputs): freed blocks are kept and handed out again to
// requests of about the same size (a block at most 1/8 larger), so repeated runs neither call the system
// allocator nor page-fault fresh memory. A request that misses frees cached blocks (largest first) while the
// blocks held (in use + cached) exceed the most bytes ever in use at once, sparing the blocks the previous and the
// current run gave back (the working set of repeated runs) up to 3x that peak. A block returns to the cache only
// when its last user (a value of the run, or the caller holding an output) lets go. Thread-safe (concurrent runs).
// Tensors keep the arena alive, so a caller may hold outputs past the session. ASan builds free every block at once
// so that use-after-free stays detectable.
class TensorArena;
std::shared_ptr<TensorArena> make_tensor_arena();
// Marks the start of a session run (see TensorArena in tensor_arena.cpp).
void begin_arena_run(TensorArena& arena);
Session::ArenaStats tensor_arena_stats(TensorArena& arena);
// Frees the blocks the arena keeps for later runs (called when a run state's planned block takes over the values
// they held, so that the two are not held at once). Heap memory the C allocator keeps is not trimmed: glibc's
// malloc_trim crashes when another allocator (ASan's, a preloaded jemalloc) replaced malloc.
void release_arena_cache(TensorArena& arena);
// Uninitialised storage from `arena` (string tensors come from cpu_allocator()).
Expected<Tensor> allocate_from_arena(const std::shared_ptr<TensorArena>& arena, DataType dtype, Shape shape);

}  // namespace nxrt
