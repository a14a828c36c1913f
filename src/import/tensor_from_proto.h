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

// The dense tensor of a SparseTensorProto (its dims; zeros, or empty strings, except at the indices), as a sparse
// initializer becomes a dense one. INVALID_GRAPH, naming `what`, for indices that are not int64 [NNZ] or
// [NNZ, rank], lie outside the dense shape or repeat, and values that are not [NNZ]; INVALID_ARGUMENT when the
// dense tensor needs more than `max_tensor_bytes`, or 1 GiB when that is 0 (no file size bounds a dense size).
Expected<Tensor> dense_from_sparse_proto(const onnx::SparseTensorProto& proto,
                                         const std::shared_ptr<const onnx::ModelBytes>& bytes, const std::string& what,
                                         size_t max_tensor_bytes = 0);

}  // namespace nxrt::import
