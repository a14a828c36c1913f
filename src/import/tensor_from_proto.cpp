#include "import/tensor_from_proto.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/dispatch.h"

namespace nxrt::import {

namespace {

Status size_mismatch(const std::string& what, size_t got, size_t expected, const char* field) {
  return make_error(StatusCode::kInvalidProtobuf, what, ": ", field, " holds ", got, " elements/bytes but its dims need ",
                    expected);
}

// Bit pattern stored in int32_data for 8/16-bit types (and bool) as the spec describes.
template <class Storage>
Status copy_from_int32_field(const onnx::TensorProto& proto, Tensor& tensor, const std::string& what) {
  if (proto.int32_data.size() != static_cast<size_t>(tensor.numel())) {
    return size_mismatch(what, proto.int32_data.size(), tensor.numel(), "int32_data");
  }
  auto* out = tensor.data<Storage>();
  for (size_t i = 0; i < proto.int32_data.size(); ++i) {
    out[i] = tensor.dtype() == DataType::kBool ? proto.int32_data[i] != 0 : static_cast<Storage>(proto.int32_data[i]);
  }
  return Status::ok();
}

template <class T, class Source>
Status copy_field(const std::vector<Source>& field, Tensor& tensor, const std::string& what, const char* name) {
  if (field.size() != static_cast<size_t>(tensor.numel())) return size_mismatch(what, field.size(), tensor.numel(), name);
  auto* out = tensor.data<T>();
  for (size_t i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field[i]);
  return Status::ok();
}

Status decode_typed_fields(const onnx::TensorProto& proto, DataType dtype, Tensor& tensor, const std::string& what) {
  switch (dtype) {
    case DataType::kFloat32: return copy_field<float>(proto.float_data, tensor, what, "float_data");
    case DataType::kFloat64: return copy_field<double>(proto.double_data, tensor, what, "double_data");
    case DataType::kInt64: return copy_field<int64_t>(proto.int64_data, tensor, what, "int64_data");
    case DataType::kInt32: return copy_field<int32_t>(proto.int32_data, tensor, what, "int32_data");
    case DataType::kUInt32: return copy_field<uint32_t>(proto.uint64_data, tensor, what, "uint64_data");
    case DataType::kUInt64: return copy_field<uint64_t>(proto.uint64_data, tensor, what, "uint64_data");
    case DataType::kComplex64: {
      if (proto.float_data.size() != static_cast<size_t>(tensor.numel()) * 2) {
        return size_mismatch(what, proto.float_data.size(), tensor.numel() * 2, "float_data");
      }
      if (!proto.float_data.empty()) {
        std::memcpy(tensor.raw_data(), proto.float_data.data(), proto.float_data.size() * sizeof(float));
      }
      return Status::ok();
    }
    case DataType::kComplex128: {
      if (proto.double_data.size() != static_cast<size_t>(tensor.numel()) * 2) {
        return size_mismatch(what, proto.double_data.size(), tensor.numel() * 2, "double_data");
      }
      if (!proto.double_data.empty()) {
        std::memcpy(tensor.raw_data(), proto.double_data.data(), proto.double_data.size() * sizeof(double));
      }
      return Status::ok();
    }
    case DataType::kString: {
      if (proto.string_data.size() != static_cast<size_t>(tensor.numel())) {
        return size_mismatch(what, proto.string_data.size(), tensor.numel(), "string_data");
      }
      for (size_t i = 0; i < proto.string_data.size(); ++i) tensor.data<std::string>()[i] = proto.string_data[i];
      return Status::ok();
    }
    case DataType::kBool:
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0: return copy_from_int32_field<uint8_t>(proto, tensor, what);
    case DataType::kUInt16:
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16: return copy_from_int32_field<uint16_t>(proto, tensor, what);
    default: break;
  }
  if (is_sub_byte_type(dtype)) {
    // Sub-byte types pack their elements into int32_data entries holding one byte each.
    const size_t bytes = tensor.storage_bytes();
    if (proto.int32_data.size() != bytes) return size_mismatch(what, proto.int32_data.size(), bytes, "int32_data");
    auto* out = tensor.data<uint8_t>();
    for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(proto.int32_data[i]);
    return Status::ok();
  }
  return make_error(StatusCode::kNotImplemented, what, ": cannot decode data of type ", data_type_name(dtype));
}

}  // namespace

Expected<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::shared_ptr<const onnx::ModelBytes>& bytes,
                                   const std::string& what, size_t max_tensor_bytes) {
  const auto dtype = data_type_from_int(proto.data_type);
  if (!dtype || *dtype == DataType::kUndefined) {
    return make_error(StatusCode::kInvalidProtobuf, what, ": invalid data_type ", proto.data_type);
  }
  const auto count = checked_numel(proto.dims);
  if (!count) return make_error(StatusCode::kInvalidProtobuf, what, ": invalid dims ", shape_to_string(proto.dims));
  const std::optional<size_t> storage_bytes = checked_storage_bytes(*dtype, *count);
  if (!storage_bytes) {
    return make_error(StatusCode::kInvalidProtobuf, what, ": dims ", shape_to_string(proto.dims), " of ",
                      data_type_name(*dtype), " need more bytes than 64 bits can count");
  }
  const size_t expected_bytes = *storage_bytes;
  if (max_tensor_bytes != 0 && expected_bytes > max_tensor_bytes) {
    return make_error(StatusCode::kInvalidArgument, what, ": dims ", shape_to_string(proto.dims), " of ",
                      data_type_name(*dtype), " need ", expected_bytes, " bytes, more than max_tensor_bytes (",
                      max_tensor_bytes, ")");
  }

  std::string_view data;
  std::shared_ptr<const void> keep_alive = bytes;
  bool has_bytes = false;
  if (proto.data_location == 1) {
    TRY_ASSIGN(onnx::ExternalData external, onnx::load_external_data(proto, bytes ? bytes->directory() : std::string()));
    data = external.bytes;
    keep_alive = external.keep_alive;
    has_bytes = true;
  } else if (proto.has_raw_data) {
    data = proto.raw_data;
    has_bytes = true;
  }

  if (has_bytes) {
    if (*dtype == DataType::kString) {
      return make_error(StatusCode::kInvalidProtobuf, what, ": string tensors cannot use raw_data");
    }
    if (data.size() != expected_bytes) {
      return make_error(StatusCode::kInvalidProtobuf, what, ": data holds ", data.size(), " bytes but dims ",
                        shape_to_string(proto.dims), " of ", data_type_name(*dtype), " need ", expected_bytes);
    }
    const size_t element_bytes = std::max<size_t>(1, std::min<size_t>(8, data_type_bits(*dtype) / 8));
    const auto address = reinterpret_cast<uintptr_t>(data.data());
    // Kernels read bool elements as C++ bool, so bytes other than 0 and 1 are copied as 1.
    const bool fix_bools = *dtype == DataType::kBool &&
                           std::any_of(data.begin(), data.end(), [](char c) { return static_cast<uint8_t>(c) > 1; });
    if (address % element_bytes == 0 && expected_bytes > 0 && !fix_bools) {
      return Tensor::wrap(*dtype, proto.dims, const_cast<char*>(data.data()), Device{},
                          std::const_pointer_cast<void>(keep_alive));
    }
    TRY_ASSIGN(Tensor tensor, Tensor::allocate(*dtype, proto.dims));
    if (expected_bytes > 0) std::memcpy(tensor.raw_data(), data.data(), expected_bytes);
    if (fix_bools) {
      for (int64_t i = 0; i < *count; ++i) tensor.data<uint8_t>()[i] = tensor.data<uint8_t>()[i] != 0;
    }
    return tensor;
  }
  // Checked before allocating so that a huge declared shape with little data never reaches the allocator.
  const size_t available = proto.float_data.size() + proto.int32_data.size() + proto.string_data.size() +
                           proto.int64_data.size() + proto.double_data.size() + proto.uint64_data.size();
  // Sub-byte types pack several elements per int32_data entry (two 4-bit or four 2-bit ones).
  const size_t per_entry = data_type_bits(*dtype) < 8 ? static_cast<size_t>(8 / data_type_bits(*dtype)) : 1;
  if (static_cast<size_t>(*count) > available * per_entry) {
    return make_error(StatusCode::kInvalidProtobuf, what, ": dims ", shape_to_string(proto.dims), " need ", *count,
                      " elements but the tensor holds ", available, " values");
  }
  TRY_ASSIGN(Tensor tensor, Tensor::allocate(*dtype, proto.dims));
  TRY(decode_typed_fields(proto, *dtype, tensor, what));
  return tensor;
}

