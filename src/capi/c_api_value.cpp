// C API: string tensors, values of every ONNX type (tensors, sequences, maps, sequences of maps) and
// nxrt_session_run_values.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capi/c_api_internal.h"
#include "core/data_type.h"
#include "core/map_value.h"
#include "core/shape.h"

using nxrt::capi::guard;
using nxrt::capi::copy_names;
using nxrt::capi::make_c_status;

namespace {

NxrtStatus* invalid(const char* function, const std::string& message) {
  return make_c_status(NXRT_INVALID_ARGUMENT, std::string(function) + ": " + message);
}

std::string type_name(nxrt::DataType type) { return std::string(nxrt::data_type_name(type)); }

// The element type `type` names, or nullopt when it names none (undefined included).
std::optional<nxrt::DataType> parse_element_type(NxrtElementType type) {
  std::optional<nxrt::DataType> parsed = nxrt::data_type_from_int(type);
  if (!parsed || *parsed == nxrt::DataType::kUndefined) return std::nullopt;
  return parsed;
}

NxrtStatus* new_value(nxrt::Value value, NxrtValue** out) {
  *out = new NxrtValue{std::move(value)};
  return nullptr;
}

// Views of an input (Identity of a tensor, a sequence or map passed through) would alias caller memory; outputs
// are promised independent of the inputs, as nxrt_session_run promises them.
bool shares_input_buffer(const nxrt::Tensor& tensor, const std::vector<nxrt::Value>& feeds) {
  if (!tensor.buffer()) return false;
  const auto same = [&](const nxrt::Tensor& other) { return other.buffer() == tensor.buffer(); };
  for (const nxrt::Value& feed : feeds) {
    if (feed.is_tensor() && same(feed.tensor())) return true;
    for (const nxrt::Tensor& element : feed.elements()) {
      if (same(element)) return true;
    }
    for (const nxrt::Value::Map& map : feed.maps()) {
      if (same(map.keys) || same(map.values)) return true;
    }
  }
  return false;
}

nxrt::Expected<nxrt::Tensor> independent(const nxrt::Tensor& tensor, const std::vector<nxrt::Value>& feeds) {
  if (!shares_input_buffer(tensor, feeds)) return tensor;
  return nxrt::Tensor::copy_of(tensor);
}

nxrt::Expected<nxrt::Value> independent_value(const nxrt::Value& value, const std::vector<nxrt::Value>& feeds) {
  switch (value.kind()) {
    case nxrt::Value::Kind::kTensor: {
      TRY_ASSIGN(nxrt::Tensor tensor, independent(value.tensor(), feeds));
      return nxrt::Value(std::move(tensor));
    }
    case nxrt::Value::Kind::kSequence: {
      std::vector<nxrt::Tensor> elements;
      for (const nxrt::Tensor& element : value.elements()) {
        TRY_ASSIGN(nxrt::Tensor copy, independent(element, feeds));
        elements.push_back(std::move(copy));
      }
      return nxrt::Value::sequence(value.elem_type(), std::move(elements));
    }
    case nxrt::Value::Kind::kMap:
    case nxrt::Value::Kind::kMapSequence: {
      std::vector<nxrt::Value::Map> maps;
      for (const nxrt::Value::Map& map : value.maps()) {
        TRY_ASSIGN(nxrt::Tensor keys, independent(map.keys, feeds));
        TRY_ASSIGN(nxrt::Tensor values, independent(map.values, feeds));
        maps.push_back({std::move(keys), std::move(values)});
      }
      if (value.is_map()) return nxrt::Value::map(std::move(maps.front()));
      return nxrt::Value::map_sequence(value.map_key_type(), value.elem_type(), std::move(maps));
    }
    case nxrt::Value::Kind::kNone:
    case nxrt::Value::Kind::kUnset: break;
  }
  return value;
}

NxrtValueKind kind_of(const nxrt::Value& value) {
  switch (value.kind()) {
    case nxrt::Value::Kind::kTensor: return NXRT_VALUE_TENSOR;
    case nxrt::Value::Kind::kSequence: return NXRT_VALUE_TENSOR_SEQUENCE;
    case nxrt::Value::Kind::kMap: return NXRT_VALUE_MAP;
    case nxrt::Value::Kind::kMapSequence: return NXRT_VALUE_MAP_SEQUENCE;
    case nxrt::Value::Kind::kNone:
    case nxrt::Value::Kind::kUnset: break;
  }
  return NXRT_VALUE_NONE;
}

NxrtStatus* run_values(const NxrtSession* session, const NxrtRunOptions* run_options, const char* const* input_names,
                       const NxrtValue* const* inputs, size_t input_count, const char* const* output_names,
                       size_t output_count, NxrtValue** outputs) {
  const char* function = "nxrt_session_run_values";
  if (NxrtStatus* error = nxrt::capi::check_run_arguments(function, session, input_names, inputs, input_count,
                                                          output_names, output_count)) {
    return error;
  }
  std::vector<nxrt::Value> feeds;
  feeds.reserve(input_count);
  for (size_t i = 0; i < input_count; ++i) feeds.push_back(inputs[i]->value);
  const std::vector<std::string> fetch_names =
      output_names != nullptr ? copy_names(output_names, output_count) : std::vector<std::string>{};
  nxrt::Expected<std::vector<nxrt::Value>> results = session->session->run_values(
      copy_names(input_names, input_count), feeds, fetch_names, nxrt::capi::engine_run_options(run_options));
  if (!results) return nxrt::capi::to_c_status(results.status());
  if (results->size() != output_count) {
    return make_c_status(NXRT_FAIL, std::string(function) + ": the session returned " +
                                        std::to_string(results->size()) + " outputs, expected " +
                                        std::to_string(output_count));
  }
  std::vector<nxrt::Value> values;
  values.reserve(output_count);
  for (const nxrt::Value& result : *results) {
    nxrt::Expected<nxrt::Value> value = independent_value(result, feeds);
    if (!value) return nxrt::capi::to_c_status(value.status());
    values.push_back(std::move(value).value());
  }
  nxrt::capi::hand_out(values, outputs);
  return nullptr;
}

}  // namespace

