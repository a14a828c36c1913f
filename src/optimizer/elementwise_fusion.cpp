// Elementwise fusion: connected groups of same-shape float/double elementwise ops become one
// com.nxrt:FusedElementwise node that evaluates them chunk by chunk (see src/ep/cpu/elementwise/fused_elementwise.cpp for
// the program encoding). Groups are grown in topological order and kept convex: a node joins (or merges) a
// group only when no path leaves that group and comes back through a non-member, which would make a cycle.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>

#include "ep/cpu/kernel.h"
#include "optimizer/passes.h"
#include "optimizer/rewriter.h"

namespace nxrt::optimizer {

namespace {

using graph::kNoValue;

const std::set<std::string>& unary_ops() {
  static const std::set<std::string> ops = {"Neg", "Abs", "Sqrt", "Exp", "Log", "Relu",
                                            "Sigmoid", "Tanh", "Reciprocal"};
  return ops;
}

const std::set<std::string>& binary_ops() {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};
  return ops;
}

bool is_fusable_scalar(Rewriter& rw, int value, DataType dtype, size_t rank) {
  const Tensor* constant = rw.constant(value);
  return constant && constant->numel() == 1 && constant->dtype() == dtype && constant->rank() <= rank &&
         constant->device().type == DeviceType::kCpu;
}

bool is_candidate(Rewriter& rw, const graph::Node& node) {
  if (!node.domain.empty() || node.outputs.size() != 1 || node.outputs[0] == kNoValue) return false;
  if (node.opset < 7) return false;  // legacy broadcast attributes
  const bool unary = unary_ops().count(node.op_type) > 0;
  if (!unary && !binary_ops().count(node.op_type)) return false;
  if (node.inputs.size() != (unary ? 1u : 2u)) return false;
  const graph::TypeInfo& out = rw.value(node.outputs[0]).type;
  if (!same_static_or_symbolic_shape(out, out)) return false;
  if (out.elem_type != DataType::kFloat32 && out.elem_type != DataType::kFloat64) return false;
  bool any_tensor = false;
  for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
    const int input = node.inputs[slot];
    if (input == kNoValue) return false;
    const graph::TypeInfo& type = rw.value(input).type;
    const bool scalar = is_fusable_scalar(rw, input, out.elem_type, out.shape->size());
    // Pow's exponent must be a scalar constant of the base's type, so the kernel's std::pow matches Pow's.
    if (node.op_type == "Pow" && (slot == 1) != scalar) return false;
    if (scalar) continue;
    if (type.elem_type != out.elem_type || !same_static_or_symbolic_shape(type, out)) return false;
    any_tensor = true;
  }
  return any_tensor;
}

class GroupBuilder {
 public:
  explicit GroupBuilder(Rewriter& rw) : rw_(rw), group_of_(rw.node_count(), -1), reached_(rw.node_count()) {}

  void build() {
    for (int v = 0; v < rw_.node_count(); ++v) visit(v);
  }

  // Groups with at least two members, members in topological order.
  std::vector<std::vector<int>> groups() {
    std::vector<std::vector<int>> result;
    for (size_t g = 0; g < members_.size(); ++g) {
      if (find(static_cast<int>(g)) != static_cast<int>(g) || members_[g].size() < 2) continue;
      std::vector<int> sorted = members_[g];
      std::sort(sorted.begin(), sorted.end());
      result.push_back(std::move(sorted));
    }
    return result;
  }

 private:
  int find(int g) {
    while (parent_[g] != g) g = parent_[g] = parent_[parent_[g]];
    return g;
  }

  bool reaches(int node, int group) {
    for (int g : reached_[node]) {
      if (find(g) == group) return true;
    }
    return false;
  }

  // Merging is safe when neither group reaches a member of the other through a non-member.
  bool mergeable(int a, int b) {
    for (int m : members_[a]) {
      if (reaches(m, b)) return false;
    }
    for (int m : members_[b]) {
      if (reaches(m, a)) return false;
    }
    return true;
  }

  void unite(int into, int from) {
    parent_[from] = into;
    members_[into].insert(members_[into].end(), members_[from].begin(), members_[from].end());
    members_[from].clear();
  }

  std::vector<int> producers(const graph::Node& node) {
    std::vector<int> result;
    for (const auto* list : {&node.inputs, &node.implicit_inputs}) {
      for (int input : *list) {
        const int p = rw_.any_producer(input);  // foreign producers too: a group must not reach itself through them
        if (p >= 0 && std::find(result.begin(), result.end(), p) == result.end()) result.push_back(p);
      }
    }
    return result;
  }

