// Minimal .npy reader/writer for the CLI: format versions 1.0, 2.0 and 3.0, little-endian (or byte-order-free)
// numeric and bool dtypes, C order only. Fortran-ordered arrays, big-endian data and other dtypes are refused.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "core/tensor.h"

namespace nxrt::cli {

// Parses .npy bytes into a tensor owning a copy of the data. INVALID_ARGUMENT for malformed input, naming
// the problem (bad magic, unsupported dtype '>f4', fortran_order, truncated data, ...).
Expected<Tensor> parse_npy(std::string_view bytes);
// Reads and parses `path`; NO_SUCHFILE when it cannot be opened.
Expected<Tensor> read_npy(const std::string& path);

// Serializes a CPU tensor as a version 1.0 .npy (2.0 when the header would not fit); NOT_IMPLEMENTED for
// element types .npy cannot express (string, bfloat16, float8, 4-bit types).
Expected<std::string> encode_npy(const Tensor& tensor);
Status write_npy(const std::string& path, const Tensor& tensor);

}  // namespace nxrt::cli
