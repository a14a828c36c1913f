#include "ep/kernel_registry.h"

namespace nxrt::ep {

namespace {

std::string index_key(std::string_view domain, std::string_view op_type) {
  std::string key(domain);
  key += '\x1f';
  key += op_type;
  return key;
}

// Messages and checks need only these fields of the node; the copy outlives graph rewrites.
graph::Node describing_copy(const graph::Node& node) {
  graph::Node copy;
  copy.name = node.name;
  copy.op_type = node.op_type;
  copy.domain = node.domain;
  copy.opset = node.opset;
  return copy;
}

class InputTypeCheckedKernel final : public Kernel {
 public:
  InputTypeCheckedKernel(const KernelDef& def, const graph::Node& node, std::unique_ptr<Kernel> kernel)
      : def_(def), node_(describing_copy(node)), kernel_(std::move(kernel)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    const size_t index = static_cast<size_t>(def_.type_input);
    TRY(check(index < inputs.size() && inputs[index] != nullptr ? inputs[index]->dtype() : DataType::kUndefined));
    return kernel_->reshape(inputs, outputs);
  }
  Status execute(KernelContext& context) const override { return kernel_->execute(context); }
  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    return kernel_->run(inputs, outputs, pool);
  }
  int alias_input() const override { return kernel_->alias_input(); }
  int updates_input_in_place(size_t output) const override { return kernel_->updates_input_in_place(output); }
  const Tensor* constant_output() const override { return kernel_->constant_output(); }
  bool takes_values() const override { return kernel_->takes_values(); }
  Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext& ctx) const override {
    const size_t index = static_cast<size_t>(def_.type_input);
    const bool tensor = index < inputs.size() && inputs[index] != nullptr && inputs[index]->is_tensor();
    TRY(check(tensor ? inputs[index]->tensor().dtype() : DataType::kUndefined));
    return kernel_->run_values(inputs, outputs, ctx);
  }

 private:
  // An absent input is the kernel's to report.
  Status check(DataType type) const {
    if (accepts_input_type(def_, type)) return Status::ok();
    return missing_kernel_error(node_, "no kernel for input type " + tensor_type_string(type));
  }

  const KernelDef& def_;
  graph::Node node_;
  std::unique_ptr<Kernel> kernel_;
};

}  // namespace

KernelRegistry::KernelRegistry(std::span<const std::span<const KernelDef>> tables) {
  for (std::span<const KernelDef> table : tables) {
    for (const KernelDef& def : table) {
      by_op_[index_key(def.domain, def.op_type)].push_back(&def);
      rows_.push_back(&def);
    }
  }
}

const KernelDef* KernelRegistry::find(std::string_view domain, std::string_view op_type, int opset) const {
  const auto found = by_op_.find(index_key(domain, op_type));
  if (found == by_op_.end()) return nullptr;
  for (const KernelDef* def : found->second) {
    if (def->since_opset <= opset && opset <= def->last_opset) return def;
  }
  return nullptr;
}

const KernelDef* KernelRegistry::find_for(const graph::Graph& graph, const graph::Node& node) const {
  const KernelDef* def = find(node.domain, node.op_type, node.opset);
  if (def == nullptr || def->type_input < 0) return def;
  const auto slot = static_cast<size_t>(def->type_input);
  if (slot >= node.inputs.size() || node.inputs[slot] == graph::kNoValue) return def;
  const graph::TypeInfo& type = graph.values[node.inputs[slot]].type;
  return accepts_input_type(*def, type.is_tensor() ? type.elem_type : DataType::kUndefined) ? def : nullptr;
}

bool accepts_input_type(const KernelDef& def, DataType type) {
  return def.type_input < 0 || type == DataType::kUndefined ||
         (def.types & (DataTypeMask{1} << static_cast<int>(type))) != 0;
}

Status Kernel::run(KernelInputs, std::span<Tensor>, ThreadPool&) const {
  return make_error(StatusCode::kFail, "this kernel has no host entry (run): call execute");
}

Status Kernel::run_values(std::span<const Value* const>, std::span<Value>, RunContext&) const {
  return make_error(StatusCode::kFail, "run_values called on a tensor kernel");
}

Status ValueKernel::reshape(KernelInputs, std::vector<OutputDesc>&) const {
  return make_error(StatusCode::kFail, "reshape called on a value kernel");
}

Status ValueKernel::run(KernelInputs, std::span<Tensor>, ThreadPool&) const {
  return make_error(StatusCode::kFail, "run called on a value kernel");
}

std::unique_ptr<Kernel> with_input_type_check(const KernelDef& def, const graph::Node& node,
                                              std::unique_ptr<Kernel> kernel) {
  if (def.type_input < 0 || def.types == kAnyType) return kernel;
  return std::make_unique<InputTypeCheckedKernel>(def, node, std::move(kernel));
}

Status missing_kernel_error(const graph::Node& node, std::string_view detail) {
  return make_error(StatusCode::kNotImplemented, "Could not find an implementation for ", node.op_type, "(",
                    node.opset, ") node with name '", node.name, "'", detail.empty() ? "" : ": ", detail);
}

}  // namespace nxrt::ep
