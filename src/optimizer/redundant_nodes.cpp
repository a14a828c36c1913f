// Redundant-node removal: nodes that return their input unchanged, pairs that cancel, and dead nodes.
#include <algorithm>
#include <numeric>

#include "optimizer/passes.h"
#include "optimizer/rewriter.h"

namespace nxrt::optimizer {

namespace {

using graph::kNoValue;

bool is_onnx(const graph::Node& node, const char* op_type) { return node.domain.empty() && node.op_type == op_type; }

std::optional<std::vector<int64_t>> constant_ints(Rewriter& rw, int value) {
  const Tensor* tensor = rw.constant(value);
  if (!tensor || tensor->dtype() != DataType::kInt64 || tensor->rank() > 1) return std::nullopt;
  return std::vector<int64_t>(tensor->data<int64_t>(), tensor->data<int64_t>() + tensor->numel());
}

std::optional<int64_t> rank_of(Rewriter& rw, int value) {
  const auto& type = rw.value(value).type;
  if (!type.is_tensor() || !type.shape) return std::nullopt;
  return static_cast<int64_t>(type.shape->size());
}

// Squeeze / Unsqueeze axes from the attribute (opset < 13) or the constant second input, normalised against
// `rank` and sorted; nullopt when absent or not constant.
std::optional<std::vector<int64_t>> raw_squeeze_axes(Rewriter& rw, const graph::Node& node) {
  std::optional<std::vector<int64_t>> axes;
  if (node.opset < 13) {
    if (!node.find_attribute("axes")) return std::nullopt;
    auto attr = node.attr_ints("axes", {});
    if (!attr) return std::nullopt;
    axes = *attr;
  } else {
    if (node.inputs.size() < 2 || node.inputs[1] == kNoValue) return std::nullopt;
    axes = constant_ints(rw, node.inputs[1]);
  }
  if (!axes || axes->empty()) return std::nullopt;
  return axes;
}

std::optional<std::vector<int64_t>> squeeze_axes(Rewriter& rw, const graph::Node& node, int64_t rank) {
  auto axes = raw_squeeze_axes(rw, node);
  if (!axes) return std::nullopt;
  for (int64_t& axis : *axes) {
    if (axis < -rank || axis >= rank) return std::nullopt;
    if (axis < 0) axis += rank;
  }
  std::sort(axes->begin(), axes->end());
  return axes;
}

// Reshape whose constant target shape resolves to its input's (known or symbolic) shape.
bool reshape_keeps_shape(Rewriter& rw, const graph::Node& node) {
  const auto target = constant_ints(rw, node.inputs[1]);
  const auto& in = rw.value(node.inputs[0]).type;
  auto allow_zero = node.attr_int("allowzero", 0);
  if (!target || !allow_zero || !in.is_tensor() || !in.shape || in.shape->size() != target->size()) return false;
  int inferred = 0;
  for (size_t i = 0; i < target->size(); ++i) {
    const graph::Dim& dim = (*in.shape)[i];
    const int64_t t = (*target)[i];
    if (t == 0 && !*allow_zero) continue;
    if (dim.is_known() && dim.value == t) continue;
    if (t == -1 && inferred++ == 0) continue;  // the one inferred dim: all others match, so it matches too
    return false;
  }
  return true;
}

// Value `node` passes through unchanged (its output 0 equals it), or kNoValue.
int pass_through_input(Rewriter& rw, const graph::Node& node) {
  if (node.inputs.empty() || node.inputs[0] == kNoValue || node.outputs.empty()) return kNoValue;
  const int x = node.inputs[0];
  if (is_onnx(node, "Identity")) return x;
  if (is_onnx(node, "Dropout")) {
    const bool mask_used = node.outputs.size() > 1 && node.outputs[1] != kNoValue &&
                           (!rw.is_private(node.outputs[1]) || !rw.value(node.outputs[1]).consumers.empty());
    if (mask_used) return kNoValue;
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
      const auto training = rw.scalar_constant(node.inputs[2]);
      if (!training || *training != 0) return kNoValue;
    }
    return x;
  }
  const auto& in_type = rw.value(x).type;
  const auto& out_type = rw.value(node.outputs[0]).type;
  if (is_onnx(node, "Cast")) {
    auto to = node.attr_int("to", 0);
    return to && in_type.is_tensor() && static_cast<int64_t>(in_type.elem_type) == *to ? x : kNoValue;
  }
  if (is_onnx(node, "Expand") && node.inputs.size() > 1) {
    const auto target = constant_ints(rw, node.inputs[1]);
    if (!target || !in_type.is_tensor() || !in_type.shape || target->size() > in_type.shape->size()) return kNoValue;
    const size_t offset = in_type.shape->size() - target->size();
    for (size_t i = 0; i < target->size(); ++i) {
      const graph::Dim& dim = (*in_type.shape)[offset + i];
      if ((*target)[i] != 1 && !(dim.is_known() && dim.value == (*target)[i])) return kNoValue;
    }
    return x;
  }
  if (is_onnx(node, "Transpose")) {
    auto perm = node.attr_ints("perm", {});
    if (!perm || perm->empty()) return kNoValue;
    for (size_t i = 0; i < perm->size(); ++i) {
      if ((*perm)[i] != static_cast<int64_t>(i)) return kNoValue;
    }
    return x;
  }
  if (is_onnx(node, "Reshape") && node.inputs.size() > 1 && reshape_keeps_shape(rw, node)) return x;
  if ((is_onnx(node, "Reshape") || is_onnx(node, "Squeeze") || is_onnx(node, "Unsqueeze") ||
       is_onnx(node, "Flatten")) &&
      same_static_or_symbolic_shape(in_type, out_type)) {
    // Same rank and dims: the reshape is a no-op.
    return x;
  }
  return kNoValue;
}

// Reshape(Reshape(x)) -> Reshape(x) when the outer shape does not copy dims (no 0 entries unless allowzero).
bool collapse_reshape(Rewriter& rw, int n) {
  const graph::Node& node = rw.node(n);
  if (!is_onnx(node, "Reshape") || node.inputs.size() < 2) return false;
  const int inner = rw.producer(node.inputs[0]);
  if (inner < 0 || !is_onnx(rw.node(inner), "Reshape")) return false;
  const auto shape = constant_ints(rw, node.inputs[1]);
  auto allow_zero = node.attr_int("allowzero", 0);
  if (!shape || !allow_zero) return false;
  if (!*allow_zero && std::find(shape->begin(), shape->end(), 0) != shape->end()) return false;
  rw.set_input(n, 0, rw.node(inner).inputs[0]);
  return true;
}

// Transpose(Transpose(x, p1), p2) -> Transpose(x, p1[p2[i]]); the identity result is then bypassed.
bool compose_transposes(Rewriter& rw, int n) {
  graph::Node& node = rw.node(n);
  if (!is_onnx(node, "Transpose")) return false;
  const int inner = rw.producer(node.inputs[0]);
  if (inner < 0 || !is_onnx(rw.node(inner), "Transpose")) return false;
  auto outer_perm = node.attr_ints("perm", {});
  auto inner_perm = rw.node(inner).attr_ints("perm", {});
  if (!outer_perm || !inner_perm || outer_perm->empty() || outer_perm->size() != inner_perm->size()) return false;
  std::vector<int64_t> composed(outer_perm->size());
  for (size_t i = 0; i < composed.size(); ++i) {
    const int64_t p = (*outer_perm)[i];
    if (p < 0 || p >= static_cast<int64_t>(composed.size())) return false;
    composed[i] = (*inner_perm)[p];
  }
  set_attribute(node, make_ints_attribute("perm", composed));
  rw.set_input(n, 0, rw.node(inner).inputs[0]);
  return true;
}

// Unsqueeze(Squeeze(x, a), a) -> x and Squeeze(Unsqueeze(x, a), a) -> x.
int cancel_squeeze_pair(Rewriter& rw, const graph::Node& node) {
  const bool outer_unsqueeze = is_onnx(node, "Unsqueeze");
  if (!outer_unsqueeze && !is_onnx(node, "Squeeze")) return kNoValue;
  if (node.inputs.empty() || node.inputs[0] == kNoValue) return kNoValue;
  const int inner = rw.producer(node.inputs[0]);
  if (inner < 0 || !is_onnx(rw.node(inner), outer_unsqueeze ? "Squeeze" : "Unsqueeze")) return kNoValue;
  const int x = rw.node(inner).inputs[0];
  // Axes of both nodes index the higher-rank tensor: x for Squeeze-then-Unsqueeze, the middle value otherwise.
  auto rank = rank_of(rw, x);
  if (!rank) return kNoValue;
  if (!outer_unsqueeze) {
    const auto inserted = raw_squeeze_axes(rw, rw.node(inner));
    if (!inserted) return kNoValue;
    *rank += static_cast<int64_t>(inserted->size());
  }
  const auto a = squeeze_axes(rw, node, *rank);
  const auto b = squeeze_axes(rw, rw.node(inner), *rank);
  return a && b && *a == *b ? x : kNoValue;
}

bool is_dead(Rewriter& rw, const graph::Node& node) {
  for (int output : node.outputs) {
    if (output != kNoValue && (!rw.is_private(output) || !rw.value(output).consumers.empty())) return false;
  }
  return true;
}

}  // namespace

Expected<bool> remove_redundant_nodes(graph::Graph& graph, std::string_view owner) {
  Rewriter rw(graph, owner);
  for (int n = 0; n < rw.node_count(); ++n) {
    if (rw.is_foreign(n)) continue;
    if (collapse_reshape(rw, n) || compose_transposes(rw, n)) {
      // The node now reads further up; it may also have become a no-op, checked below.
    }
    const graph::Node& node = rw.node(n);
    int source = pass_through_input(rw, node);
    if (source == kNoValue) source = cancel_squeeze_pair(rw, node);
    if (source == kNoValue || node.outputs.empty()) continue;
    const int output = node.outputs[0];
    if (rw.replace_value(output, source)) rw.remove(n);
  }
  for (int n = rw.node_count() - 1; n >= 0; --n) {
    if (rw.is_matchable(n) && is_dead(rw, rw.node(n))) rw.remove(n);
  }
  TRY(rw.finish());
  return rw.changed();
}

}  // namespace nxrt::optimizer
