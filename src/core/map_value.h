// Building and reading map values (Value::Map: keys ascending and unique, values beside them; see core/value.h).
#pragma once

#include <cstdint>
#include <string>

#include "core/dispatch.h"
#include "core/status.h"
#include "core/value.h"

namespace nxrt {

// Key types ONNX allows in map(K, V) that nxrt keeps (int64, string), and value types (float, double, int64, string).
bool is_map_key_type(DataType type);
bool is_map_value_type(DataType type);
using MapValueTypes = TypeList<float, double, int64_t, std::string>;

// The map of parallel 1-D host tensors `keys` and `values` (same length): sorted by key, a repeated key keeping its
// last value, as inserting the pairs in order into an ordered map does. INVALID_ARGUMENT for other types or shapes.
Expected<Value::Map> sorted_map(const Tensor& keys, const Tensor& values);

// "map(int64,tensor(float))": ONNX Runtime's spelling of a map type.
std::string map_type_string(DataType key_type, DataType value_type);

}  // namespace nxrt
