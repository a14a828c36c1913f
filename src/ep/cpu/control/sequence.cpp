// Sequence and Optional operators: value kernels over Value sequences (immutable element lists sharing the
// tensors' buffers) and optionals (a value, or Value::none()). Positions may be negative (counted from the end).
#include <string>

#include "ep/cpu/tensor/axis_copy.h"
#include "ep/cpu/control/control_flow.h"
#include "ep/cpu/tensor/data_movement.h"

namespace nxrt::cpu {

namespace {

Expected<const Value*> sequence_input(std::span<const Value* const> inputs, size_t index, const char* op) {
  if (index >= inputs.size() || !inputs[index] || !inputs[index]->is_sequence()) {
    return make_error(StatusCode::kInvalidArgument, op, ": input ", index, " must be a sequence");
  }
  return inputs[index];
}

Expected<const Tensor*> tensor_input(std::span<const Value* const> inputs, size_t index, const char* op) {
  if (index >= inputs.size() || !inputs[index] || !inputs[index]->is_tensor()) {
    return make_error(StatusCode::kInvalidArgument, op, ": input ", index, " must be a tensor");
  }
  return &inputs[index]->tensor();
}

// A position input (int32/int64 scalar) checked against [-size, size - 1 + extra].
Expected<size_t> read_position(const Value* value, size_t size, int64_t extra, const char* op) {
  if (!value->is_tensor() || value->tensor().numel() != 1 ||
      (value->tensor().dtype() != DataType::kInt64 && value->tensor().dtype() != DataType::kInt32)) {
    return make_error(StatusCode::kInvalidArgument, op, ": position must be an int32 or int64 scalar");
  }
  const Tensor& tensor = value->tensor();
  int64_t position = tensor.dtype() == DataType::kInt64 ? tensor.data<int64_t>()[0] : tensor.data<int32_t>()[0];
  const int64_t n = static_cast<int64_t>(size);
  if (position < -n || position > n - 1 + extra) {
    return make_error(StatusCode::kInvalidArgument, op, ": position ", position, " is out of range for a sequence of ",
                      n, " elements");
  }
  return static_cast<size_t>(position < 0 ? position + n : position);
}

Status check_element_type(const Value& sequence, const Tensor& tensor, const char* op) {
  if (sequence.elem_type() != DataType::kUndefined && tensor.dtype() != sequence.elem_type()) {
    return make_error(StatusCode::kInvalidArgument, op, ": element type ", data_type_name(tensor.dtype()),
                      " does not match the sequence's ", data_type_name(sequence.elem_type()));
  }
  return Status::ok();
}

// Integer attributes a value op reads, parsed once at create.
struct ValueOpAttrs {
  int64_t first = 0;
  int64_t second = 0;
};

using ValueFn = Status (*)(const ValueOpAttrs& attrs, std::span<const Value* const> inputs, std::span<Value> outputs);
using ParseFn = Expected<ValueOpAttrs> (*)(const graph::Node& node);

Expected<ValueOpAttrs> no_attributes(const graph::Node&) { return ValueOpAttrs{}; }

class FunctionValueKernel final : public ValueKernel {
 public:
  FunctionValueKernel(ValueOpAttrs attrs, ValueFn fn) : attrs_(attrs), fn_(fn) {}
  Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext&) const override {
    return fn_(attrs_, inputs, outputs);
  }

