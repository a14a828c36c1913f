// TensorProto -> Tensor. raw_data and external data are referenced in place when suitably aligned (the
// tensor keeps the model bytes alive); typed fields (float_data, int32_data, ...) are decoded into new storage.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "core/tensor.h"
#include "onnx/model_proto.h"

namespace nxrt::import {

// `what` names the tensor in messages ("initializer 'W'", "attribute 'value' of Constant node 'c'"). Fails with
// INVALID_PROTOBUF, before reading or allocating any data, when the dims are negative, their element count or byte
// size overflows 64 bits, or the raw/external data size does not match them; and with INVALID_ARGUMENT when the
// tensor needs more than `max_tensor_bytes` (0: no limit).
Expected<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::shared_ptr<const onnx::ModelBytes>& bytes,
                                   const std::string& what, size_t max_tensor_bytes = 0);

}  // namespace nxrt::import
