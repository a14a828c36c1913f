// Copies along one axis, shared by the value kernels: Loop/Scan stack per-iteration outputs and slice scan
// inputs, SplitToSequence and ConcatFromSequence split and join. Every element type of at least one byte
// (strings included) is supported; errors name `what`.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/status.h"
#include "core/tensor.h"

namespace nxrt::cpu {

// Joins `parts` along `axis` (already normalised). With `new_axis`, the parts must have equal shapes and a new
// dimension of size parts.size() is inserted at `axis` (a stack); otherwise they must agree on every other dim.
// No parts is an error (the caller knows the shape an empty result would have).
Expected<Tensor> join_along_axis(std::span<const Tensor> parts, int64_t axis, bool new_axis, const std::string& what);

// Elements [start, start + length) of `axis`; with `keep_axis` false (length must be 1) the axis is dropped.
Expected<Tensor> slice_along_axis(const Tensor& source, int64_t axis, int64_t start, int64_t length, bool keep_axis,
                                  const std::string& what);

}  // namespace nxrt::cpu
