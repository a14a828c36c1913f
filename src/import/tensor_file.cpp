#include "import/tensor_file.h"

#include "import/tensor_from_proto.h"
#include "onnx/parse_internal.h"
#include "onnx/wire_writer.h"

namespace nxrt::import {

namespace {

// TensorProto field numbers (onnx.proto).
constexpr uint32_t kDims = 1;
constexpr uint32_t kDataType = 2;
constexpr uint32_t kStringData = 6;
constexpr uint32_t kName = 8;
constexpr uint32_t kRawData = 9;

}  // namespace

Expected<Tensor> tensor_from_proto_bytes(std::string_view bytes, std::string* name) {
  const auto owned = onnx::model_bytes_from_buffer(bytes);
  onnx::wire::WireReader reader(owned->bytes(), owned->bytes().data(), "TensorProto");
  onnx::TensorProto proto;
  TRY(onnx::detail::parse_tensor(reader, proto));
  if (proto.data_location == 1) {
    return make_error(StatusCode::kInvalidArgument, "tensor '", proto.name, "' uses external data, which a standalone "
                      "tensor file cannot resolve");
  }
  if (name) *name = std::string(proto.name);
  TRY_ASSIGN(Tensor tensor, tensor_from_proto(proto, owned, "tensor '" + std::string(proto.name) + "'"));
  // A tensor viewing `owned` keeps it alive, so the result is self-contained either way.
  return tensor;
}

Expected<std::string> tensor_to_proto_bytes(const Tensor& tensor, const std::string& name) {
  if (!tensor.is_valid()) return make_error(StatusCode::kInvalidArgument, "cannot serialize an empty tensor");
  if (tensor.device().type != DeviceType::kCpu) {
    return make_error(StatusCode::kInvalidArgument, "cannot serialize a tensor on ", device_name(tensor.device()));
  }
  onnx::wire::ProtoWriter writer;
  for (int64_t dim : tensor.shape()) writer.int64_field(kDims, dim);
  writer.varint_field(kDataType, static_cast<uint64_t>(tensor.dtype()));
  if (tensor.dtype() == DataType::kString) {
    for (int64_t i = 0; i < tensor.numel(); ++i) writer.bytes_field(kStringData, tensor.data<std::string>()[i]);
  }
  writer.bytes_field(kName, name);
  if (tensor.dtype() != DataType::kString) {
    writer.bytes_field(kRawData, std::string_view(static_cast<const char*>(tensor.raw_data()), tensor.storage_bytes()));
  }
  return writer.take();
}

}  // namespace nxrt::import
