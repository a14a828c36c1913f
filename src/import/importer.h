// ONNX ModelProto -> core graph::Graph. Model-local functions are inlined; subgraphs (If/Loop/Scan bodies)
// become nested graphs that list the enclosing-scope values they read. Constant-free: no optimisation here.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "graph/graph.h"
#include "graph/type_info.h"
#include "onnx/model_proto.h"

namespace nxrt::import {

inline constexpr int64_t kMinOnnxOpset = 1;
inline constexpr int64_t kMaxOnnxOpset = 28;

struct ImportedModel {
  graph::Graph graph;
  std::vector<int> overridable_initializers;  // initializers that are also declared graph inputs
  // Main-graph input name -> the denotation of each of its dims ("" where none), for inputs that give any.
  std::map<std::string, std::vector<std::string>> input_dim_denotations;
};

struct ImportOptions {
  // Most bytes one initializer or tensor attribute may take (0: no limit); larger ones fail, naming the tensor.
  size_t max_tensor_bytes = 0;
  // Main-graph initializers the caller gives by name (SessionOptions::initializers): each is used in place of the
  // model's data, which is then not read (its external data file need not exist), and must have the dtype and shape
  // the model declares for it. A name that is no main-graph initializer is INVALID_ARGUMENT. Null: none.
  const std::map<std::string, Tensor>* supplied_initializers = nullptr;
};

// `bytes` must be the buffer `model` was parsed from; tensors may reference it in place.
Expected<ImportedModel> import_model(const onnx::ModelProto& model, const std::shared_ptr<const onnx::ModelBytes>& bytes,
                                     const ImportOptions& options = {});

// Converts a TypeProto (recursively); INVALID_PROTOBUF on unknown element types.
Expected<graph::TypeInfo> type_from_proto(const onnx::TypeProto& proto, const std::string& what);

}  // namespace nxrt::import
