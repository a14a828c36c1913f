// Helpers of the graph tests: import a model written with onnx::write, with or without shape inference, and
// print a value's inferred type.
#pragma once

#include <string>

#include "graph/shape_inference.h"
#include "import/importer.h"
#include "onnx/model_writer.h"

namespace nxrt::graph::testing {

// The model's graph as the importer builds it, before shape inference.
inline Expected<import::ImportedModel> import_only(const std::string& bytes) {
  auto model_bytes = onnx::model_bytes_from_buffer(bytes);
  TRY_ASSIGN(onnx::ModelProto proto, onnx::parse_model(model_bytes->bytes()));
  return import::import_model(proto, model_bytes);
}

// import_only followed by infer_shapes (strict), as a session does.
inline Expected<import::ImportedModel> import_and_infer(const std::string& bytes) {
  TRY_ASSIGN(import::ImportedModel imported, import_only(bytes));
  TRY(infer_shapes(imported.graph));
  return imported;
}

// "tensor(float)[B,8]"; "[?rank]" when the rank is unknown.
inline std::string shape_of(const Graph& graph, const std::string& name) {
  const TypeInfo& type = graph.values[graph.find_value(name)].type;
  return type.to_string() + (type.shape ? symbolic_shape_to_string(*type.shape) : "[?rank]");
}

}  // namespace nxrt::graph::testing
