// ai.onnx.ml operators over map values (core/value.h, core/map_value.h): ZipMap (rows of class scores -> a sequence
// of maps from class label to score), DictVectorizer (a map -> its values at a vocabulary's keys) and CastMap (a map
// from int64 -> its values cast, densely in key order or sparsely at their keys). Value kernels: maps are not
// tensors, so the session calls run_values. Where the specification is silent they follow onnxruntime's CPU kernels:
// ZipMap takes [N, C] or [C] (one row); DictVectorizer and CastMap give [1, n]; CastMap pads a sparse output with 0
// or the string "0.f", writes floats as strings in printf's %f form and reads strings as strtof / strtoll do.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/map_value.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/ml/ml_common.h"

namespace nxrt::cpu {

namespace {

using ml::kMlDomain;
using ml::vector_tensor;

Expected<const Value::Map*> map_input(std::span<const Value* const> inputs, const std::string& description) {
  if (inputs.empty() || inputs[0] == nullptr || !inputs[0]->is_map()) {
    return make_error(StatusCode::kInvalidArgument, description, ": input X must be a map");
  }
  return &inputs[0]->map();
}

// Class labels in the order of X's columns; the map keys are `keys` (sorted, unique), taking column columns[i].
class ZipMapKernel final : public ValueKernel {
 public:
  ZipMapKernel(std::string description, int64_t labels, Tensor keys, std::vector<int64_t> columns)
      : description_(std::move(description)), labels_(labels), keys_(std::move(keys)), columns_(std::move(columns)) {}

  static Expected<std::unique_ptr<Kernel>> create(const KernelInfo& info) {
    const graph::Node& node = info.node;
    const graph::Attribute* strings = node.find_attribute("classlabels_strings");
    const graph::Attribute* ints = node.find_attribute("classlabels_int64s");
    const bool use_strings = strings != nullptr && !strings->strings.empty();
    const bool use_ints = ints != nullptr && !ints->ints.empty();
    if (use_strings == use_ints) {
      return make_error(StatusCode::kInvalidGraph, node.describe(),
                        ": exactly one of classlabels_strings and classlabels_int64s must be given");
    }
    TRY_ASSIGN(const Tensor labels, use_strings ? vector_tensor(strings->strings) : vector_tensor(ints->ints));
    const int64_t count = labels.numel();
    std::vector<int64_t> column_of_label(static_cast<size_t>(count));
    std::iota(column_of_label.begin(), column_of_label.end(), int64_t{0});
    TRY_ASSIGN(const Tensor positions, vector_tensor(column_of_label));
    // The map of label -> column says which column each sorted, unique key reads (a repeated label: its last).
    TRY_ASSIGN(Value::Map order, sorted_map(labels, positions));
    std::vector<int64_t> columns(order.values.data<int64_t>(), order.values.data<int64_t>() + order.values.numel());
    return std::unique_ptr<Kernel>(
        std::make_unique<ZipMapKernel>(node.describe(), count, std::move(order.keys), std::move(columns)));
  }

  Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext&) const override {
    if (inputs.empty() || inputs[0] == nullptr || !inputs[0]->is_tensor() ||
        inputs[0]->tensor().dtype() != DataType::kFloat32) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X must be a float tensor");
    }
    const Tensor& x = inputs[0]->tensor();
    if (x.rank() < 1 || x.rank() > 2) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X shape ", shape_to_string(x.shape()),
                        " must be [N, C] or [C]");
    }
    const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1;
    const int64_t width = x.shape().back();
    if (width != labels_) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X has ", width, " columns but the node has ",
                        labels_, " class labels");
    }
    // One buffer holds every row's values in key order; each map's values are a view of its row of it, and every
    // map shares the one key tensor.
    const int64_t count = static_cast<int64_t>(columns_.size());
    TRY_ASSIGN(Tensor all, Tensor::allocate(DataType::kFloat32, Shape{rows * count}));
    const float* data = x.data<float>();
    float* out = all.data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < count; ++i) out[r * count + i] = data[r * width + columns_[static_cast<size_t>(i)]];
    }
    std::vector<Value::Map> maps;
    maps.reserve(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      maps.push_back(Value::Map{keys_, Tensor::in_buffer(all.buffer(), static_cast<size_t>(r * count) * sizeof(float),
                                                         DataType::kFloat32, Shape{count})});
    }
    outputs[0] = Value::map_sequence(keys_.dtype(), DataType::kFloat32, std::move(maps));
    return Status::ok();
  }

 private:
  std::string description_;
  int64_t labels_ = 0;
  Tensor keys_;
  std::vector<int64_t> columns_;
};