 private:
  ValueOpAttrs attrs_;
  ValueFn fn_;
};

template <ValueFn Fn, ParseFn Parse = no_attributes>
Expected<std::unique_ptr<Kernel>> create_function(const KernelInfo& info) {
  TRY_ASSIGN(ValueOpAttrs attrs, Parse(info.node));
  return std::unique_ptr<Kernel>(std::make_unique<FunctionValueKernel>(attrs, Fn));
}

Expected<ValueOpAttrs> parse_dtype(const graph::Node& node) {
  TRY_ASSIGN(int64_t dtype, node.attr_int("dtype", static_cast<int64_t>(DataType::kFloat32)));
  return ValueOpAttrs{dtype, 0};
}

Expected<ValueOpAttrs> parse_axis_keepdims(const graph::Node& node) {
  TRY_ASSIGN(int64_t axis, node.attr_int("axis", 0));
  TRY_ASSIGN(int64_t keepdims, node.attr_int("keepdims", 1));
  return ValueOpAttrs{axis, keepdims};
}

Expected<ValueOpAttrs> parse_axis_new_axis(const graph::Node& node) {
  TRY_ASSIGN(int64_t axis, node.attr_int("axis", 0));
  TRY_ASSIGN(int64_t new_axis, node.attr_int("new_axis", 0));
  return ValueOpAttrs{axis, new_axis};
}

// first: element type of the empty optional (-1 when the node has no 'type'); second: 1 for a sequence type.
Expected<ValueOpAttrs> parse_optional_type(const graph::Node& node) {
  const graph::Attribute* type = node.find_attribute("type");
  if (!type || type->types.empty()) return ValueOpAttrs{-1, 0};
  const graph::TypeInfo& info = type->types[0];
  const bool of_sequence = info.kind == graph::TypeInfo::Kind::kSequence;
  const DataType elem = of_sequence && info.element ? info.element->elem_type : info.elem_type;
  return ValueOpAttrs{static_cast<int64_t>(elem), of_sequence ? 1 : 0};
}

Status sequence_empty(const ValueOpAttrs& attrs, std::span<const Value* const>, std::span<Value> outputs) {
  outputs[0] = Value::sequence(static_cast<DataType>(attrs.first), {});
  return Status::ok();
}

Status sequence_construct(const ValueOpAttrs&, std::span<const Value* const> inputs, std::span<Value> outputs) {
  std::vector<Tensor> elements;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TRY_ASSIGN(const Tensor* tensor, tensor_input(inputs, i, "SequenceConstruct"));
    if (!elements.empty() && tensor->dtype() != elements[0].dtype()) {
      return make_error(StatusCode::kInvalidArgument, "SequenceConstruct: input ", i, " is ",
                        data_type_name(tensor->dtype()), " but input 0 is ", data_type_name(elements[0].dtype()));
    }
    elements.push_back(*tensor);
  }
  if (elements.empty()) return make_error(StatusCode::kInvalidArgument, "SequenceConstruct needs at least one input");
  const DataType dtype = elements[0].dtype();
  outputs[0] = Value::sequence(dtype, std::move(elements));
  return Status::ok();
}

Status sequence_insert(const ValueOpAttrs&, std::span<const Value* const> inputs, std::span<Value> outputs) {
  TRY_ASSIGN(const Value* sequence, sequence_input(inputs, 0, "SequenceInsert"));
  TRY_ASSIGN(const Tensor* tensor, tensor_input(inputs, 1, "SequenceInsert"));
  TRY(check_element_type(*sequence, *tensor, "SequenceInsert"));
  std::vector<Tensor> elements = sequence->elements();
  size_t at = elements.size();
  if (inputs.size() > 2 && inputs[2]) {
    TRY_ASSIGN(at, read_position(inputs[2], elements.size(), 1, "SequenceInsert"));
  }
  elements.insert(elements.begin() + static_cast<std::ptrdiff_t>(at), *tensor);
  outputs[0] = Value::sequence(tensor->dtype(), std::move(elements));
  return Status::ok();
}

Status sequence_at(const ValueOpAttrs&, std::span<const Value* const> inputs, std::span<Value> outputs) {
  TRY_ASSIGN(const Value* sequence, sequence_input(inputs, 0, "SequenceAt"));
  if (inputs.size() < 2 || !inputs[1]) return make_error(StatusCode::kInvalidArgument, "SequenceAt: missing position");
  TRY_ASSIGN(size_t at, read_position(inputs[1], sequence->elements().size(), 0, "SequenceAt"));
  outputs[0] = sequence->elements()[at];
  return Status::ok();
}

Status sequence_erase(const ValueOpAttrs&, std::span<const Value* const> inputs, std::span<Value> outputs) {
  TRY_ASSIGN(const Value* sequence, sequence_input(inputs, 0, "SequenceErase"));
  std::vector<Tensor> elements = sequence->elements();
  if (elements.empty()) return make_error(StatusCode::kInvalidArgument, "SequenceErase: the sequence is empty");
  size_t at = elements.size() - 1;
  if (inputs.size() > 1 && inputs[1]) {
    TRY_ASSIGN(at, read_position(inputs[1], elements.size(), 0, "SequenceErase"));
  }
  elements.erase(elements.begin() + static_cast<std::ptrdiff_t>(at));
  outputs[0] = Value::sequence(sequence->elem_type(), std::move(elements));
  return Status::ok();
}

Status sequence_length(const ValueOpAttrs&, std::span<const Value* const> inputs, std::span<Value> outputs) {
  TRY_ASSIGN(const Value* sequence, sequence_input(inputs, 0, "SequenceLength"));
  TRY_ASSIGN(Tensor length, Tensor::allocate(DataType::kInt64, Shape{}));
  length.data<int64_t>()[0] = static_cast<int64_t>(sequence->elements().size());
  outputs[0] = std::move(length);
  return Status::ok();
}