extern "C" {

NxrtStatus* nxrt_create_string_tensor(const int64_t* dims, size_t rank, const char* const* strings,
                                      const size_t* lengths, NxrtTensor** out) {
  NXRT_CHECK_ARG(out);
  *out = nullptr;
  if (rank > 0) NXRT_CHECK_ARG(dims);
  return guard([&]() -> NxrtStatus* {
    nxrt::Shape shape(dims, dims + rank);
    if (!nxrt::checked_numel(shape)) {
      return invalid(__func__, "invalid shape " + nxrt::shape_to_string(shape) +
                                   " (dims must be >= 0 and the element count must fit int64)");
    }
    const int64_t count = nxrt::shape_numel(shape);
    if (count > 0 && strings == nullptr) return nxrt::capi::null_argument(__func__, "strings");
    for (int64_t i = 0; i < count; ++i) {
      if (strings[i] == nullptr) return invalid(__func__, "strings[" + std::to_string(i) + "] is NULL");
    }
    nxrt::Expected<nxrt::Tensor> tensor = nxrt::Tensor::allocate(nxrt::DataType::kString, std::move(shape));
    if (!tensor) return nxrt::capi::to_c_status(tensor.status());
    std::string* elements = tensor->data<std::string>();
    for (int64_t i = 0; i < count; ++i) {
      elements[i] = lengths != nullptr ? std::string(strings[i], lengths[i]) : std::string(strings[i]);
    }
    *out = new NxrtTensor{std::move(tensor).value()};
    return nullptr;
  });
}

NxrtStatus* nxrt_tensor_get_string(const NxrtTensor* tensor, int64_t index, const char** data, size_t* length) {
  NXRT_CHECK_ARG(tensor);
  NXRT_CHECK_ARG(data);
  NXRT_CHECK_ARG(length);
  return guard([&]() -> NxrtStatus* {
    const nxrt::Tensor& t = tensor->tensor;
    if (t.dtype() != nxrt::DataType::kString) return invalid(__func__, "a " + type_name(t.dtype()) + " tensor");
    if (index < 0 || index >= t.numel()) {
      return invalid(__func__, "index " + std::to_string(index) + " is outside the tensor's " +
                                   std::to_string(t.numel()) + " elements");
    }
    const std::string& element = t.data<std::string>()[index];
    *data = element.c_str();
    *length = element.size();
    return nullptr;
  });
}

NxrtStatus* nxrt_create_tensor_value(const NxrtTensor* tensor, NxrtValue** out) {
  NXRT_CHECK_ARG(tensor);
  NXRT_CHECK_ARG(out);
  return guard([&] { return new_value(nxrt::Value(tensor->tensor), out); });
}

NxrtStatus* nxrt_create_tensor_sequence_value(const NxrtTensor* const* tensors, size_t count,
                                              NxrtElementType element_type, NxrtValue** out) {
  NXRT_CHECK_ARG(out);
  *out = nullptr;
  if (count > 0) NXRT_CHECK_ARG(tensors);
  return guard([&]() -> NxrtStatus* {
    const std::optional<nxrt::DataType> type = parse_element_type(element_type);
    if (!type) return invalid(__func__, "invalid element type " + std::to_string(static_cast<int>(element_type)));
    std::vector<nxrt::Tensor> elements;
    elements.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      if (tensors[i] == nullptr) return invalid(__func__, "tensors[" + std::to_string(i) + "] is NULL");
      if (tensors[i]->tensor.dtype() != *type) {
        return invalid(__func__, "tensors[" + std::to_string(i) + "] is " + type_name(tensors[i]->tensor.dtype()) +
                                     ", the sequence holds " + type_name(*type));
      }
      elements.push_back(tensors[i]->tensor);
    }
    return new_value(nxrt::Value::sequence(*type, std::move(elements)), out);
  });
}