// Position of `key` among the sorted `keys`, or -1.
template <class K>
int64_t find_key(const Tensor& keys, const K& key) {
  const K* begin = keys.data<K>();
  const K* end = begin + keys.numel();
  const K* at = std::lower_bound(begin, end, key);
  return at != end && *at == key ? at - begin : -1;
}

class DictVectorizerKernel final : public ValueKernel {
 public:
  DictVectorizerKernel(std::string description, Tensor vocabulary)
      : description_(std::move(description)), vocabulary_(std::move(vocabulary)) {}

  static Expected<std::unique_ptr<Kernel>> create(const KernelInfo& info) {
    const graph::Node& node = info.node;
    const graph::Attribute* strings = node.find_attribute("string_vocabulary");
    const graph::Attribute* ints = node.find_attribute("int64_vocabulary");
    if ((strings != nullptr) == (ints != nullptr)) {
      return make_error(StatusCode::kInvalidGraph, node.describe(),
                        ": exactly one of string_vocabulary and int64_vocabulary must be given");
    }
    // Repeated entries are allowed: each output column reads its key.
    TRY_ASSIGN(Tensor vocabulary, strings != nullptr ? vector_tensor(strings->strings) : vector_tensor(ints->ints));
    return std::unique_ptr<Kernel>(std::make_unique<DictVectorizerKernel>(node.describe(), std::move(vocabulary)));
  }

  Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext&) const override {
    TRY_ASSIGN(const Value::Map* map, map_input(inputs, description_));
    if (map->keys.dtype() != vocabulary_.dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": the map's keys are ",
                        data_type_name(map->keys.dtype()), " but the vocabulary is ",
                        data_type_name(vocabulary_.dtype()));
    }
    const int64_t count = vocabulary_.numel();
    TRY_ASSIGN(Tensor y, Tensor::allocate(map->values.dtype(), Shape{1, count}));
    visit_dtype<MapValueTypes>(map->values.dtype(), [&]<class V>() {
      for (int64_t i = 0; i < count; ++i) {
        const int64_t at = vocabulary_.dtype() == DataType::kString
                               ? find_key(map->keys, vocabulary_.data<std::string>()[i])
                               : find_key(map->keys, vocabulary_.data<int64_t>()[i]);
        y.data<V>()[i] = at >= 0 ? map->values.data<V>()[at] : V{};  // keys outside the map read as zero
      }
    });
    outputs[0] = Value(std::move(y));
    return Status::ok();
  }

 private:
  std::string description_;
  Tensor vocabulary_;
};

enum class CastTo { kFloat, kString, kInt64 };

// One value of the map, cast; an error names the value that cannot be read or represented.
template <class To, class From>
Expected<To> cast_map_value(const From& from, const std::string& description) {
  if constexpr (std::is_same_v<To, std::string>) {
    if constexpr (std::is_same_v<From, std::string>) {
      return from;
    } else {
      char text[400];
      std::snprintf(text, sizeof text, "%f", static_cast<double>(from));
      return std::string(text);
    }
  } else if constexpr (std::is_same_v<From, std::string>) {
    const char* begin = from.c_str();
    char* end = nullptr;
    errno = 0;
    To value{};
    if constexpr (std::is_same_v<To, float>) {
      value = std::strtof(begin, &end);
    } else {
      value = static_cast<To>(std::strtoll(begin, &end, 10));
    }
    if (end == begin || errno == ERANGE) {
      return make_error(StatusCode::kInvalidArgument, description, ": map value '", from, "' is not a ",
                        std::is_same_v<To, float> ? "float" : "int64");
    }
    return value;
  } else if constexpr (std::is_same_v<To, int64_t>) {
    const double d = static_cast<double>(from);
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
      return make_error(StatusCode::kInvalidArgument, description, ": map value ", d, " does not fit int64");
    }
    return static_cast<int64_t>(d);
  } else {
    return static_cast<To>(from);
  }
}

