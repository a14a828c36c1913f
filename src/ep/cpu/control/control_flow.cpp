// If, Loop and Scan: value kernels that run compiled subgraphs through RunContext. Loop-carried values and
// branch outputs may be tensors, sequences or optionals; scan outputs are tensors stacked along a new axis.
#include "ep/cpu/control/control_flow.h"

#include <algorithm>
#include <limits>
#include <string>

#include "ep/cpu/tensor/axis_copy.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu {

std::vector<const Value*> BoundSubgraph::outer_values(std::span<const Value* const> inputs,
                                                      size_t explicit_count) const {
  std::vector<const Value*> outer;
  outer.reserve(outer_slots.size());
  for (size_t slot : outer_slots) outer.push_back(inputs[explicit_count + slot]);
  return outer;
}

Expected<BoundSubgraph> bind_subgraph(const KernelInfo& info, const char* name) {
  const graph::Attribute* attribute = info.node.find_attribute(name);
  if (!attribute || attribute->type != graph::Attribute::Type::kGraph || !attribute->g) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": graph attribute '", name, "' is missing");
  }
  if (!info.subgraphs || !info.graph) {
    return make_error(StatusCode::kNotImplemented, info.node.describe(), ": subgraphs run only inside a session");
  }
  BoundSubgraph bound;
  TRY_ASSIGN(bound.compiled, info.subgraphs->compile(*attribute->g));
  const graph::Graph& sub = *attribute->g;
  const auto& implicit = info.node.implicit_inputs;
  for (int id : sub.outer_scope_inputs) {
    const auto found = std::find_if(implicit.begin(), implicit.end(), [&](int outer) {
      return info.graph->values[outer].name == sub.values[id].name;
    });
    if (found == implicit.end()) {
      return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": subgraph '", name, "' reads '",
                        sub.values[id].name, "', which the enclosing graph does not provide");
    }
    bound.outer_slots.push_back(static_cast<size_t>(found - implicit.begin()));
  }
  return bound;
}

Status push_scan_slice(std::vector<Tensor>& stack, size_t& stack_bytes, const Tensor& slice, const char* what,
                       size_t k) {
  stack_bytes += slice.storage_bytes();
  const RunLimits* limits = current_run_limits();
  if (limits != nullptr && !limits->allows_bytes(stack_bytes)) {
    return limits->check_bytes(stack_bytes, std::string(what) + " " + std::to_string(k) + " (stacked over " +
                                                std::to_string(stack.size() + 1) + " iterations)");
  }
  stack.push_back(slice);
  return Status::ok();
}

Expected<Tensor> empty_stack_of(const graph::Graph& subgraph, int output_index, int64_t axis) {
  const graph::TypeInfo& type = subgraph.values[subgraph.outputs[output_index]].type;
  if (!type.is_tensor() || type.elem_type == DataType::kUndefined) {
    return make_error(StatusCode::kRuntimeException, "subgraph output '",
                      subgraph.values[subgraph.outputs[output_index]].name,
                      "' has no declared tensor type, so its stack over zero iterations has none");
  }
  Shape shape;
  if (type.shape) {
    for (const graph::Dim& dim : *type.shape) shape.push_back(dim.is_known() ? dim.value : 0);
  }
  axis = std::clamp<int64_t>(axis, 0, static_cast<int64_t>(shape.size()));
  shape.insert(shape.begin() + axis, 0);
  return Tensor::allocate(type.elem_type, shape);
}

namespace {

Expected<bool> read_condition(const Value* value, const char* what) {
  if (!value || !value->is_tensor() || value->tensor().dtype() != DataType::kBool || value->tensor().numel() != 1) {
    return make_error(StatusCode::kInvalidArgument, what, " must be a bool tensor with one element");
  }
  return value->tensor().data<bool>()[0];
}

template <class T>
Expected<Tensor> scalar_tensor(DataType dtype, T v) {
  TRY_ASSIGN(Tensor tensor, Tensor::allocate(dtype, Shape{}));
  tensor.data<T>()[0] = v;
  return tensor;
}

class IfKernel final : public ValueKernel {
 public:
  static Expected<std::unique_ptr<Kernel>> create(const KernelInfo& info) {
    auto kernel = std::make_unique<IfKernel>();
    TRY_ASSIGN(kernel->then_branch_, bind_subgraph(info, "then_branch"));
    TRY_ASSIGN(kernel->else_branch_, bind_subgraph(info, "else_branch"));
    kernel->explicit_count_ = info.node.inputs.size();
    for (const BoundSubgraph* branch : {&kernel->then_branch_, &kernel->else_branch_}) {
      if (branch->graph().outputs.size() < info.node.outputs.size()) {
        return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": a branch has ",
                          branch->graph().outputs.size(), " outputs but the node has ", info.node.outputs.size());
      }
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext& ctx) const override {
    TRY_ASSIGN(bool condition, read_condition(inputs[0], "If condition"));
    const BoundSubgraph& branch = condition ? then_branch_ : else_branch_;
    std::vector<Value> results;
    TRY(ctx.run_subgraph(*branch.compiled, {}, branch.outer_values(inputs, explicit_count_), results));
    for (size_t o = 0; o < outputs.size(); ++o) outputs[o] = std::move(results[o]);
    return Status::ok();
  }