  void visit(int v) {
    const graph::Node& node = rw_.node(v);
    const std::vector<int> sources = producers(node);
    std::set<int> blocked;
    for (int p : sources) {
      for (int g : reached_[p]) blocked.insert(find(g));
    }
    if (!rw_.is_foreign(v) && is_candidate(rw_, node)) {
      const graph::TypeInfo& type = rw_.value(node.outputs[0]).type;
      int group = -1;
      for (int p : sources) {
        if (group_of_[p] < 0) continue;
        const int option = find(group_of_[p]);
        if (option == group || blocked.count(option)) continue;
        const graph::TypeInfo& option_type = rw_.value(rw_.node(members_[option][0]).outputs[0]).type;
        if (option_type.elem_type != type.elem_type || !same_static_or_symbolic_shape(option_type, type)) continue;
        if (group < 0) {
          group = option;
        } else if (mergeable(group, option)) {
          unite(group, option);
        }
      }
      if (group < 0) {
        group = static_cast<int>(members_.size());
        parent_.push_back(group);
        members_.emplace_back();
      }
      group_of_[v] = group;
      members_[group].push_back(v);
    }
    std::set<int> reached;
    for (int p : sources) {
      for (int g : reached_[p]) reached.insert(find(g));
      if (group_of_[p] >= 0) reached.insert(find(group_of_[p]));
    }
    if (group_of_[v] >= 0) reached.erase(find(group_of_[v]));
    reached_[v].assign(reached.begin(), reached.end());
  }

  Rewriter& rw_;
  std::vector<int> group_of_;              // node -> group id (union-find element), -1 when not a candidate
  std::vector<std::vector<int>> reached_;  // node -> groups reaching it without it being a member
  std::vector<int> parent_;
  std::vector<std::vector<int>> members_;
};

template <class T>
Tensor constants_tensor(const std::vector<double>& values) {
  auto tensor = Tensor::allocate(data_type_of<T>, Shape{static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) tensor->template data<T>()[i] = static_cast<T>(values[i]);
  return std::move(*tensor);
}

std::optional<std::vector<int64_t>> int_constant(Rewriter& rw, const graph::Node& node, size_t slot) {
  if (slot >= node.inputs.size() || node.inputs[slot] == kNoValue) return std::nullopt;
  const Tensor* t = rw.constant(node.inputs[slot]);
  if (!t || t->dtype() != DataType::kInt64 || t->rank() != 1) return std::nullopt;
  return std::vector<int64_t>(t->data<int64_t>(), t->data<int64_t>() + t->numel());
}

// An external input read through a Slice that selects one contiguous block of a statically shaped tensor (a range
// of axis 0, every other axis whole, steps 1): the group can read that tensor at an element offset instead.
struct SlicedInput {
  int source = kNoValue;
  int64_t offset = -1;
};

SlicedInput absorbable_slice(Rewriter& rw, int value, DataType dtype) {
  const int s = rw.producer(value);
  if (s < 0) return {};
  const graph::Node& slice = rw.node(s);
  if (!slice.domain.empty() || slice.op_type != "Slice" || slice.opset < 10 || slice.inputs.size() < 3) return {};
  const int source = slice.inputs[0];
  const auto& type = rw.value(source).type;
  if (!type.is_tensor() || type.elem_type != dtype || !type.shape) return {};
  const auto shape = graph::concrete_shape_of(*type.shape);
  const auto starts = int_constant(rw, slice, 1);
  const auto ends = int_constant(rw, slice, 2);
  if (!shape || shape->empty() || !starts || !ends || starts->size() != ends->size()) return {};
  std::vector<int64_t> axes(starts->size());
  std::iota(axes.begin(), axes.end(), 0);
  if (slice.inputs.size() > 3 && slice.inputs[3] != kNoValue) {
    const auto given = int_constant(rw, slice, 3);
    if (!given || given->size() != starts->size()) return {};
    axes = *given;
  }
  if (slice.inputs.size() > 4 && slice.inputs[4] != kNoValue) {
    const auto steps = int_constant(rw, slice, 4);
    if (!steps || std::any_of(steps->begin(), steps->end(), [](int64_t step) { return step != 1; })) return {};
  }
  const int64_t rank = static_cast<int64_t>(shape->size());
  int64_t first_row = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return {};
    const int64_t dim = (*shape)[axis];
    const auto clamp = [dim](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + dim : v, 0, dim); };
    const int64_t start = clamp((*starts)[i]);
    const int64_t end = clamp((*ends)[i]);
    if (axis == 0) {
      first_row = start;
    } else if (start != 0 || end != dim) {
      return {};
    }
  }
  int64_t row = 1;
  for (int64_t i = 1; i < rank; ++i) row *= (*shape)[i];
  return {source, first_row * row};
}

