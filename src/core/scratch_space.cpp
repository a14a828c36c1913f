#include "core/scratch_space.h"

#include <new>

namespace nxrt {

namespace {

constexpr std::align_val_t kScratchAlignment{64};

thread_local ScratchSpace* current_space = nullptr;

ScratchSpace& thread_space() {
  thread_local ScratchSpace space;
  return space;
}

}  // namespace

ScratchSpace::~ScratchSpace() {
  for (Block& block : blocks_) ::operator delete(block.data, kScratchAlignment);
}

void* ScratchSpace::reserve(ScratchUse use, size_t bytes) {
  Block& block = blocks_[static_cast<size_t>(use)];
  if (block.bytes < bytes) {
    void* grown = ::operator new(bytes, kScratchAlignment);
    ::operator delete(block.data, kScratchAlignment);
    block.data = grown;
    block.bytes = bytes;
  }
  return block.data;
}

size_t ScratchSpace::bytes() const {
  size_t total = 0;
  for (const Block& block : blocks_) total += block.bytes;
  return total;
}

ScratchScope::ScratchScope(ScratchSpace& space) : previous_(current_space) { current_space = &space; }

ScratchScope::~ScratchScope() { current_space = previous_; }

void* scratch_buffer(ScratchUse use, size_t bytes) {
  ScratchSpace& space = current_space != nullptr ? *current_space : thread_space();
  return space.reserve(use, bytes);
}

float* scratch_floats(ScratchUse use, int64_t count) {
  return static_cast<float*>(scratch_buffer(use, static_cast<size_t>(count) * sizeof(float)));
}

}  // namespace nxrt
