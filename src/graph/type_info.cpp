#include "graph/type_info.h"

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
  switch (kind) {
    case Kind::kTensor: return "tensor(" + std::string(data_type_name(elem_type)) + ")";
    case Kind::kSparseTensor: return "sparse_tensor(" + std::string(data_type_name(elem_type)) + ")";
    case Kind::kSequence: return "seq(" + (element ? element->to_string() : std::string("?")) + ")";
    case Kind::kOptional: return "optional(" + (element ? element->to_string() : std::string("?")) + ")";
    case Kind::kMap:
      return "map(" + std::string(data_type_name(map_key_type)) + "," +
             (element ? element->to_string() : std::string("?")) + ")";
    case Kind::kUnknown: break;
  }
  return "unknown";
}

}  // namespace nxrt::graph
