// Shared models for the ONNX layer tests.
#pragma once

#include <string>

#include "onnx/model_writer.h"

namespace nxrt::onnx::testing {

// Y = Relu(X + W) with a float initializer, one symbolic and one concrete dim, metadata and a function.
inline write::Model sample_model() {
  write::Model model;
  model.producer_name = "nxrt-test";
  model.producer_version = "1.2";
  model.doc_string = "sample";
  model.opset_imports = {{"", 21}, {"com.example", 1}};
  model.metadata_props = {{"author", "me"}, {"license", "MIT"}};
  model.graph.name = "main";
  model.graph.initializers.push_back(write::float_tensor("W", {2, 3}, {1, 2, 3, 4, 5, 6}));
  model.graph.inputs.push_back({"X", 1, {std::string("N"), int64_t{3}}});
  model.graph.outputs.push_back({"Y", 1, {std::string("N"), int64_t{3}}});
  model.graph.value_info.push_back({"S", 1, {}, false, true});
  write::Node add{"Add", {"X", "W"}, {"S"}, {}, "add0", ""};
  write::Node relu{"Relu", {"S"}, {"Y"}, {write::attr_float("alpha", 0.5f)}, "relu0", ""};
  model.graph.nodes = {add, relu};
  write::Function function;
  function.name = "MyFn";
  function.domain = "com.example";
  function.inputs = {"a"};
  function.outputs = {"b"};
  function.attributes = {"k"};
  function.nodes.push_back({"Identity", {"a"}, {"b"}, {}, "", ""});
  function.opset_imports = {{"", 21}};
  model.functions.push_back(function);
  return model;
}

}  // namespace nxrt::onnx::testing
