#include "graph/type_info.h"

#include <string_view>

namespace nxrt::graph {

std::string dim_to_string(const Dim& dim) {
  if (dim.is_known()) return std::to_string(dim.value);
  if (dim.is_symbolic()) return dim.param;
  return "?";
}

std::string symbolic_shape_to_string(const SymbolicShape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ",";
    text += dim_to_string(shape[i]);
  }
  return text + "]";
}

SymbolicShape symbolic_shape_of(const Shape& shape) {
  SymbolicShape result;
  result.reserve(shape.size());
  for (int64_t d : shape) result.push_back(Dim::known(d));
  return result;
}

std::optional<Shape> concrete_shape_of(const SymbolicShape& shape) {
  Shape result;
  result.reserve(shape.size());
  for (const Dim& d : shape) {
    if (!d.is_known()) return std::nullopt;
    result.push_back(d.value);
  }
  return result;
}

std::string TypeInfo::to_string() const {
  // Iterative over the element chain, so a type of any nesting prints without recursion.
  std::string text;
  size_t open_containers = 0;
  const auto finish = [&](std::string_view innermost) {
    return text + std::string(innermost) + std::string(open_containers, ')');
  };
  for (const TypeInfo* type = this; type; type = type->element.get()) {
    switch (type->kind) {
      case Kind::kTensor: return finish("tensor(" + std::string(data_type_name(type->elem_type)) + ")");
      case Kind::kSparseTensor: return finish("sparse_tensor(" + std::string(data_type_name(type->elem_type)) + ")");
      case Kind::kUnknown: return finish("unknown");
      case Kind::kSequence: text += "seq("; break;
      case Kind::kOptional: text += "optional("; break;
      case Kind::kMap: text += "map(" + std::string(data_type_name(type->map_key_type)) + ","; break;
    }
    ++open_containers;
  }
  return finish("?");
}

}  // namespace nxrt::graph