 private:
  BoundSubgraph then_branch_, else_branch_;
  size_t explicit_count_ = 0;
};

// Loop(M, cond, v_initial...) with body(iteration, cond, v...) -> (cond, v..., scan_outputs...). With M given
// and cond omitted the loop runs M times and the body's condition output is ignored (the spec's "for loop" form);
// with both omitted the body's condition still ends the loop (the spec ignores it there too, which never ends).
class LoopKernel final : public ValueKernel {
 public:
  static Expected<std::unique_ptr<Kernel>> create(const KernelInfo& info) {
    auto kernel = std::make_unique<LoopKernel>();
    TRY_ASSIGN(kernel->body_, bind_subgraph(info, "body"));
    const graph::Node& node = info.node;
    if (node.inputs.size() < 2) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": Loop needs the M and cond inputs (may be empty)");
    }
    kernel->explicit_count_ = node.inputs.size();
    kernel->carried_ = node.inputs.size() - 2;
    const graph::Graph& body = kernel->body_.graph();
    if (body.inputs.size() != kernel->carried_ + 2 || body.outputs.size() < kernel->carried_ + 1) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": body has ", body.inputs.size(), " inputs and ",
                        body.outputs.size(), " outputs for ", kernel->carried_, " loop-carried values");
    }
    kernel->scans_ = body.outputs.size() - 1 - kernel->carried_;
    if (node.outputs.size() > kernel->carried_ + kernel->scans_) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": ", node.outputs.size(),
                        " outputs but the body yields ", kernel->carried_ + kernel->scans_);
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext& ctx) const override {
    int64_t trip_limit = std::numeric_limits<int64_t>::max();
    if (inputs[0]) {
      const Value& m = *inputs[0];
      if (!m.is_tensor() || m.tensor().dtype() != DataType::kInt64 || m.tensor().numel() != 1) {
        return make_error(StatusCode::kInvalidArgument, "Loop trip count M must be an int64 tensor with one element");
      }
      trip_limit = m.tensor().data<int64_t>()[0];
    }
    bool condition = true;
    const bool body_condition_ends_loop = inputs[1] != nullptr || inputs[0] == nullptr;
    if (inputs[1]) {
      TRY_ASSIGN(condition, read_condition(inputs[1], "Loop condition"));
    }
    std::vector<Value> feeds(2 + carried_);
    for (size_t i = 0; i < carried_; ++i) {
      if (!inputs[2 + i]) return make_error(StatusCode::kInvalidArgument, "Loop-carried input ", i, " is missing");
      feeds[2 + i] = *inputs[2 + i];
    }
    std::vector<const Value*> feed_ptrs;
    for (const Value& feed : feeds) feed_ptrs.push_back(&feed);
    const std::vector<const Value*> outer = body_.outer_values(inputs, explicit_count_);
    std::vector<std::vector<Tensor>> stacks(scans_);
    std::vector<size_t> stack_bytes(scans_, 0);
    std::vector<Value> results;
    bool carried_condition = condition;  // the body's cond input: the last condition, counted or not
    for (int64_t iteration = 0; iteration < trip_limit && condition; ++iteration) {
      TRY_ASSIGN(Tensor iteration_tensor, scalar_tensor<int64_t>(DataType::kInt64, iteration));
      TRY_ASSIGN(Tensor condition_tensor, scalar_tensor<bool>(DataType::kBool, carried_condition));
      feeds[0] = std::move(iteration_tensor);
      feeds[1] = std::move(condition_tensor);
      TRY(ctx.run_subgraph(*body_.compiled, feed_ptrs, outer, results));
      TRY_ASSIGN(carried_condition, read_condition(&results[0], "Loop body condition output"));
      condition = carried_condition || !body_condition_ends_loop;
      for (size_t i = 0; i < carried_; ++i) feeds[2 + i] = std::move(results[1 + i]);
      for (size_t k = 0; k < scans_; ++k) {
        const Value& slice = results[1 + carried_ + k];
        if (!slice.is_tensor()) {
          return make_error(StatusCode::kInvalidArgument, "Loop scan output ", k, " must be a tensor");
        }
        TRY(push_scan_slice(stacks[k], stack_bytes[k], slice.tensor(), "Loop scan output", k));
      }
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      if (o < carried_) {
        outputs[o] = std::move(feeds[2 + o]);
        continue;
      }
      const size_t k = o - carried_;
      if (stacks[k].empty()) {
        TRY_ASSIGN(Tensor empty, empty_stack_of(body_.graph(), static_cast<int>(1 + o), 0));
        outputs[o] = std::move(empty);
      } else {
        TRY_ASSIGN(Tensor stacked, join_along_axis(stacks[k], 0, true, "Loop scan output " + std::to_string(k)));
        outputs[o] = std::move(stacked);
      }
    }
    return Status::ok();
  }

 private:
  BoundSubgraph body_;
  size_t explicit_count_ = 0, carried_ = 0, scans_ = 0;
};

constexpr KernelDef kControlFlowKernels[] = {
    {"If", "", 1, kLatestOpset, kAnyType, -1, IfKernel::create},
    {"Loop", "", 1, kLatestOpset, kAnyType, -1, LoopKernel::create},
    {"Scan", "", 8, kLatestOpset, kAnyType, -1, create_scan_kernel},
};

}  // namespace

std::span<const KernelDef> control_flow_kernels() { return kControlFlowKernels; }

}  // namespace nxrt::cpu