Status split_to_sequence(const ValueOpAttrs& attrs, std::span<const Value* const> inputs, std::span<Value> outputs) {
  TRY_ASSIGN(const Tensor* input, tensor_input(inputs, 0, "SplitToSequence"));
  const int64_t keepdims = attrs.second;
  TRY_ASSIGN(int64_t axis, normalize_axis(attrs.first, static_cast<int64_t>(input->rank()), "SplitToSequence", "axis"));
  const int64_t dim = input->shape()[axis];
  std::vector<int64_t> lengths;
  bool keep_axis = true;
  if (inputs.size() > 1 && inputs[1]) {
    TRY_ASSIGN(const Tensor* split, tensor_input(inputs, 1, "SplitToSequence"));
    TRY_ASSIGN(lengths, read_int_values(*split, "SplitToSequence", 1, "split"));
    if (split->rank() == 0) {
      const int64_t chunk = lengths[0];
      if (chunk <= 0) return make_error(StatusCode::kInvalidArgument, "SplitToSequence: split ", chunk, " must be > 0");
      lengths.clear();
      for (int64_t start = 0; start < dim; start += chunk) lengths.push_back(std::min(chunk, dim - start));
    }
  } else {
    lengths.assign(static_cast<size_t>(dim), 1);
    keep_axis = keepdims != 0;
  }
  int64_t total = 0;
  for (int64_t length : lengths) {
    if (length < 0) return make_error(StatusCode::kInvalidArgument, "SplitToSequence: negative split ", length);
    if (length > dim - total) {  // total <= dim holds, so the sum never overflows
      return make_error(StatusCode::kInvalidArgument, "SplitToSequence: split lengths sum to more than the ", dim,
                        " elements of axis ", axis);
    }
    total += length;
  }
  if (total != dim) {
    return make_error(StatusCode::kInvalidArgument, "SplitToSequence: split lengths sum to ", total,
                      " but axis ", axis, " has ", dim, " elements");
  }
  std::vector<Tensor> elements;
  int64_t start = 0;
  for (int64_t length : lengths) {
    TRY_ASSIGN(Tensor part, slice_along_axis(*input, axis, start, length, keep_axis, "SplitToSequence"));
    elements.push_back(std::move(part));
    start += length;
  }
  outputs[0] = Value::sequence(input->dtype(), std::move(elements));
  return Status::ok();
}

Status concat_from_sequence(const ValueOpAttrs& attrs, std::span<const Value* const> inputs,
                            std::span<Value> outputs) {
  TRY_ASSIGN(const Value* sequence, sequence_input(inputs, 0, "ConcatFromSequence"));
  const int64_t axis_attr = attrs.first;
  const int64_t new_axis = attrs.second;
  const std::vector<Tensor>& elements = sequence->elements();
  if (elements.empty()) return make_error(StatusCode::kInvalidArgument, "ConcatFromSequence: the sequence is empty");
  TRY_ASSIGN(int64_t axis, normalize_axis(axis_attr, static_cast<int64_t>(elements[0].rank()), "ConcatFromSequence",
                                          "axis", new_axis != 0 ? 1 : 0));
  TRY_ASSIGN(Tensor joined, join_along_axis(elements, axis, new_axis != 0, "ConcatFromSequence"));
  outputs[0] = std::move(joined);
  return Status::ok();
}

Status optional_wrap(const ValueOpAttrs& attrs, std::span<const Value* const> inputs, std::span<Value> outputs) {
  if (!inputs.empty() && inputs[0] && inputs[0]->is_set()) {
    outputs[0] = *inputs[0];
    return Status::ok();
  }
  if (attrs.first < 0) {
    return make_error(StatusCode::kInvalidArgument, "Optional: without an input the node needs the 'type' attribute");
  }
  outputs[0] = Value::none(static_cast<DataType>(attrs.first), attrs.second != 0);
  return Status::ok();
}

Status optional_has_element(const ValueOpAttrs&, std::span<const Value* const> inputs, std::span<Value> outputs) {
  TRY_ASSIGN(Tensor has, Tensor::allocate(DataType::kBool, Shape{}));
  has.data<bool>()[0] = !inputs.empty() && inputs[0] && inputs[0]->is_set() && !inputs[0]->is_none();
  outputs[0] = std::move(has);
  return Status::ok();
}

Status optional_get_element(const ValueOpAttrs&, std::span<const Value* const> inputs, std::span<Value> outputs) {
  if (inputs.empty() || !inputs[0] || !inputs[0]->is_set() || inputs[0]->is_none()) {
    return make_error(StatusCode::kInvalidArgument, "OptionalGetElement: the optional has no element");
  }
  outputs[0] = *inputs[0];
  return Status::ok();
}

