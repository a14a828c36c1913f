// TensorProto, TypeProto, ValueInfoProto, StringStringEntryProto and OperatorSetIdProto.
#include <limits>

#include "core/data_type.h"
#include "graph/model_limits.h"
#include "onnx/parse_internal.h"

namespace nxrt::onnx::detail {

using wire::Field;
using wire::WireReader;

namespace {

Status read_data_type(const WireReader& reader, const Field& field, std::string_view name, int32_t& out) {
  TRY(reader.read_int32(field, name, out));
  if (!data_type_from_int(out)) return reader.error(field, name, "unknown data type ", out);
  return Status::ok();
}

// Element count of `dims`, or an error on a negative dim or an overflowing product.
Status check_tensor_dims(const WireReader& reader, const TensorProto& tensor, int64_t& count) {
  count = 1;
  for (size_t i = 0; i < tensor.dims.size(); ++i) {
    const int64_t dim = tensor.dims[i];
    if (dim < 0) {
      return make_error(StatusCode::kInvalidProtobuf, "TensorProto '", tensor.name, "' at byte offset ",
                        reader.start_offset(), ": dims[", i, "] is negative (", dim, ")");
    }
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / 4 / dim) {
      return make_error(StatusCode::kInvalidProtobuf, "TensorProto '", tensor.name, "' at byte offset ",
                        reader.start_offset(), ": element count overflows at dims[", i, "] = ", dim);
    }
    count *= dim;
  }
  return Status::ok();
}

Status check_raw_data_size(const WireReader& reader, const TensorProto& tensor, int64_t count) {
  if (!tensor.has_raw_data || tensor.data_location != 0) return Status::ok();
  const DataType type = *data_type_from_int(tensor.data_type);
  if (type == DataType::kUndefined || type == DataType::kString) {
    return make_error(StatusCode::kInvalidProtobuf, "TensorProto '", tensor.name, "' at byte offset ",
                      reader.start_offset(), ": raw_data is not allowed for data_type ", tensor.data_type);
  }
  const size_t expected = data_type_storage_bytes(type, count);
  if (tensor.raw_data.size() != expected) {
    return make_error(StatusCode::kInvalidProtobuf, "TensorProto '", tensor.name, "' at byte offset ",
                      reader.start_offset(), ": raw_data has ", tensor.raw_data.size(), " bytes, expected ",
                      expected, " for ", count, " elements of ", data_type_name(type));
  }
  return Status::ok();
}

Status parse_shape(WireReader& reader, std::vector<TensorShapeDim>& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    if (field.number != 1) continue;
    WireReader dim_reader;
    TRY(reader.read_message(field, "dim", "TensorShapeProto.Dimension", dim_reader));
    TensorShapeDim dim;
    Field dim_field;
    while (!dim_reader.done()) {
      TRY(dim_reader.next(dim_field));
      if (dim_field.number == 1) {
        TRY(dim_reader.read_int64(dim_field, "dim_value", dim.dim_value));
        dim.has_value = true;
        dim.dim_param = {};
      } else if (dim_field.number == 2) {
        TRY(dim_reader.read_string(dim_field, "dim_param", dim.dim_param));
        dim.has_value = false;
        dim.dim_value = 0;
      } else if (dim_field.number == 3) {
        TRY(dim_reader.read_string(dim_field, "denotation", dim.denotation));
      }
    }
    // A negative dim_value carries no size information: it is read as an unknown dim.
    if (dim.has_value && dim.dim_value < 0) {
      dim.has_value = false;
      dim.dim_value = 0;
    }
    out.push_back(dim);
  }
  return Status::ok();
}

// TypeProto.Tensor and TypeProto.SparseTensor share one layout: elem_type = 1, shape = 2.
Status parse_tensor_type(WireReader& reader, TypeProto& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    if (field.number == 1) {
      TRY(read_data_type(reader, field, "elem_type", out.elem_type));
    } else if (field.number == 2) {
      WireReader shape;
      TRY(reader.read_message(field, "shape", "TensorShapeProto", shape));
      out.has_shape = true;
      TRY(parse_shape(shape, out.shape));
    }
  }
  return Status::ok();
}

// Sequence / Optional (elem_type = 1) and Map (key_type = 1, value_type = 2). The element is one type level
// deeper than `type_level`, checked against graph::kMaxTypeNesting before the parser recurses into it.
Status parse_container_type(WireReader& reader, int type_level, bool is_map, TypeProto& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    const bool is_element = is_map ? field.number == 2 : field.number == 1;
    if (is_map && field.number == 1) {
      TRY(read_data_type(reader, field, "key_type", out.map_key_type));
    } else if (is_element) {
      const std::string_view name = is_map ? "value_type" : "elem_type";
      WireReader element;
      TRY(reader.read_message(field, name, "TypeProto", element));
      if (type_level >= graph::kMaxTypeNesting) {
        return make_error(StatusCode::kInvalidArgument, "TypeProto at byte offset ", element.start_offset(),
                          ": type nesting level ", type_level + 1, " exceeds the limit of ",
                          graph::kMaxTypeNesting, " (sequence/optional/map types inside each other)");
      }
      if (!out.element) out.element = std::make_shared<TypeProto>();
      TRY(parse_type(element, type_level + 1, *out.element));
    }
  }
  return Status::ok();
}

}  // namespace

