#include "core/map_value.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/dispatch.h"

namespace nxrt {

bool is_map_key_type(DataType type) { return type == DataType::kInt64 || type == DataType::kString; }

bool is_map_value_type(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat64 || type == DataType::kInt64 ||
         type == DataType::kString;
}

std::string map_type_string(DataType key_type, DataType value_type) {
  return "map(" + std::string(data_type_name(key_type)) + ",tensor(" + std::string(data_type_name(value_type)) + "))";
}

namespace {

// Positions [0, n) ordered by key, each repeated key's last position only.
template <class K>
std::vector<int64_t> last_of_each_key(const K* keys, int64_t n) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
  std::vector<int64_t> kept;
  kept.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + 1 < order.size() && keys[order[i]] == keys[order[i + 1]]) continue;  // a later pair overrides it
    kept.push_back(order[i]);
  }
  return kept;
}

// `source` (a map's keys or values) at `positions`.
Expected<Tensor> gather(const Tensor& source, const std::vector<int64_t>& positions) {
  TRY_ASSIGN(Tensor out, Tensor::allocate(source.dtype(), Shape{static_cast<int64_t>(positions.size())}));
  visit_dtype<MapValueTypes>(source.dtype(), [&]<class T>() {
    for (size_t i = 0; i < positions.size(); ++i) out.data<T>()[i] = source.data<T>()[positions[i]];
  });
  return out;
}

}  // namespace

Expected<Value::Map> sorted_map(const Tensor& keys, const Tensor& values) {
  if (!is_map_key_type(keys.dtype()) || !is_map_value_type(values.dtype())) {
    return make_error(StatusCode::kInvalidArgument, "a map has int64 or string keys and float, double, int64 or ",
                      "string values, not ", data_type_name(keys.dtype()), " -> ", data_type_name(values.dtype()));
  }
  if (keys.rank() != 1 || values.rank() != 1 || keys.numel() != values.numel()) {
    return make_error(StatusCode::kInvalidArgument, "a map needs as many keys as values (", keys.numel(), " keys, ",
                      values.numel(), " values)");
  }
  std::vector<int64_t> kept;
  visit_dtype<TypeList<int64_t, std::string>>(
      keys.dtype(), [&]<class K>() { kept = last_of_each_key(keys.data<K>(), keys.numel()); });
  Value::Map map;
  TRY_ASSIGN(map.keys, gather(keys, kept));
  TRY_ASSIGN(map.values, gather(values, kept));
  return map;
}

}  // namespace nxrt
