// Values of every ONNX type in the header-only C++ wrapper (included by nxrt.hpp): tensors, sequences of
// tensors, maps and sequences of maps over the C API's NxrtValue, and run_values for models whose inputs or
// outputs are not all tensors.
#ifndef NXRT_NXRT_VALUES_HPP_
#define NXRT_NXRT_VALUES_HPP_

#include <string>
#include <utility>
#include <vector>

#include "nxrt/nxrt.hpp"

namespace nxrt {
namespace cxx {

class Value {
 public:
  Value() = default;
  // Takes ownership of a C handle.
  explicit Value(NxrtValue* handle) noexcept : handle_(handle) {}

  // A tensor value sharing `tensor`'s storage.
  static Value of(const Tensor& tensor) {
    NxrtValue* raw = nullptr;
    detail::check(nxrt_create_tensor_value(tensor.get(), &raw));
    return Value(raw);
  }
  // A sequence of tensors of element type `type`.
  static Value sequence(const std::vector<std::reference_wrapper<const Tensor>>& tensors, NxrtElementType type) {
    std::vector<const NxrtTensor*> raw_tensors;
    for (const Tensor& tensor : tensors) raw_tensors.push_back(tensor.get());
    NxrtValue* raw = nullptr;
    detail::check(nxrt_create_tensor_sequence_value(raw_tensors.data(), raw_tensors.size(), type, &raw));
    return Value(raw);
  }
  // A map from parallel 1-D tensors (sorted by key; a repeated key keeps its last value).
  static Value map(const Tensor& keys, const Tensor& values) {
    NxrtValue* raw = nullptr;
    detail::check(nxrt_create_map_value(keys.get(), values.get(), &raw));
    return Value(raw);
  }
  // A sequence of map values of types map(key_type, value_type).
  static Value map_sequence(const std::vector<std::reference_wrapper<const Value>>& maps, NxrtElementType key_type,
                            NxrtElementType value_type) {
    std::vector<const NxrtValue*> raw_maps;
    for (const Value& map : maps) raw_maps.push_back(map.get());
    NxrtValue* raw = nullptr;
    detail::check(nxrt_create_map_sequence_value(raw_maps.data(), raw_maps.size(), key_type, value_type, &raw));
    return Value(raw);
  }

  explicit operator bool() const noexcept { return handle_ != nullptr; }
  NxrtValue* get() const noexcept { return handle_.get(); }

  NxrtValueKind kind() const {
    NxrtValueKind kind = NXRT_VALUE_NONE;
    detail::check(nxrt_value_get_kind(handle_.get(), &kind));
    return kind;
  }
  // Element type of a tensor, of a sequence's tensors or of a map's values.
  NxrtElementType element_type() const { return types().second; }
  // Key type of a map or of a sequence of maps.
  NxrtElementType key_type() const { return types().first; }
  // Elements of a sequence, entries of a map.
  size_t size() const {
    size_t count = 0;
    detail::check(nxrt_value_get_count(handle_.get(), &count));
    return count;
  }
  Tensor tensor() const {
    NxrtTensor* raw = nullptr;
    detail::check(nxrt_value_get_tensor(handle_.get(), &raw));
    return Tensor(raw);
  }
  Value operator[](size_t index) const {
    NxrtValue* raw = nullptr;
    detail::check(nxrt_value_get_element(handle_.get(), index, &raw));
    return Value(raw);
  }
  // A map's keys (ascending) and values.
  std::pair<Tensor, Tensor> map_entries() const {
    NxrtTensor* keys = nullptr;
    NxrtTensor* values = nullptr;
    detail::check(nxrt_value_get_map(handle_.get(), &keys, &values));
    return {Tensor(keys), Tensor(values)};
  }

 private:
  std::pair<NxrtElementType, NxrtElementType> types() const {
    NxrtElementType key = NXRT_TYPE_UNDEFINED, element = NXRT_TYPE_UNDEFINED;
    detail::check(nxrt_value_get_types(handle_.get(), &key, &element));
    return {key, element};
  }

  detail::Owner<NxrtValue, nxrt_release_value> handle_;
};

// Session::run for inputs and outputs of every kind (output_names empty: every output).
inline std::vector<Value> run_values(const Session& session, const std::vector<std::string>& input_names,
                                     const std::vector<std::reference_wrapper<const Value>>& inputs,
                                     const std::vector<std::string>& output_names = {},
                                     const RunOptions* run_options = nullptr) {
  if (input_names.size() != inputs.size()) {
    std::string message = "run_values: " + std::to_string(input_names.size()) + " input names but " +
                          std::to_string(inputs.size()) + " input values";
    throw Error(NXRT_INVALID_ARGUMENT, "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : " + message, message);
  }
  std::vector<const char*> in_names;
  std::vector<const NxrtValue*> in_values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in_names.push_back(input_names[i].c_str());
    in_values.push_back(inputs[i].get().get());
  }
  std::vector<const char*> out_names;
  for (const std::string& name : output_names) out_names.push_back(name.c_str());
  const size_t out_count = output_names.empty() ? session.output_count() : output_names.size();
  std::vector<NxrtValue*> raw_outputs(out_count, nullptr);
  detail::check(nxrt_session_run_values(session.get(), run_options ? run_options->get() : nullptr, in_names.data(),
                                        in_values.data(), in_names.size(),
                                        output_names.empty() ? nullptr : out_names.data(), out_count,
                                        raw_outputs.data()));
  std::vector<Value> outputs;
  outputs.reserve(out_count);
  for (NxrtValue* raw : raw_outputs) outputs.emplace_back(raw);
  return outputs;
}

}  // namespace cxx
}  // namespace nxrt

#endif  // NXRT_NXRT_VALUES_HPP_