// SequenceMap(sequence, extra...): runs the body once per element; an extra input that is a sequence contributes
// its element at the same position (it must have the same length), a tensor is passed whole every time.
class SequenceMapKernel final : public ValueKernel {
 public:
  static Expected<std::unique_ptr<Kernel>> create(const KernelInfo& info) {
    auto kernel = std::make_unique<SequenceMapKernel>();
    TRY_ASSIGN(kernel->body_, bind_subgraph(info, "body"));
    kernel->explicit_count_ = info.node.inputs.size();
    const graph::Graph& body = kernel->body_.graph();
    if (body.inputs.size() != info.node.inputs.size() || body.outputs.size() < info.node.outputs.size()) {
      return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": body has ", body.inputs.size(),
                        " inputs and ", body.outputs.size(), " outputs for a node with ", info.node.inputs.size(),
                        " inputs and ", info.node.outputs.size(), " outputs");
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status run_values(std::span<const Value* const> inputs, std::span<Value> outputs, RunContext& ctx) const override {
    TRY_ASSIGN(const Value* sequence, sequence_input(inputs, 0, "SequenceMap"));
    const size_t count = sequence->elements().size();
    for (size_t i = 1; i < explicit_count_; ++i) {
      if (!inputs[i]) return make_error(StatusCode::kInvalidArgument, "SequenceMap: input ", i, " is missing");
      if (inputs[i]->is_sequence() && inputs[i]->elements().size() != count) {
        return make_error(StatusCode::kInvalidArgument, "SequenceMap: input ", i, " has ",
                          inputs[i]->elements().size(), " elements, input 0 has ", count);
      }
    }
    const std::vector<const Value*> outer = body_.outer_values(inputs, explicit_count_);
    std::vector<Value> feeds(explicit_count_);
    std::vector<const Value*> feed_ptrs;
    for (const Value& feed : feeds) feed_ptrs.push_back(&feed);
    std::vector<std::vector<Tensor>> collected(outputs.size());
    std::vector<Value> results;
    for (size_t e = 0; e < count; ++e) {
      for (size_t i = 0; i < explicit_count_; ++i) {
        feeds[i] = inputs[i]->is_sequence() ? Value(inputs[i]->elements()[e]) : *inputs[i];
      }
      TRY(ctx.run_subgraph(*body_.compiled, feed_ptrs, outer, results));
      for (size_t o = 0; o < outputs.size(); ++o) {
        if (!results[o].is_tensor()) return make_error(StatusCode::kInvalidArgument, "SequenceMap: body output ", o,
                                                       " must be a tensor");
        collected[o].push_back(results[o].tensor());
      }
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      const graph::TypeInfo& declared = body_.graph().values[body_.graph().outputs[o]].type;
      const DataType dtype = collected[o].empty() ? declared.elem_type : collected[o][0].dtype();
      outputs[o] = Value::sequence(dtype, std::move(collected[o]));
    }
    return Status::ok();
  }

 private:
  BoundSubgraph body_;
  size_t explicit_count_ = 0;
};

constexpr KernelDef kSequenceKernels[] = {
    {"SequenceEmpty", "", 11, kLatestOpset, kAnyType, -1, create_function<sequence_empty, parse_dtype>},
    {"SequenceConstruct", "", 11, kLatestOpset, kAnyType, -1, create_function<sequence_construct>},
    {"SequenceInsert", "", 11, kLatestOpset, kAnyType, -1, create_function<sequence_insert>},
    {"SequenceAt", "", 11, kLatestOpset, kAnyType, -1, create_function<sequence_at>},
    {"SequenceErase", "", 11, kLatestOpset, kAnyType, -1, create_function<sequence_erase>},
    {"SequenceLength", "", 11, kLatestOpset, kAnyType, -1, create_function<sequence_length>},
    {"SplitToSequence", "", 11, kLatestOpset, kAnyType, -1, create_function<split_to_sequence, parse_axis_keepdims>},
    {"ConcatFromSequence", "", 11, kLatestOpset, kAnyType, -1, create_function<concat_from_sequence, parse_axis_new_axis>},
    {"SequenceMap", "", 17, kLatestOpset, kAnyType, -1, SequenceMapKernel::create},
    {"Optional", "", 15, kLatestOpset, kAnyType, -1, create_function<optional_wrap, parse_optional_type>},
    {"OptionalHasElement", "", 15, kLatestOpset, kAnyType, -1, create_function<optional_has_element>},
    {"OptionalGetElement", "", 15, kLatestOpset, kAnyType, -1, create_function<optional_get_element>},
};

}  // namespace

std::span<const KernelDef> sequence_kernels() { return kSequenceKernels; }

}  // namespace nxrt::cpu
