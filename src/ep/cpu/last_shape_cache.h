// Work a kernel derives from its input shape (window tap tables, tiling plans), kept for the last shape seen, so
// that repeated runs with that shape neither recompute nor allocate it. Kernels are shared by concurrent runs:
// get() is thread-safe, and a plan stays valid for as long as its caller holds the returned pointer, even when
// another run replaces the entry meanwhile.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

#include "core/shape.h"

namespace nxrt::cpu {

template <class Plan>
class LastShapeCache {
 public:
  // The plan for `shape`: the cached one when `shape` equals the last shape, else make() (then cached).
  template <class Make>
  std::shared_ptr<const Plan> get(const Shape& shape, Make&& make) const {
    {
      std::lock_guard lock(mutex_);
      if (plan_ != nullptr && shape_ == shape) return plan_;
    }
    auto plan = std::make_shared<const Plan>(std::forward<Make>(make)());
    std::lock_guard lock(mutex_);
    shape_ = shape;
    plan_ = plan;
    return plan;
  }

 private:
  mutable std::mutex mutex_;
  mutable Shape shape_;
  mutable std::shared_ptr<const Plan> plan_;
};

}  // namespace nxrt::cpu
