// Parsed view of an ONNX ModelProto. Strings and raw_data are std::string_view into the model bytes, which
// the ModelBytes object keeps alive (mmap of a file or a copy of a caller's buffer): nothing large is copied.
// Typed repeated fields (float_data, int64_data, ...) are decoded into vectors, packed or not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace nxrt::onnx {

// Owner of the bytes a ModelProto points into.
class ModelBytes {
 public:
  virtual ~ModelBytes() = default;
  virtual std::string_view bytes() const = 0;
  // Directory of the model file ("" for in-memory models): external data resolves under it only.
  virtual const std::string& directory() const = 0;
};

// Memory-maps `path` read-only. NO_SUCHFILE when it cannot be opened.
Expected<std::shared_ptr<const ModelBytes>> map_model_file(const std::string& path);
// Copies `data` (the caller's buffer need not outlive the model). `directory` serves external data.
std::shared_ptr<const ModelBytes> model_bytes_from_buffer(std::string_view data, std::string directory = "");

struct StringStringEntry {
  std::string_view key;
  std::string_view value;
};

struct TensorShapeDim {
  bool has_value = false;
  int64_t dim_value = 0;
  std::string_view dim_param;  // symbolic name; empty when unknown or concrete
  std::string_view denotation;  // e.g. "DATA_BATCH"; empty when absent
};

struct TypeProto;
using TypeProtoPtr = std::shared_ptr<TypeProto>;

struct TypeProto {
  enum class Kind { kUnset, kTensor, kSequence, kMap, kOptional, kSparseTensor };
  Kind kind = Kind::kUnset;
  int32_t elem_type = 0;                  // tensor / sparse tensor element type
  bool has_shape = false;                 // false: rank unknown
  std::vector<TensorShapeDim> shape;
  int32_t map_key_type = 0;               // map
  TypeProtoPtr element;                   // sequence / optional element, map value
  std::string_view denotation;
};

struct ValueInfoProto {
  std::string_view name;
  TypeProto type;
  bool has_type = false;
  std::string_view doc_string;
};

struct TensorProto {
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  std::string_view name;
  std::string_view doc_string;
  std::string_view raw_data;  // points into ModelBytes
  bool has_raw_data = false;
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;  // also carries 8/16-bit ints, bool, float16/bfloat16/float8 bits
  std::vector<std::string_view> string_data;
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;  // uint32, uint64
  int32_t data_location = 0;          // 0 DEFAULT, 1 EXTERNAL
  std::vector<StringStringEntry> external_data;
};

struct GraphProto;
struct NodeProto;

struct SparseTensorProto;

struct AttributeProto {
  // Values of onnx.AttributeProto.AttributeType.
  enum Type : int32_t {
    kUndefined = 0, kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kGraph = 5, kFloats = 6, kInts = 7,
    kStrings = 8, kTensors = 9, kGraphs = 10, kSparseTensor = 11, kSparseTensors = 12, kTypeProto = 13,
    kTypeProtos = 14,
  };
  std::string_view name;
  std::string_view ref_attr_name;  // inside functions: refers to an attribute of the calling node
  std::string_view doc_string;
  int32_t type = kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string_view s;
  std::shared_ptr<TensorProto> t;
  std::shared_ptr<GraphProto> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string_view> strings;
  std::vector<TensorProto> tensors;
  std::vector<std::shared_ptr<GraphProto>> graphs;
  std::shared_ptr<TypeProto> tp;
  std::vector<TypeProto> type_protos;
  std::shared_ptr<SparseTensorProto> sparse_tensor;  // field 22 (sparse_tensors, 23, is not read)
};

struct NodeProto {
  std::vector<std::string_view> input;
  std::vector<std::string_view> output;
  std::string_view name;
  std::string_view op_type;
  std::string_view domain;
  std::string_view overload;
  std::vector<AttributeProto> attribute;
  std::string_view doc_string;
};

// onnx.SparseTensorProto: `values` [NNZ], `indices` int64 [NNZ] (linear into the dense shape) or [NNZ, rank]
// (coordinates), `dims` the dense shape.
struct SparseTensorProto {
  TensorProto values;
  TensorProto indices;
  std::vector<int64_t> dims;
};

struct GraphProto {
  std::vector<NodeProto> node;
  std::string_view name;
  std::vector<TensorProto> initializer;
  std::vector<SparseTensorProto> sparse_initializer;
  std::string_view doc_string;
  std::vector<ValueInfoProto> input;
  std::vector<ValueInfoProto> output;
  std::vector<ValueInfoProto> value_info;
};

struct OperatorSetIdProto {
  std::string_view domain;
  int64_t version = 0;
};

struct FunctionProto {
  std::string_view name;
  std::vector<std::string_view> input;
  std::vector<std::string_view> output;
  std::vector<std::string_view> attribute;        // attribute names without defaults
  std::vector<AttributeProto> attribute_proto;    // attributes with defaults
  std::vector<NodeProto> node;
  std::vector<OperatorSetIdProto> opset_import;
  std::string_view domain;
  std::string_view overload;
  std::vector<ValueInfoProto> value_info;
};

struct ModelProto {
  int64_t ir_version = 0;
  std::vector<OperatorSetIdProto> opset_import;
  std::string_view producer_name;
  std::string_view producer_version;
  std::string_view domain;
  int64_t model_version = 0;
  std::string_view doc_string;
  std::shared_ptr<GraphProto> graph;
  std::vector<StringStringEntry> metadata_props;
  std::vector<FunctionProto> functions;
};

// Parses `bytes` (the whole buffer) as a ModelProto. Every length, field number, wire type and enum value is
// checked; errors are INVALID_PROTOBUF naming the message, field and byte offset. Subgraph and type nesting
// are checked against graph/model_limits.h before the parser recurses (so stack use is bounded whatever the
// input); past a bound the error is INVALID_ARGUMENT naming the bound, its limit, the owner and byte offset.
Expected<ModelProto> parse_model(std::string_view bytes);

// Bytes of a tensor's data: raw_data in place, or external data (mapped, kept alive by `keep_alive`).
// External `location` must resolve inside `model_directory`: absolute paths, ".." escapes and symlinks
// that leave it are refused (INVALID_ARGUMENT / NO_SUCHFILE).
struct ExternalData {
  std::string_view bytes;
  std::shared_ptr<const void> keep_alive;
};
Expected<ExternalData> load_external_data(const TensorProto& tensor, const std::string& model_directory);

}  // namespace nxrt::onnx