void fuse_group(Rewriter& rw, const std::vector<int>& members) {
  std::set<int> member_set(members.begin(), members.end());
  const graph::TypeInfo& group_type = rw.value(rw.node(members[0]).outputs[0]).type;
  const DataType dtype = group_type.elem_type;
  const std::optional<Shape> static_shape = graph::concrete_shape_of(*group_type.shape);
  std::vector<int> inputs;          // values the group reads (as fused-node inputs)
  std::vector<int64_t> offsets;     // per fused-node input: element offset, -1 for a plain input
  std::vector<int> input_values;    // per fused-node input: the group value it stands for
  std::vector<double> constants;
  std::vector<int> constant_values;
  // First pass: external tensor inputs and constants, so operand numbering is known.
  for (int m : members) {
    for (int input : rw.node(m).inputs) {
      const int p = rw.producer(input);
      if (p >= 0 && member_set.count(p)) continue;
      if (is_fusable_scalar(rw, input, dtype, 0xffff)) {
        if (std::find(constant_values.begin(), constant_values.end(), input) == constant_values.end()) {
          constant_values.push_back(input);
          constants.push_back(*rw.scalar_constant(input));
        }
      } else if (std::find(input_values.begin(), input_values.end(), input) == input_values.end()) {
        const SlicedInput sliced = static_shape ? absorbable_slice(rw, input, dtype) : SlicedInput{};
        input_values.push_back(input);
        inputs.push_back(sliced.source == kNoValue ? input : sliced.source);
        offsets.push_back(sliced.offset);
      }
    }
  }
  const bool any_offset = std::any_of(offsets.begin(), offsets.end(), [](int64_t o) { return o >= 0; });
  const int64_t constant_base = static_cast<int64_t>(inputs.size());
  const int64_t result_base = constant_base + static_cast<int64_t>(constants.size());
  std::vector<std::string> ops;
  std::vector<std::string> node_names;
  std::vector<int64_t> operands;
  std::vector<int64_t> results;
  std::vector<int> outputs;
  std::string name;
  for (size_t i = 0; i < members.size(); ++i) {
    const graph::Node& node = rw.node(members[i]);
    ops.push_back(node.op_type);
    node_names.push_back(node.name);
    for (size_t slot = 0; slot < 2; ++slot) {
      if (slot >= node.inputs.size()) {
        operands.push_back(-1);
        continue;
      }
      const int input = node.inputs[slot];
      const int p = rw.producer(input);
      if (p >= 0 && member_set.count(p)) {
        operands.push_back(result_base + (std::find(members.begin(), members.end(), p) - members.begin()));
      } else if (auto c = std::find(constant_values.begin(), constant_values.end(), input); c != constant_values.end()) {
        operands.push_back(constant_base + (c - constant_values.begin()));
      } else {
        operands.push_back(std::find(input_values.begin(), input_values.end(), input) - input_values.begin());
      }
    }
    const int output = node.outputs[0];
    bool read_outside = !rw.is_private(output);
    for (int reader : rw.value(output).consumers) read_outside = read_outside || !member_set.count(reader);
    if (read_outside) {
      outputs.push_back(output);
      results.push_back(result_base + static_cast<int64_t>(i));
    }
    if (!name.empty()) name += "+";
    name += node.name.empty() ? node.op_type : node.name;
  }
  graph::Node fused;
  fused.op_type = "FusedElementwise";
  fused.domain = kNxrtDomain;
  fused.opset = 1;
  fused.name = name.size() > 200 ? name.substr(0, 200) + "+..." : name;
  fused.inputs = inputs;
  fused.outputs = outputs;
  graph::Attribute op_names;
  op_names.name = "ops";
  op_names.type = graph::Attribute::Type::kStrings;
  op_names.strings = std::move(ops);
  fused.attributes.push_back(std::move(op_names));
  graph::Attribute names_attribute;
  names_attribute.name = "node_names";
  names_attribute.type = graph::Attribute::Type::kStrings;
  names_attribute.strings = std::move(node_names);
  fused.attributes.push_back(std::move(names_attribute));
  fused.attributes.push_back(make_ints_attribute("operands", std::move(operands)));
  fused.attributes.push_back(make_ints_attribute("results", std::move(results)));
  fused.attributes.push_back(make_tensor_attribute(
      "constants", dtype == DataType::kFloat64 ? constants_tensor<double>(constants) : constants_tensor<float>(constants)));
  if (any_offset) {
    fused.attributes.push_back(make_ints_attribute("input_offsets", offsets));
    fused.attributes.push_back(make_ints_attribute("output_shape", *static_shape));
  }
  for (int m : members) rw.remove(m);
  rw.add(std::move(fused));
}

}  // namespace

Expected<bool> fuse_elementwise(graph::Graph& graph, std::string_view owner) {
  if (!cpu::find_kernel(kNxrtDomain, "FusedElementwise", 1)) return false;
  Rewriter rw(graph, owner);
  GroupBuilder builder(rw);
  builder.build();
  for (const std::vector<int>& members : builder.groups()) fuse_group(rw, members);
  TRY(rw.finish());
  return rw.changed();
}

}  // namespace nxrt::optimizer
