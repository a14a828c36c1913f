// Runs a created session once: validates feeds against the model, executes nodes in topological order,
// allocating each output from the session arena when its node runs and releasing every value after its last reader.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "session/session_impl.h"

namespace nxrt {

// Caller buffers for graph values (IO binding), indexed by value id of the main graph (null: allocate). The
// tensor kernel producing such a value writes into the buffer when the dtype and shape it computes match;
// otherwise it allocates as usual and the caller copies. Empty: no bound buffers.
using BoundBuffers = std::span<const Tensor* const>;

// `output_devices[i]`: where the i-th requested output is returned (empty: every output on the host).
Expected<std::vector<Value>> execute(const Session::Impl& session, std::span<const std::string> input_names,
                                     std::span<const Value> inputs, std::span<const std::string> output_names,
                                     const RunOptions& run_options, BoundBuffers bound = {},
                                     std::span<const Device> output_devices = {});

// A copy of `tensor` on `target` (the host or the device of one of the session's providers), made by the provider
// on the device side; device to device goes through the host. INVALID_ARGUMENT for a device the session lacks.
Expected<Tensor> copy_to_device(const Session::Impl& session, const Tensor& tensor, Device target);
// As copy_to_device, into the existing `target` (same dtype and element count).
Status copy_into(const Session::Impl& session, const Tensor& source, const Tensor& target);

// Feeds `inputs` to the graph inputs in declaration order and returns every output.
Expected<std::vector<Value>> execute_in_order(const Session::Impl& session, std::span<const Value> inputs,
                                              const RunOptions& run_options);

}  // namespace nxrt