NxrtStatus* nxrt_create_map_value(const NxrtTensor* keys, const NxrtTensor* values, NxrtValue** out) {
  NXRT_CHECK_ARG(keys);
  NXRT_CHECK_ARG(values);
  NXRT_CHECK_ARG(out);
  *out = nullptr;
  return guard([&]() -> NxrtStatus* {
    nxrt::Expected<nxrt::Value::Map> map = nxrt::sorted_map(keys->tensor, values->tensor);
    if (!map) return invalid(__func__, map.status().message());
    return new_value(nxrt::Value::map(std::move(map).value()), out);
  });
}

NxrtStatus* nxrt_create_map_sequence_value(const NxrtValue* const* maps, size_t count, NxrtElementType key_type,
                                           NxrtElementType value_type, NxrtValue** out) {
  NXRT_CHECK_ARG(out);
  *out = nullptr;
  if (count > 0) NXRT_CHECK_ARG(maps);
  return guard([&]() -> NxrtStatus* {
    const std::optional<nxrt::DataType> key = parse_element_type(key_type);
    const std::optional<nxrt::DataType> value = parse_element_type(value_type);
    if (!key || !value || !nxrt::is_map_key_type(*key) || !nxrt::is_map_value_type(*value)) {
      return invalid(__func__, "map(" + std::to_string(static_cast<int>(key_type)) + ", " +
                                   std::to_string(static_cast<int>(value_type)) +
                                   ") is not a map type (keys int64 or string; values float, double, int64 or string)");
    }
    std::vector<nxrt::Value::Map> entries;
    entries.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      if (maps[i] == nullptr || !maps[i]->value.is_map()) {
        return invalid(__func__, "maps[" + std::to_string(i) + "] is not a map value");
      }
      const nxrt::Value& map = maps[i]->value;
      if (map.map_key_type() != *key || map.elem_type() != *value) {
        return invalid(__func__, "maps[" + std::to_string(i) + "] is " +
                                     nxrt::map_type_string(map.map_key_type(), map.elem_type()) +
                                     ", the sequence holds " + nxrt::map_type_string(*key, *value));
      }
      entries.push_back(map.map());
    }
    return new_value(nxrt::Value::map_sequence(*key, *value, std::move(entries)), out);
  });
}

void nxrt_release_value(NxrtValue* value) { delete value; }

