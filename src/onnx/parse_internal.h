// Internal to src/onnx: per-message parsers shared by model_parser.cpp and value_parser.cpp (and
// parse_tensor by the importer's tensor files). Each parses the message held by `reader` into `out`.
// The only recursions are GraphProto inside AttributeProto and TypeProto inside TypeProto; both check the
// nesting bound of graph/model_limits.h before they recurse, so no input can deepen the stack past it.
// A bound exceeded is INVALID_ARGUMENT naming the bound, the limit and where; everything else malformed is
// INVALID_PROTOBUF.
#pragma once

#include "onnx/model_proto.h"
#include "onnx/wire_reader.h"

namespace nxrt::onnx::detail {

// A nesting-bound error (INVALID_ARGUMENT) from parsing a part of "<owner_kind> '<owner_name>'" gets that
// owner prefixed, so the message says where; other statuses pass through unchanged.
Status name_nesting_owner(const Status& status, std::string_view owner_kind, std::string_view owner_name);

Status parse_tensor(wire::WireReader& reader, TensorProto& out);
// The TensorProto / SparseTensorProto held by length-delimited field `field` (called `name` in errors) of the
// message `reader` is reading.
Status parse_tensor_field(wire::WireReader& reader, const wire::Field& field, std::string_view name,
                          TensorProto& out);
Status parse_sparse_tensor_field(wire::WireReader& reader, const wire::Field& field, std::string_view name,
                                 SparseTensorProto& out);
// `type_level` is the level of this TypeProto as graph::kMaxTypeNesting counts it (1 for a root type).
Status parse_type(wire::WireReader& reader, int type_level, TypeProto& out);
Status parse_value_info(wire::WireReader& reader, ValueInfoProto& out);
Status parse_string_entry(wire::WireReader& reader, StringStringEntry& out);
Status parse_opset_id(wire::WireReader& reader, OperatorSetIdProto& out);
// `graph_level` is the level of this graph as graph::kMaxGraphNesting counts it (0 for the main graph); the
// caller has checked it against the bound.
Status parse_graph(wire::WireReader& reader, int graph_level, GraphProto& out);

}  // namespace nxrt::onnx::detail
