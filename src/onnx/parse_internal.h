// Internal to src/onnx: per-message parsers shared by model_parser.cpp and value_parser.cpp. Each parses the
// message held by `reader` into `out`; `depth` counts GraphProto/TypeProto nesting so that a hostile model
// cannot recurse without bound.
#pragma once

#include "onnx/model_proto.h"
#include "onnx/wire_reader.h"

namespace nxrt::onnx::detail {

// Deepest GraphProto/TypeProto nesting accepted (subgraphs inside subgraphs, sequence of sequence ...).
inline constexpr int kMaxNestingDepth = 64;

Status check_depth(const wire::WireReader& reader, int depth);

Status parse_tensor(wire::WireReader& reader, TensorProto& out);
Status parse_type(wire::WireReader& reader, int depth, TypeProto& out);
Status parse_value_info(wire::WireReader& reader, int depth, ValueInfoProto& out);
Status parse_string_entry(wire::WireReader& reader, StringStringEntry& out);
Status parse_opset_id(wire::WireReader& reader, OperatorSetIdProto& out);
Status parse_graph(wire::WireReader& reader, int depth, GraphProto& out);

}  // namespace nxrt::onnx::detail
