// A runtime value of a graph: a tensor, a sequence of tensors, an optional without an element, a map, or a sequence
// of maps. An optional that holds an element is represented by the element itself, as ONNX Runtime does.
// Values are immutable once produced: a sequence op builds a new element list (sharing the tensors' buffers).
//
// A map (ONNX map(K, V), K int64 or string, V float, double, int64 or string) is two 1-D host tensors of equal
// length, its keys and its values, with the keys ascending and unique (as ONNX Runtime's std::map iterates them):
// whoever builds one (a kernel, a feed) sorts it and keeps the last value of a repeated key.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace nxrt {

class Value {
 public:
  enum class Kind : uint8_t { kUnset, kTensor, kSequence, kNone, kMap, kMapSequence };

  struct Map {
    Tensor keys;
    Tensor values;
  };

  Value() = default;
  Value(Tensor tensor) : kind_(tensor.is_valid() ? Kind::kTensor : Kind::kUnset), tensor_(std::move(tensor)) {}

  static Value sequence(DataType elem_type, std::vector<Tensor> elements) {
    Value value;
    value.kind_ = Kind::kSequence;
    value.elem_type_ = elem_type;
    value.elements_ = std::make_shared<const std::vector<Tensor>>(std::move(elements));
    return value;
  }
  // `map.keys` and `map.values` as the class comment requires (core/map_value.h's sorted_map builds them).
  static Value map(Map map) {
    Value value;
    value.kind_ = Kind::kMap;
    value.key_type_ = map.keys.dtype();
    value.elem_type_ = map.values.dtype();
    value.maps_ = std::make_shared<const std::vector<Map>>(std::vector<Map>{std::move(map)});
    return value;
  }
  // A sequence of maps, each of keys `key_type` and values `value_type` (also for an empty sequence).
  static Value map_sequence(DataType key_type, DataType value_type, std::vector<Map> maps) {
    Value value;
    value.kind_ = Kind::kMapSequence;
    value.key_type_ = key_type;
    value.elem_type_ = value_type;
    value.maps_ = std::make_shared<const std::vector<Map>>(std::move(maps));
    return value;
  }
  // An optional without an element; `elem_type` is the tensor (or sequence element) type when known.
  static Value none(DataType elem_type = DataType::kUndefined, bool of_sequence = false) {
    Value value;
    value.kind_ = Kind::kNone;
    value.elem_type_ = elem_type;
    value.none_of_sequence_ = of_sequence;
    return value;
  }

  Kind kind() const { return kind_; }
  bool is_set() const { return kind_ != Kind::kUnset; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool none_of_sequence() const { return none_of_sequence_; }
  bool is_map() const { return kind_ == Kind::kMap; }
  bool is_map_sequence() const { return kind_ == Kind::kMapSequence; }

  const Tensor& tensor() const { return tensor_; }
  Tensor& tensor() { return tensor_; }
  // Element type of a sequence (also of an empty one), of the element an empty optional would hold, or of a map's
  // values.
  DataType elem_type() const { return kind_ == Kind::kTensor ? tensor_.dtype() : elem_type_; }
  DataType map_key_type() const { return key_type_; }
  // The map of a kMap value; the maps of a kMapSequence one.
  const Map& map() const { return maps().front(); }
  const std::vector<Map>& maps() const {
    static const std::vector<Map> kEmpty;
    return maps_ ? *maps_ : kEmpty;
  }
  const std::vector<Tensor>& elements() const {
    static const std::vector<Tensor> kEmpty;
    return elements_ ? *elements_ : kEmpty;
  }

  void reset() { *this = Value(); }

 private:
  Kind kind_ = Kind::kUnset;
  Tensor tensor_;
  DataType elem_type_ = DataType::kUndefined;
  DataType key_type_ = DataType::kUndefined;
  bool none_of_sequence_ = false;
  std::shared_ptr<const std::vector<Tensor>> elements_;
  std::shared_ptr<const std::vector<Map>> maps_;
};

}  // namespace nxrt
