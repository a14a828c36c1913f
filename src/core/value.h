// A runtime value of a graph: a tensor, a sequence of tensors, or an optional without an element.
// An optional that holds an element is represented by the element itself, as ONNX Runtime does.
// Values are immutable once produced: a sequence op builds a new element list (sharing the tensors' buffers).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace nxrt {

class Value {
 public:
  enum class Kind : uint8_t { kUnset, kTensor, kSequence, kNone };

  Value() = default;
  Value(Tensor tensor) : kind_(tensor.is_valid() ? Kind::kTensor : Kind::kUnset), tensor_(std::move(tensor)) {}

  static Value sequence(DataType elem_type, std::vector<Tensor> elements) {
    Value value;
    value.kind_ = Kind::kSequence;
    value.elem_type_ = elem_type;
    value.elements_ = std::make_shared<const std::vector<Tensor>>(std::move(elements));
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

  const Tensor& tensor() const { return tensor_; }
  Tensor& tensor() { return tensor_; }
  // Element type of a sequence (also of an empty one), or of the element an empty optional would hold.
  DataType elem_type() const { return kind_ == Kind::kTensor ? tensor_.dtype() : elem_type_; }
  const std::vector<Tensor>& elements() const {
    static const std::vector<Tensor> kEmpty;
    return elements_ ? *elements_ : kEmpty;
  }

  void reset() { *this = Value(); }

 private:
  Kind kind_ = Kind::kUnset;
  Tensor tensor_;
  DataType elem_type_ = DataType::kUndefined;
  bool none_of_sequence_ = false;
  std::shared_ptr<const std::vector<Tensor>> elements_;
};

}  // namespace nxrt