Status name_nesting_owner(const Status& status, std::string_view owner_kind, std::string_view owner_name) {
  if (status.code() != StatusCode::kInvalidArgument) return status;
  return status.with_context(std::string(owner_kind) + " '" + std::string(owner_name) + "': ");
}

Status parse_tensor(WireReader& reader, TensorProto& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    switch (field.number) {
      case 1: TRY(reader.append_int64s(field, "dims", out.dims)); break;
      case 2: TRY(read_data_type(reader, field, "data_type", out.data_type)); break;
      case 4: TRY(reader.append_floats(field, "float_data", out.float_data)); break;
      case 5: TRY(reader.append_int32s(field, "int32_data", out.int32_data)); break;
      case 6: TRY(reader.read_string(field, "string_data", out.string_data.emplace_back())); break;
      case 7: TRY(reader.append_int64s(field, "int64_data", out.int64_data)); break;
      case 8: TRY(reader.read_string(field, "name", out.name)); break;
      case 9:
        TRY(reader.read_string(field, "raw_data", out.raw_data));
        out.has_raw_data = true;
        break;
      case 10: TRY(reader.append_doubles(field, "double_data", out.double_data)); break;
      case 11: TRY(reader.append_uint64s(field, "uint64_data", out.uint64_data)); break;
      case 12: TRY(reader.read_string(field, "doc_string", out.doc_string)); break;
      case 13: {
        WireReader entry;
        TRY(reader.read_message(field, "external_data", "StringStringEntryProto", entry));
        TRY(parse_string_entry(entry, out.external_data.emplace_back()));
        break;
      }
      case 14:
        TRY(reader.read_int32(field, "data_location", out.data_location));
        if (out.data_location != 0 && out.data_location != 1) {
          return reader.error(field, "data_location", "unknown data location ", out.data_location);
        }
        break;
      default: break;  // segment (3), metadata_props and future fields
    }
  }
  int64_t count = 0;
  TRY(check_tensor_dims(reader, out, count));
  return check_raw_data_size(reader, out, count);
}

Status parse_tensor_field(WireReader& reader, const Field& field, std::string_view name, TensorProto& out) {
  WireReader sub;
  TRY(reader.read_message(field, name, "TensorProto", sub));
  return parse_tensor(sub, out);
}

Status parse_sparse_tensor_field(WireReader& reader, const Field& field, std::string_view name,
                                 SparseTensorProto& out) {
  WireReader sub;
  TRY(reader.read_message(field, name, "SparseTensorProto", sub));
  Field part;
  while (!sub.done()) {
    TRY(sub.next(part));
    switch (part.number) {
      case 1: TRY(parse_tensor_field(sub, part, "values", out.values)); break;
      case 2: TRY(parse_tensor_field(sub, part, "indices", out.indices)); break;
      case 3: TRY(sub.append_int64s(part, "dims", out.dims)); break;
      default: break;
    }
  }
  return Status::ok();
}

Status parse_type(WireReader& reader, int type_level, TypeProto& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    WireReader sub;
    switch (field.number) {
      case 1:
        TRY(reader.read_message(field, "tensor_type", "TypeProto.Tensor", sub));
        out.kind = TypeProto::Kind::kTensor;
        TRY(parse_tensor_type(sub, out));
        break;
      case 8:
        TRY(reader.read_message(field, "sparse_tensor_type", "TypeProto.SparseTensor", sub));
        out.kind = TypeProto::Kind::kSparseTensor;
        TRY(parse_tensor_type(sub, out));
        break;
      case 4:
        TRY(reader.read_message(field, "sequence_type", "TypeProto.Sequence", sub));
        out.kind = TypeProto::Kind::kSequence;
        TRY(parse_container_type(sub, type_level, false, out));
        break;
      case 9:
        TRY(reader.read_message(field, "optional_type", "TypeProto.Optional", sub));
        out.kind = TypeProto::Kind::kOptional;
        TRY(parse_container_type(sub, type_level, false, out));
        break;
      case 5:
        TRY(reader.read_message(field, "map_type", "TypeProto.Map", sub));
        out.kind = TypeProto::Kind::kMap;
        TRY(parse_container_type(sub, type_level, true, out));
        break;
      case 6: TRY(reader.read_string(field, "denotation", out.denotation)); break;
      default: break;  // opaque_type (7) and future kinds leave the kind unset
    }
  }
  return Status::ok();
}

Status parse_value_info(WireReader& reader, ValueInfoProto& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    if (field.number == 1) {
      TRY(reader.read_string(field, "name", out.name));
    } else if (field.number == 2) {
      WireReader type;
      TRY(reader.read_message(field, "type", "TypeProto", type));
      TRY(name_nesting_owner(parse_type(type, 1, out.type), "value", out.name));
      out.has_type = true;
    } else if (field.number == 3) {
      TRY(reader.read_string(field, "doc_string", out.doc_string));
    }
  }
  return Status::ok();
}

Status parse_string_entry(WireReader& reader, StringStringEntry& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    if (field.number == 1) TRY(reader.read_string(field, "key", out.key));
    if (field.number == 2) TRY(reader.read_string(field, "value", out.value));
  }
  return Status::ok();
}

Status parse_opset_id(WireReader& reader, OperatorSetIdProto& out) {
  Field field;
  while (!reader.done()) {
    TRY(reader.next(field));
    if (field.number == 1) TRY(reader.read_string(field, "domain", out.domain));
    if (field.number == 2) TRY(reader.read_int64(field, "version", out.version));
  }
  return Status::ok();
}

}  // namespace nxrt::onnx::detail
