// The ops the fuzzers build nodes of: every (domain, op type) of the CPU kernel registry, the opset range its
// rows cover and, where known, the schema (fuzz/op_schemas.inc, written by fuzz/gen_op_schemas.py) that gives
// its input and output counts, its inputs' element types and its attributes' names and kinds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ep/cpu/kernel.h"

namespace nxrt::fuzz {

// SchemaInput::kinds bits.
inline constexpr uint8_t kTakesTensor = 1;
inline constexpr uint8_t kTakesSequence = 2;
// SchemaInput::flags bits.
inline constexpr uint8_t kInputOptional = 1;
inline constexpr uint8_t kInputVariadic = 2;

struct SchemaInput {
  uint64_t types;        // bit i: DataType i allowed (0: unknown)
  uint8_t kinds;         // kTakesTensor / kTakesSequence
  uint8_t flags;         // kInputOptional / kInputVariadic
  uint8_t same_type_as;  // index of the first input of the same type constraint (itself when none earlier)
};

struct SchemaAttribute {
  const char* name;
  int8_t kind;  // onnx AttributeProto.AttributeType value
  bool required;
};

struct OpSchema {
  const char* domain;
  const char* op_type;
  int since_opset;
  uint8_t min_inputs;
  uint8_t max_inputs;  // variadic inputs capped
  uint8_t min_outputs;
  uint8_t max_outputs;       // capped at 4
  uint8_t optional_outputs;  // bit i: output i may be omitted
  uint16_t first_input;
  uint16_t input_count;
  uint16_t first_attribute;
  uint16_t attribute_count;
};

struct CatalogOp {
  std::string_view domain;
  std::string_view op_type;
  std::vector<const cpu::KernelDef*> rows;  // registry rows, ascending opset
  std::vector<const OpSchema*> schemas;     // ascending since_opset; may be empty
};

// Domains an op reference can name, by the byte value (modulo the count) that encodes them.
inline constexpr std::string_view kFuzzDomains[] = {"", "ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training",
                                                    "com.nxrt"};

// The newest opset version the fuzzers import for `domain`.
int max_fuzz_opset(std::string_view domain);

class OpCatalog {
 public:
  // Built once from the registry (thread-safe static).
  static const OpCatalog& get();

  size_t size() const { return ops_.size(); }
  const CatalogOp& op(size_t index) const { return ops_[index % ops_.size()]; }

  // Index of (domain, op_type); for an op nxrt does not register, a stable hash of the name modulo size().
  size_t find(std::string_view domain, std::string_view op_type) const;

  // An opset for `op`: `wanted` itself when a row covers it, otherwise one chosen from the rows' ranges by it.
  int choose_opset(const CatalogOp& op, int wanted) const;
  // The registry row covering `opset`, or nullptr.
  const cpu::KernelDef* row_for(const CatalogOp& op, int opset) const;
  // The newest schema whose version is <= opset, or nullptr.
  const OpSchema* schema_for(const CatalogOp& op, int opset) const;

  static std::span<const SchemaInput> inputs(const OpSchema& schema);
  static std::span<const SchemaAttribute> attributes(const OpSchema& schema);
  // The schema's attribute named `name`, or nullptr.
  static const SchemaAttribute* find_attribute(const OpSchema* schema, std::string_view name);

 private:
  OpCatalog();
  std::vector<CatalogOp> ops_;
};

}  // namespace nxrt::fuzz
