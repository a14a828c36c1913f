// Concrete tensor shapes. Symbolic dims live in graph/type_info.h; a Tensor always has concrete dims.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nxrt {

using Shape = std::vector<int64_t>;

// Product of dims; nullopt when a dim is negative or the product overflows int64.
std::optional<int64_t> checked_numel(std::span<const int64_t> dims);
// Product of dims; caller guarantees the shape was validated.
int64_t shape_numel(std::span<const int64_t> dims);
// "[2,3,4]"
std::string shape_to_string(std::span<const int64_t> dims);
// Row-major strides in elements.
std::vector<int64_t> row_major_strides(std::span<const int64_t> dims);

// Numpy-style multidirectional broadcast of two shapes; nullopt when incompatible.
std::optional<Shape> broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b);

}  // namespace nxrt
