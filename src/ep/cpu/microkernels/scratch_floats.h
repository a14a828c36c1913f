// Per-thread kernel scratch: a float buffer that only grows and is never zeroed (callers write every float they
// read). Declare one `thread_local ScratchFloats` per use, so uses never share a buffer. Include only from
// baseline (not per-ISA) translation units: its inline code must not merge with a copy built for another ISA.
#pragma once

#include <cstdint>
#include <memory>

namespace nxrt::cpu {

class ScratchFloats {
 public:
  // At least `floats` floats, valid until the next reserve on this object.
  float* reserve(int64_t floats) {
    if (capacity_ < floats) {
      data_.reset(new float[static_cast<size_t>(floats)]);
      capacity_ = floats;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<float[]> data_;
  int64_t capacity_ = 0;
};

}  // namespace nxrt::cpu
