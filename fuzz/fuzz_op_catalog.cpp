#include "fuzz_op_catalog.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "import/importer.h"

namespace nxrt::fuzz {

namespace {

#include "op_schemas.inc"

uint64_t name_hash(std::string_view domain, std::string_view op_type) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (const std::string_view part : {domain, std::string_view("\x1f", 1), op_type}) {
    for (const char c : part) {
      hash ^= static_cast<uint8_t>(c);
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

int clipped_last(const cpu::KernelDef& row) {
  return std::min(row.last_opset, std::max(row.since_opset, max_fuzz_opset(row.domain)));
}

}  // namespace

int max_fuzz_opset(std::string_view domain) {
  if (domain.empty() || domain == "ai.onnx") return static_cast<int>(import::kMaxOnnxOpset);
  if (domain == "ai.onnx.ml") return 5;
  return 1;
}

OpCatalog::OpCatalog() {
  std::map<std::pair<std::string_view, std::string_view>, CatalogOp> by_name;
  for (const cpu::KernelDef* row : cpu::all_kernels()) {
    CatalogOp& op = by_name[{row->domain, row->op_type}];
    op.domain = row->domain;
    op.op_type = row->op_type;
    op.rows.push_back(row);
  }
  for (const OpSchema& schema : kSchemas) {
    const auto found = by_name.find({std::string_view(schema.domain), std::string_view(schema.op_type)});
    if (found != by_name.end()) found->second.schemas.push_back(&schema);
  }
  for (auto& [key, op] : by_name) {
    std::sort(op.rows.begin(), op.rows.end(),
              [](const cpu::KernelDef* a, const cpu::KernelDef* b) { return a->since_opset < b->since_opset; });
    ops_.push_back(std::move(op));
  }
}

const OpCatalog& OpCatalog::get() {
  static const OpCatalog catalog;
  return catalog;
}

size_t OpCatalog::find(std::string_view domain, std::string_view op_type) const {
  using Key = std::pair<std::string_view, std::string_view>;
  const auto before = [](const CatalogOp& op, const Key& key) { return Key(op.domain, op.op_type) < key; };
  const auto found = std::lower_bound(ops_.begin(), ops_.end(), Key(domain, op_type), before);
  if (found != ops_.end() && found->domain == domain && found->op_type == op_type) {
    return static_cast<size_t>(found - ops_.begin());
  }
  return name_hash(domain, op_type) % ops_.size();
}

int OpCatalog::choose_opset(const CatalogOp& op, int wanted) const {
  if (row_for(op, wanted) != nullptr) return wanted;
  const size_t rows = op.rows.size();
  const cpu::KernelDef& row = *op.rows[static_cast<size_t>(wanted) % rows];
  const int width = clipped_last(row) - row.since_opset + 1;
  return row.since_opset + static_cast<int>((static_cast<size_t>(wanted) / rows) % static_cast<size_t>(width));
}

const cpu::KernelDef* OpCatalog::row_for(const CatalogOp& op, int opset) const {
  for (const cpu::KernelDef* row : op.rows) {
    if (row->since_opset <= opset && opset <= clipped_last(*row)) return row;
  }
  return nullptr;
}

const OpSchema* OpCatalog::schema_for(const CatalogOp& op, int opset) const {
  const OpSchema* chosen = nullptr;
  for (const OpSchema* schema : op.schemas) {
    if (schema->since_opset <= opset) chosen = schema;
  }
  return chosen;
}

std::span<const SchemaInput> OpCatalog::inputs(const OpSchema& schema) {
  return std::span<const SchemaInput>(kSchemaInputs).subspan(schema.first_input, schema.input_count);
}

std::span<const SchemaAttribute> OpCatalog::attributes(const OpSchema& schema) {
  return std::span<const SchemaAttribute>(kSchemaAttributes).subspan(schema.first_attribute, schema.attribute_count);
}

const SchemaAttribute* OpCatalog::find_attribute(const OpSchema* schema, std::string_view name) {
  if (schema == nullptr) return nullptr;
  for (const SchemaAttribute& attribute : attributes(*schema)) {
    if (name == attribute.name) return &attribute;
  }
  return nullptr;
}

}  // namespace nxrt::fuzz
