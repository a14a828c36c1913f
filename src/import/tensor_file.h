// Standalone serialized TensorProto messages (the .pb files of ONNX test data sets) <-> Tensor.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "core/tensor.h"
#include "core/value.h"
#include "graph/type_info.h"

namespace nxrt::import {

// Parses one TensorProto. The result owns its data (nothing refers to `bytes` afterwards). External data is
// refused. `name` (optional) receives the tensor's name.
Expected<Tensor> tensor_from_proto_bytes(std::string_view bytes, std::string* name = nullptr);

// Serializes `tensor` (CPU) as a TensorProto with dims, data_type, name and raw_data (string_data for strings).
Expected<std::string> tensor_to_proto_bytes(const Tensor& tensor, const std::string& name);

// Parses a value file for a value of type `type`: a TensorProto for tensors (and unknown types), a SequenceProto
// of tensors for sequences, an OptionalProto for optionals (of a tensor or a sequence of tensors).
Expected<Value> value_from_proto_bytes(std::string_view bytes, const graph::TypeInfo& type);

// Serializes `value` as the file value_from_proto_bytes reads for `type`.
Expected<std::string> value_to_proto_bytes(const Value& value, const std::string& name, const graph::TypeInfo& type);

}  // namespace nxrt::import
