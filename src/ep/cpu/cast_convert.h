// Element conversion of Cast, shared with CastLike.
#pragma once

#include <string>

#include "core/status.h"
#include "core/tensor.h"
#include "core/thread_pool.h"

namespace nxrt::cpu {

// True when Cast converts from / to `type` (numeric, bool, string, float8).
bool castable(DataType type);

// Converts every element of `x` into `y` (already allocated with y's dtype and x's shape); both types must be
// castable. `saturate` applies to float8 destinations. Unparsable strings are INVALID_ARGUMENT naming
// `description`.
Status cast_tensor(const Tensor& x, Tensor& y, bool saturate, const std::string& description, ThreadPool& pool);

}  // namespace nxrt::cpu
