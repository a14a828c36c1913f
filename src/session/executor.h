// Runs a created session once: validates feeds against the model, executes nodes in topological order,
// allocating each output when its node runs and releasing every value after its last reader.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "session/session_impl.h"

namespace nxrt {

Expected<std::vector<Value>> execute(const Session::Impl& session, std::span<const std::string> input_names,
                                     std::span<const Value> inputs, std::span<const std::string> output_names,
                                     const RunOptions& run_options);

// Feeds `inputs` to the graph inputs in declaration order and returns every output.
Expected<std::vector<Value>> execute_in_order(const Session::Impl& session, std::span<const Value> inputs,
                                              const RunOptions& run_options);

}  // namespace nxrt
