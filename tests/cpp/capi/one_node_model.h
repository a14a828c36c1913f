// A one-node model for the C API and C++ wrapper value tests: node `op_type` (in `domain`) from graph input X to
// graph output Y, imports ai.onnx 17 and ai.onnx.ml 1.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "onnx/model_writer.h"

namespace nxrt::capi_test {

inline std::string one_node_model(const std::string& op_type, std::vector<onnx::write::Attribute> attributes,
                                  onnx::write::ValueInfo input, onnx::write::ValueInfo output,
                                  const std::string& domain) {
  namespace w = onnx::write;
  w::Node node;
  node.op_type = op_type;
  node.inputs = {"X"};
  node.outputs = {"Y"};
  node.attributes = std::move(attributes);
  node.domain = domain;
  w::Model model;
  model.opset_imports = {{"", 17}, {"ai.onnx.ml", 1}};
  model.graph.nodes = {std::move(node)};
  model.graph.inputs = {std::move(input)};
  model.graph.outputs = {std::move(output)};
  return w::encode_model(model);
}

}  // namespace nxrt::capi_test
