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

// SequenceProto and OptionalProto share these numbers: name, elem_type, tensor value(s), sequence value.
constexpr uint32_t kContainerName = 1;
constexpr uint32_t kContainerElemType = 2;
constexpr uint32_t kContainerTensors = 3;
constexpr uint32_t kContainerSequence = 5;
constexpr int64_t kElemUndefined = 0;
constexpr int64_t kElemTensor = 1;
constexpr int64_t kElemSequence = 3;

Expected<Tensor> parse_tensor_message(onnx::wire::WireReader& reader, const std::shared_ptr<const onnx::ModelBytes>& owned) {
  onnx::TensorProto proto;
  TRY(onnx::detail::parse_tensor(reader, proto));
  if (proto.data_location == 1) {
    return make_error(StatusCode::kInvalidArgument, "tensor '", proto.name, "' uses external data, which a standalone "
                      "tensor file cannot resolve");
  }
  return tensor_from_proto(proto, owned, "tensor '" + std::string(proto.name) + "'");
}

DataType element_type_of(const graph::TypeInfo& type) {
  if (type.is_tensor()) return type.elem_type;
  return type.element ? element_type_of(*type.element) : DataType::kUndefined;
}

Expected<Value> parse_sequence(onnx::wire::WireReader& reader, const std::shared_ptr<const onnx::ModelBytes>& owned,
                               DataType elem_type) {
  std::vector<Tensor> elements;
  onnx::wire::Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    if (field.number == kContainerTensors) {
      onnx::wire::WireReader element;
      TRY(reader.read_message(field, "tensor_values", "TensorProto", element));
      TRY_ASSIGN(Tensor tensor, parse_tensor_message(element, owned));
      elements.push_back(std::move(tensor));
    } else if (field.number == kContainerSequence || field.number == 4 || field.number >= 6) {
      return make_error(StatusCode::kNotImplemented, "SequenceProto: only sequences of tensors are supported");
    }
  }
  if (!elements.empty()) elem_type = elements[0].dtype();
  return Value::sequence(elem_type, std::move(elements));
}

Status write_tensor(onnx::wire::ProtoWriter& writer, const Tensor& tensor, const std::string& name) {
  TRY_ASSIGN(std::string bytes, tensor_to_proto_bytes(tensor, name));
  writer.bytes_field(kContainerTensors, bytes);
  return Status::ok();
}

Expected<std::string> sequence_to_proto_bytes(const Value& value, const std::string& name) {
  onnx::wire::ProtoWriter writer;
  writer.bytes_field(kContainerName, name);
  writer.varint_field(kContainerElemType, kElemTensor);
  for (const Tensor& element : value.elements()) TRY(write_tensor(writer, element, ""));
  return writer.take();
}

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

Expected<Value> value_from_proto_bytes(std::string_view bytes, const graph::TypeInfo& type) {
  using Kind = graph::TypeInfo::Kind;
  if (type.kind != Kind::kSequence && type.kind != Kind::kOptional) {
    TRY_ASSIGN(Tensor tensor, tensor_from_proto_bytes(bytes));
    return Value(std::move(tensor));
  }
  const auto owned = onnx::model_bytes_from_buffer(bytes);
  const DataType elem_type = element_type_of(type);
  if (type.kind == Kind::kSequence) {
    onnx::wire::WireReader reader(owned->bytes(), owned->bytes().data(), "SequenceProto");
    return parse_sequence(reader, owned, elem_type);
  }
  onnx::wire::WireReader reader(owned->bytes(), owned->bytes().data(), "OptionalProto");
  const bool of_sequence = type.element && type.element->kind == Kind::kSequence;
  Value value = Value::none(elem_type, of_sequence);
  onnx::wire::Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    onnx::wire::WireReader element;
    if (field.number == kContainerTensors) {
      TRY(reader.read_message(field, "tensor_value", "TensorProto", element));
      TRY_ASSIGN(Tensor tensor, parse_tensor_message(element, owned));
      value = Value(std::move(tensor));
    } else if (field.number == kContainerSequence) {
      TRY(reader.read_message(field, "sequence_value", "SequenceProto", element));
      TRY_ASSIGN(value, parse_sequence(element, owned, elem_type));
    }
  }
  return value;
}

Expected<std::string> value_to_proto_bytes(const Value& value, const std::string& name, const graph::TypeInfo& type) {
  if (type.kind != graph::TypeInfo::Kind::kOptional) {
    if (value.is_sequence()) return sequence_to_proto_bytes(value, name);
    if (!value.is_tensor()) return make_error(StatusCode::kInvalidArgument, "'", name, "' has no value to serialize");
    return tensor_to_proto_bytes(value.tensor(), name);
  }
  onnx::wire::ProtoWriter writer;
  writer.bytes_field(kContainerName, name);
  if (value.is_tensor()) {
    writer.varint_field(kContainerElemType, kElemTensor);
    TRY(write_tensor(writer, value.tensor(), ""));
  } else if (value.is_sequence()) {
    writer.varint_field(kContainerElemType, kElemSequence);
    TRY_ASSIGN(std::string sequence, sequence_to_proto_bytes(value, ""));
    writer.bytes_field(kContainerSequence, sequence);
  } else {
    writer.varint_field(kContainerElemType, kElemUndefined);
  }
  return writer.take();
}

}  // namespace nxrt::import
