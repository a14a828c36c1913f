// Element conversion of Cast, shared with CastLike.
#pragma once

#include <string>

#include "core/float8.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/thread_pool.h"
#include "graph/graph.h"

namespace nxrt::cpu {

// True when Cast converts from / to `type` (numeric, bool, string, float8, float4, int4/uint4/int2/uint2).
bool castable(DataType type);

// Converts every element of `x` into `y` (already allocated with y's dtype and x's shape); both types must be
// castable. `saturate` applies to float8 destinations. Unparsable strings are INVALID_ARGUMENT naming
// `description`.
Status cast_tensor(const Tensor& x, Tensor& y, bool saturate, const std::string& description, ThreadPool& pool);
// As above; `rounding` applies to float8e8m0 destinations (the other overload rounds up). Packed types (int4,
// uint4, int2, uint2, float4e2m1) are read and written low bits first.
Status cast_tensor(const Tensor& x, Tensor& y, bool saturate, E8M0Rounding rounding, const std::string& description,
                   ThreadPool& pool);

// The float8e8m0 rounding of a Cast or CastLike node: its `round_mode` attribute from opset 24, else up.
Expected<E8M0Rounding> cast_rounding_of(const graph::Node& node);

}  // namespace nxrt::cpu
