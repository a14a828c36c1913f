// Types of graph values: tensors with symbolic dims, sequences, optionals, maps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/data_type.h"
#include "core/shape.h"

namespace nxrt::graph {

// A dimension: concrete (value >= 0), symbolic (param non-empty) or unknown (neither).
struct Dim {
  int64_t value = -1;
  std::string param;

  static Dim known(int64_t v) { return Dim{v, {}}; }
  static Dim symbolic(std::string name) { return Dim{-1, std::move(name)}; }
  static Dim unknown() { return Dim{}; }
  bool is_known() const { return value >= 0; }
  bool is_symbolic() const { return value < 0 && !param.empty(); }
  bool operator==(const Dim&) const = default;
};

using SymbolicShape = std::vector<Dim>;

std::string dim_to_string(const Dim& dim);                // "3", "B", "?"
std::string symbolic_shape_to_string(const SymbolicShape& shape);  // "[B,3]"
SymbolicShape symbolic_shape_of(const Shape& shape);
// Concrete shape when every dim is known.
std::optional<Shape> concrete_shape_of(const SymbolicShape& shape);

struct TypeInfo {
  enum class Kind { kUnknown, kTensor, kSequence, kOptional, kMap, kSparseTensor };
  Kind kind = Kind::kUnknown;
  DataType elem_type = DataType::kUndefined;   // tensor / sparse tensor element type; map value is `element`
  std::optional<SymbolicShape> shape;          // nullopt: rank unknown
  DataType map_key_type = DataType::kUndefined;
  std::shared_ptr<const TypeInfo> element;     // sequence / optional element, map value

  static TypeInfo tensor(DataType type, std::optional<SymbolicShape> shape = std::nullopt) {
    TypeInfo info;
    info.kind = Kind::kTensor;
    info.elem_type = type;
    info.shape = std::move(shape);
    return info;
  }
  bool is_tensor() const { return kind == Kind::kTensor; }
  // ONNX Runtime's spelling: "tensor(float)", "seq(tensor(int64))", "map(string,tensor(float))", ...
  std::string to_string() const;
};

}  // namespace nxrt::graph