NxrtStatus* nxrt_value_get_kind(const NxrtValue* value, NxrtValueKind* out) {
  NXRT_CHECK_ARG(value);
  NXRT_CHECK_ARG(out);
  *out = kind_of(value->value);
  return nullptr;
}

NxrtStatus* nxrt_value_get_types(const NxrtValue* value, NxrtElementType* key_type, NxrtElementType* element_type) {
  NXRT_CHECK_ARG(value);
  NXRT_CHECK_ARG(element_type);
  *element_type = static_cast<NxrtElementType>(value->value.elem_type());
  if (key_type != nullptr) *key_type = static_cast<NxrtElementType>(value->value.map_key_type());
  return nullptr;
}

NxrtStatus* nxrt_value_get_tensor(const NxrtValue* value, NxrtTensor** out) {
  NXRT_CHECK_ARG(value);
  NXRT_CHECK_ARG(out);
  *out = nullptr;
  return guard([&]() -> NxrtStatus* {
    if (!value->value.is_tensor()) return invalid(__func__, "the value is not a tensor");
    *out = new NxrtTensor{value->value.tensor()};
    return nullptr;
  });
}

NxrtStatus* nxrt_value_get_count(const NxrtValue* value, size_t* out) {
  NXRT_CHECK_ARG(value);
  NXRT_CHECK_ARG(out);
  const nxrt::Value& v = value->value;
  switch (v.kind()) {
    case nxrt::Value::Kind::kTensor: *out = 1; break;
    case nxrt::Value::Kind::kSequence: *out = v.elements().size(); break;
    case nxrt::Value::Kind::kMap: *out = static_cast<size_t>(v.map().keys.numel()); break;
    case nxrt::Value::Kind::kMapSequence: *out = v.maps().size(); break;
    case nxrt::Value::Kind::kNone:
    case nxrt::Value::Kind::kUnset: *out = 0; break;
  }
  return nullptr;
}

NxrtStatus* nxrt_value_get_element(const NxrtValue* value, size_t index, NxrtValue** out) {
  NXRT_CHECK_ARG(value);
  NXRT_CHECK_ARG(out);
  *out = nullptr;
  return guard([&]() -> NxrtStatus* {
    const nxrt::Value& v = value->value;
    const size_t count = v.is_sequence() ? v.elements().size() : v.is_map_sequence() ? v.maps().size() : 0;
    if (!v.is_sequence() && !v.is_map_sequence()) return invalid(__func__, "the value is not a sequence");
    if (index >= count) {
      return invalid(__func__, "index " + std::to_string(index) + " is outside the sequence's " +
                                   std::to_string(count) + " elements");
    }
    return new_value(v.is_sequence() ? nxrt::Value(v.elements()[index]) : nxrt::Value::map(v.maps()[index]), out);
  });
}

NxrtStatus* nxrt_value_get_map(const NxrtValue* value, NxrtTensor** keys, NxrtTensor** values) {
  NXRT_CHECK_ARG(value);
  NXRT_CHECK_ARG(keys);
  NXRT_CHECK_ARG(values);
  *keys = nullptr;
  *values = nullptr;
  return guard([&]() -> NxrtStatus* {
    if (!value->value.is_map()) return invalid(__func__, "the value is not a map");
    auto key_tensor = std::make_unique<NxrtTensor>(NxrtTensor{value->value.map().keys});
    *values = new NxrtTensor{value->value.map().values};
    *keys = key_tensor.release();
    return nullptr;
  });
}

NxrtStatus* nxrt_session_run_values(const NxrtSession* session, const NxrtRunOptions* run_options,
                                    const char* const* input_names, const NxrtValue* const* inputs,
                                    size_t input_count, const char* const* output_names, size_t output_count,
                                    NxrtValue** outputs) {
  NXRT_CHECK_ARG(session);
  if (output_count > 0) NXRT_CHECK_ARG(outputs);
  for (size_t i = 0; i < output_count; ++i) outputs[i] = nullptr;
  if (input_count > 0) {
    NXRT_CHECK_ARG(input_names);
    NXRT_CHECK_ARG(inputs);
  }
  return guard([&] {
    return run_values(session, run_options, input_names, inputs, input_count, output_names, output_count, outputs);
  });
}

}  // extern "C"