class CastMapKernel final : public ValueKernel {
 public:
  CastMapKernel(std::string description, CastTo to, bool dense, int64_t max_map)
      : description_(std::move(description)), to_(to), dense_(dense), max_map_(max_map) {}

  static Expected<std::unique_ptr<Kernel>> create(const KernelInfo& info) {
    const graph::Node& node = info.node;
    TRY_ASSIGN(const std::string cast_to, node.attr_string("cast_to", "TO_FLOAT"));
    TRY_ASSIGN(const std::string map_form, node.attr_string("map_form", "DENSE"));
    TRY_ASSIGN(const int64_t max_map, node.attr_int("max_map", 1));
    CastTo to = CastTo::kFloat;
    if (cast_to == "TO_STRING") {
      to = CastTo::kString;
    } else if (cast_to == "TO_INT64") {
      to = CastTo::kInt64;
    } else if (cast_to != "TO_FLOAT") {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute cast_to = '", cast_to,
                        "' is not TO_FLOAT, TO_STRING or TO_INT64");
    }
    if (map_form != "DENSE" && map_form != "SPARSE") {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute map_form = '", map_form,
                        "' is not DENSE or SPARSE");
    }
    if (map_form == "SPARSE" && (max_map < 0 || max_map > (int64_t{1} << 31))) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute max_map = ", max_map,
                        " must lie in [0, 2^31]");
    }
    return std::unique_ptr<Kernel>(std::make_unique<CastMapKernel>(node.describe(), to, map_form == "DENSE", max_map));
  }

  Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext&) const override {
    TRY_ASSIGN(const Value::Map* map, map_input(inputs, description_));
    if (map->keys.dtype() != DataType::kInt64) {
      return make_error(StatusCode::kInvalidArgument, description_, ": the map's keys must be int64, not ",
                        data_type_name(map->keys.dtype()));
    }
    const DataType out_type = to_ == CastTo::kFloat    ? DataType::kFloat32
                              : to_ == CastTo::kInt64 ? DataType::kInt64
                                                      : DataType::kString;
    TRY_ASSIGN(Tensor y, Tensor::allocate(out_type, Shape{1, dense_ ? map->keys.numel() : max_map_}));
    Status status = Status::ok();
    visit_dtype<TypeList<float, int64_t, std::string>>(out_type, [&]<class To>() {
      visit_dtype<MapValueTypes>(map->values.dtype(), [&]<class From>() { status = fill<To, From>(*map, y); });
    });
    if (!status.is_ok()) return status;
    outputs[0] = Value(std::move(y));
    return Status::ok();
  }

 private:
  template <class To, class From>
  Status fill(const Value::Map& map, Tensor& y) const {
    const int64_t* keys = map.keys.data<int64_t>();
    const From* values = map.values.data<From>();
    To* out = y.data<To>();
    const int64_t n = map.keys.numel();
    if (dense_) {
      for (int64_t i = 0; i < n; ++i) {
        TRY_ASSIGN(out[i], (cast_map_value<To, From>(values[i], description_)));
      }
      return Status::ok();
    }
    if (n > 0 && keys[0] < 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": a SPARSE map's keys must be >= 0, found ",
                        keys[0]);
    }
    int64_t next = 0;  // keys are ascending: walk them beside the output positions; keys >= max_map are left out
    for (int64_t i = 0; i < max_map_; ++i) {
      if (next < n && keys[next] == i) {
        TRY_ASSIGN(out[i], (cast_map_value<To, From>(values[next], description_)));
        ++next;
      } else if constexpr (std::is_same_v<To, std::string>) {
        out[i] = "0.f";
      } else {
        out[i] = To{0};
      }
    }
    return Status::ok();
  }

  std::string description_;
  CastTo to_ = CastTo::kFloat;
  bool dense_ = true;
  int64_t max_map_ = 1;
};

constexpr KernelDef kMapKernels[] = {
    {"ZipMap", kMlDomain, 1, kLatestOpset, kAnyType, -1, ZipMapKernel::create},
    {"DictVectorizer", kMlDomain, 1, kLatestOpset, kAnyType, -1, DictVectorizerKernel::create},
    {"CastMap", kMlDomain, 1, kLatestOpset, kAnyType, -1, CastMapKernel::create},
};

}  // namespace

std::span<const KernelDef> ml_map_kernels() { return kMapKernels; }

}  // namespace nxrt::cpu
