// TensorProto -> Tensor. raw_data and external data are referenced in place when suitably aligned (the
// tensor keeps the model bytes alive); typed fields (float_data, int32_data, ...) are decoded into new storage.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "core/tensor.h"
#include "onnx/model_proto.h"

namespace nxrt::import {

// `what` names the tensor in messages ("initializer 'W'", "attribute 'value' of Constant node 'c'").
Expected<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::shared_ptr<const onnx::ModelBytes>& bytes,
                                   const std::string& what);

}  // namespace nxrt::import