Expected<Tensor> dense_from_sparse_proto(const onnx::SparseTensorProto& proto,
                                         const std::shared_ptr<const onnx::ModelBytes>& bytes, const std::string& what,
                                         size_t max_tensor_bytes) {
  TRY_ASSIGN(const Tensor values, tensor_from_proto(proto.values, bytes, what + " values", max_tensor_bytes));
  TRY_ASSIGN(const Tensor indices, tensor_from_proto(proto.indices, bytes, what + " indices", max_tensor_bytes));
  if (data_type_storage_bytes(values.dtype(), 2) != 2 * data_type_storage_bytes(values.dtype(), 1)) {
    return make_error(StatusCode::kNotImplemented, what, ": sparse ", data_type_name(values.dtype()),
                      " values (packed below a byte) are not supported");
  }
  const Shape dense_shape(proto.dims.begin(), proto.dims.end());
  int64_t total = 1;
  for (const int64_t d : dense_shape) {
    if (d < 0 || (d > 0 && total > std::numeric_limits<int64_t>::max() / d)) {
      return make_error(StatusCode::kInvalidGraph, what, ": dense shape ", shape_to_string(dense_shape),
                        " is not a valid shape");
    }
    total *= d;
  }
  const int64_t nnz = values.numel();
  const auto rank = static_cast<int64_t>(dense_shape.size());
  const bool linear = indices.rank() == 1 && indices.numel() == nnz;
  const bool coordinates = indices.rank() == 2 && indices.shape()[0] == nnz && indices.shape()[1] == rank;
  if (values.rank() != 1 || indices.dtype() != DataType::kInt64 || !(linear || coordinates)) {
    return make_error(StatusCode::kInvalidGraph, what, ": needs 1-D values and int64 indices of shape [", nnz,
                      "] or [", nnz, ", ", rank, "], got values ", shape_to_string(values.shape()), " and ",
                      data_type_name(indices.dtype()), " indices ", shape_to_string(indices.shape()));
  }
  // A few bytes of sparse data can ask for a huge dense tensor, which no file size bounds: without a
  // max_tensor_bytes the dense size is capped at kDefaultSparseDenseBytes.
  constexpr size_t kDefaultSparseDenseBytes = size_t{1} << 30;
  const size_t limit = max_tensor_bytes != 0 ? max_tensor_bytes : kDefaultSparseDenseBytes;
  const size_t dense_bytes = data_type_storage_bytes(values.dtype(), total);
  if (dense_bytes > limit) {
    return make_error(StatusCode::kInvalidArgument, what, ": the dense tensor needs ", dense_bytes, " bytes, more than ",
                      max_tensor_bytes != 0 ? "max_tensor_bytes " : "the limit for sparse tensors without a "
                                                                    "max_tensor_bytes, ",
                      limit);
  }
  TRY_ASSIGN(Tensor dense, Tensor::allocate(values.dtype(), dense_shape));
  if (values.dtype() != DataType::kString && dense.raw_data() != nullptr) {
    std::memset(dense.raw_data(), 0, dense.storage_bytes());
  }
  // Each value's position in the dense tensor, checked; repeats found by sorting (memory bounded by the values).
  std::vector<int64_t> positions(static_cast<size_t>(nnz));
  const int64_t* index = indices.data<int64_t>();
  for (int64_t i = 0; i < nnz; ++i) {
    int64_t at = 0;
    bool inside = true;
    if (linear) {
      at = index[i];
      inside = at >= 0 && at < total;
    } else {
      for (int64_t d = 0; d < rank && inside; ++d) {
        const int64_t c = index[i * rank + d];
        inside = c >= 0 && c < dense_shape[static_cast<size_t>(d)];
        at = at * dense_shape[static_cast<size_t>(d)] + c;
      }
    }
    if (!inside) {
      return make_error(StatusCode::kInvalidGraph, what, ": index ", i, " of the values lies outside the dense shape ",
                        shape_to_string(dense_shape));
    }
    positions[static_cast<size_t>(i)] = at;
  }
  std::vector<int64_t> sorted = positions;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return make_error(StatusCode::kInvalidGraph, what, ": two values lie at one position (an earlier one is there)");
  }
  const size_t element_bytes = data_type_storage_bytes(values.dtype(), 1);
  for (int64_t i = 0; i < nnz; ++i) {
    const int64_t at = positions[static_cast<size_t>(i)];
    if (values.dtype() == DataType::kString) {
      dense.data<std::string>()[at] = values.data<std::string>()[i];
    } else {
      std::memcpy(static_cast<char*>(dense.raw_data()) + static_cast<size_t>(at) * element_bytes,
                  static_cast<const char*>(values.raw_data()) + static_cast<size_t>(i) * element_bytes, element_bytes);
    }
  }
  return dense;
}

}  // namespace nxrt::import
