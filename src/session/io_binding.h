// Runs a session with outputs bound to caller tensors (IO binding).
//
// Contract of Session::run_bound:
// - `bound_outputs[i]` belongs to the i-th requested output; an invalid (default) Tensor means "allocate".
// - A node that produces a bound graph output writes straight into the bound buffer, with no copy, when the
//   element type and shape it computes equal the bound tensor's, the buffer lies on the CPU, is aligned for
//   its element type and does not overlap a feed (except a feed that the node alone reads and updates in place,
//   see bound_output_writable: a past / present cache bound to one buffer). The buffer may be in the memory of
//   any device the session's providers run on; a value produced elsewhere is copied there by the provider of
//   that device.
// - Otherwise (the output is a view of an input, a constant, a graph input passed through, the output of a
//   control-flow or sequence kernel, or the buffer overlaps a feed) the result is copied into the bound
//   buffer after the run. A result whose element type or shape differs from the bound tensor is an
//   INVALID_ARGUMENT error; the bound buffer may then hold partial results.
// - `written_in_place[i]` reports which of the two paths output i took (false for unbound outputs).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "session/session.h"

namespace nxrt {

// True when a node may write output `bound` (graph value `output_id`) in place: a valid non-string tensor on a
// device of the session, aligned for its element type, overlapping none of `feeds` (graph values `feed_ids`) except
// a feed it is exactly (same memory, type and shape) that only the output's producer reads, at the input the
// producer's kernel updates in place for that output (Kernel::updates_input_in_place; GroupQueryAttention:
// past_key as present_key, past_value as present_value).
bool bound_output_writable(const Session::Impl& session, const Tensor& bound, int output_id,
                           std::span<const Tensor> feeds, std::span<const int> feed_ids);
// Copies `result` of output `name` into its bound tensor (no copy when it is already there); INVALID_ARGUMENT when
// the dtype or shape differ, EP_FAIL when no provider of the session can write the bound device.
Status copy_into_bound(const Session::Impl& session, const std::string& name, const Tensor& result,
                       const Tensor& bound);

struct BoundRunResult {
  std::vector<Tensor> outputs;  // bound outputs are the bound tensors themselves
  std::vector<bool> written_in_place;
};

}  // namespace nxrt
