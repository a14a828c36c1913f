// Standalone serialized TensorProto messages (the .pb files of ONNX test data sets) <-> Tensor.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "core/tensor.h"

namespace nxrt::import {

// Parses one TensorProto. The result owns its data (nothing refers to `bytes` afterwards). External data is
// refused. `name` (optional) receives the tensor's name.
Expected<Tensor> tensor_from_proto_bytes(std::string_view bytes, std::string* name = nullptr);

// Serializes `tensor` (CPU) as a TensorProto with dims, data_type, name and raw_data (string_data for strings).
Expected<std::string> tensor_to_proto_bytes(const Tensor& tensor, const std::string& name);

}  // namespace nxrt::import
