// Random feeds for a model input, shared by `nxrt run` (inputs not given as files) and nxrt_allocation_probe.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "core/status.h"
#include "core/tensor.h"
#include "session/session.h"

namespace nxrt::cli {

// A tensor for `input` filled from `rng`: booleans 0/1, integers 0..9, floats uniform in [-1, 1). A symbolic dim
// takes its size from `dims` (by name), else 1. INVALID_ARGUMENT for an unknown rank, NOT_IMPLEMENTED for
// non-tensor inputs and dtypes without random data (strings).
Expected<Tensor> random_input(const ValueDesc& input, const std::map<std::string, int64_t>& dims, std::mt19937_64& rng);

}  // namespace nxrt::cli
