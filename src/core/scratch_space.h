// Kernel scratch memory, owned by whoever runs the kernel rather than by the kernel or the thread.
//
// Each ThreadPool worker holds one ScratchSpace for its lifetime, and each session run state holds one for the
// thread that calls the run (installed with a ScratchScope while the run executes). A kernel asks
// scratch_buffer(use, bytes) for the buffer of one use site on the calling thread's current space. A use's
// buffer only grows, so a repeated run with the same shapes allocates nothing; it is freed with its owner (the
// session's run states and thread pool), not kept until the thread exits.
//
// Rules for kernels: one ScratchUse per use site, so that uses that nest on one thread (a convolution's column
// buffer around the GEMM's packing buffers) never share a buffer; a buffer obtained on the calling thread may be
// handed to the pool's tasks (they run while the caller waits), but a task takes its own buffers inside the task.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace nxrt {

enum class ScratchUse : uint8_t {
  kGemmPackedA,         // a task's packed block of A
  kGemmPanelB,          // a task's packed panel of B (grids of one row block)
  kGemmPackedB,         // the caller's packed block of B, shared by the tasks
  kAttentionScores,     // FusedAttention: a task's score rows
  kConvColumns,         // im2col columns of one unit
  kConvPhases,          // an input row split into its stride phases
  kConvPaddedPlanes,    // direct convolution: the padded input planes, shared by the tasks
  kConvDepthwisePlane,  // plain depthwise convolution: a task's padded input plane
  kConvPoolRows,        // FusedConvMaxPool: a task's convolution rows
  kConvPoolColumns,     // FusedConvMaxPool: a task's column maxima
  kConvWinogradTiles,   // Winograd: a task's transformed tiles
  kNchwcEdge,           // NCHWc convolution: a task's edge columns
  kNchwcWinograd,       // NCHWc Winograd: a task's tiles
  kMaxPoolColumns,      // 3x3 stride-2 MaxPool: column maxima of a plane
  kFusedInputTable,     // FusedElementwise: the caller's input pointers, shared by the tasks
  kFusedOutputTable,    // FusedElementwise: the caller's output pointers, shared by the tasks
  kFusedRegisters,      // FusedElementwise: a task's intermediate chunks
  kContribNormRow,      // com.microsoft layer norms: a task's row in float (half types)
  kContribAttention,    // com.microsoft attention: a task's scores and head rows
  kContribProjection,   // com.microsoft Attention: the caller's Q, K, V projections, shared by the tasks
  kVariadicSum,         // Sum / Mean of half types: the caller's float sums, shared by the tasks
  kReduceOffsets,       // Reduce*: the caller's offsets of the reduced rows, shared by the tasks
  kReducePartials,      // Reduce*: the caller's per-chunk partial results of one long reduction
  kCount,
};

class ScratchSpace {
 public:
  ScratchSpace() = default;
  ~ScratchSpace();
  ScratchSpace(const ScratchSpace&) = delete;
  ScratchSpace& operator=(const ScratchSpace&) = delete;

  // At least `bytes` bytes for `use`, 64-byte aligned, contents unspecified; valid until the next reserve of
  // `use` on this space. Throws std::bad_alloc as operator new does.
  void* reserve(ScratchUse use, size_t bytes);
  // Bytes held over all uses.
  size_t bytes() const;

 private:
  struct Block {
    void* data = nullptr;
    size_t bytes = 0;
  };
  std::array<Block, static_cast<size_t>(ScratchUse::kCount)> blocks_{};
};

// Makes `space` the calling thread's current space for the scope's lifetime (scopes nest; the previous one is
// restored).
class ScratchScope {
 public:
  explicit ScratchScope(ScratchSpace& space);
  ~ScratchScope();
  ScratchScope(const ScratchScope&) = delete;
  ScratchScope& operator=(const ScratchScope&) = delete;

 private:
  ScratchSpace* previous_;
};

// The buffer for `use` on the calling thread's current space; outside every scope (a kernel called directly, as
// unit tests and benches do) a space of the thread's own. Not inline: translation units built for different
// instruction sets call this one definition.
void* scratch_buffer(ScratchUse use, size_t bytes);
// scratch_buffer for `count` floats.
float* scratch_floats(ScratchUse use, int64_t count);

}  // namespace nxrt
