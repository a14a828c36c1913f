// Type completion for the optimizer: fills in the tensor types that shape inference leaves unknown for ops the
// fusions look at (elementwise math, Slice with constant bounds, shape-preserving ops), so fusion checks that need
// shapes can run. Only types that are unknown or shapeless are written; known types are never changed.
#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

#include "ep/cpu/conv/conv_common.h"
#include "graph/shape_inference.h"
#include "optimizer/passes.h"
#include "optimizer/rewriter.h"

namespace nxrt::optimizer {

namespace {

using graph::Dim;
using graph::kNoValue;
using graph::SymbolicShape;
using graph::TypeInfo;

bool needs_type(const TypeInfo& type) { return !type.is_tensor() || !type.shape; }

bool has_shape(const TypeInfo& type) { return type.is_tensor() && type.shape.has_value(); }

// Ops whose output 0 has input 0's type.
bool preserves_input_type(const std::string& op) {
  static const std::set<std::string> ops = {
      "Neg", "Abs", "Sqrt", "Exp", "Log", "Erf", "Reciprocal", "Relu", "Sigmoid", "Tanh", "Softplus", "Softsign",
      "Ceil", "Floor", "Round", "Sin", "Cos", "LeakyRelu", "Gelu", "HardSigmoid", "HardSwish", "Clip", "Elu",
      "Selu", "Celu", "Mish", "Dropout", "Softmax", "LogSoftmax", "LayerNormalization", "Sign", "Identity"};
  return ops.count(op) > 0;
}

std::optional<SymbolicShape> broadcast(const SymbolicShape& a, const SymbolicShape& b) {
  SymbolicShape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const Dim x = i < out.size() - a.size() ? Dim::known(1) : a[i - (out.size() - a.size())];
    const Dim y = i < out.size() - b.size() ? Dim::known(1) : b[i - (out.size() - b.size())];
    if (x == y) {
      out[i] = x;
    } else if (x.is_known() && x.value == 1) {
      out[i] = y;
    } else if (y.is_known() && y.value == 1) {
      out[i] = x;
    } else if (x.is_known() && y.is_known()) {
      return std::nullopt;  // incompatible: leave it to the kernel's error
    } else {
      out[i] = Dim::unknown();
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> constant_ints(Rewriter& rw, const graph::Node& node, size_t slot) {
  if (slot >= node.inputs.size() || node.inputs[slot] == kNoValue) return std::nullopt;
  const Tensor* t = rw.constant(node.inputs[slot]);
  if (!t || t->rank() > 1) return std::nullopt;
  std::vector<int64_t> values(t->numel());
  for (int64_t i = 0; i < t->numel(); ++i) {
    if (t->dtype() == DataType::kInt64) {
      values[i] = t->data<int64_t>()[i];
    } else if (t->dtype() == DataType::kInt32) {
      values[i] = t->data<int32_t>()[i];
    } else {
      return std::nullopt;
    }
  }
  return values;
}

// Slice (opset >= 10) with constant starts, ends, axes and steps.
std::optional<SymbolicShape> slice_shape(Rewriter& rw, const graph::Node& node, const SymbolicShape& in) {
  if (node.opset < 10) return std::nullopt;
  const auto starts = constant_ints(rw, node, 1);
  const auto ends = constant_ints(rw, node, 2);
  if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
  std::vector<int64_t> axes(starts->size());
  std::iota(axes.begin(), axes.end(), 0);
  std::vector<int64_t> steps(starts->size(), 1);
  if (node.inputs.size() > 3 && node.inputs[3] != kNoValue) {
    const auto given = constant_ints(rw, node, 3);
    if (!given || given->size() != starts->size()) return std::nullopt;
    axes = *given;
  }
  if (node.inputs.size() > 4 && node.inputs[4] != kNoValue) {
    const auto given = constant_ints(rw, node, 4);
    if (!given || given->size() != starts->size()) return std::nullopt;
    steps = *given;
  }
  SymbolicShape out = in;
  const int64_t rank = static_cast<int64_t>(in.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank || steps[i] == 0) return std::nullopt;
    const Dim& dim = in[axis];
    if (!dim.is_known()) {
      const bool whole = steps[i] == 1 && (*starts)[i] == 0 && (*ends)[i] >= std::numeric_limits<int32_t>::max();
      out[axis] = whole ? dim : Dim::unknown();
      continue;
    }
    const int64_t n = dim.value;
    const int64_t step = steps[i];
    const auto clamp_index = [&](int64_t v, bool is_end) {
      if (v < 0) v += n;
      if (step > 0) return std::clamp<int64_t>(v, 0, n);
      return std::clamp<int64_t>(v, is_end ? -1 : 0, n - 1);
    };
    const int64_t start = clamp_index((*starts)[i], false);
    const int64_t end = clamp_index((*ends)[i], true);
    const int64_t length = step > 0 ? (end - start + step - 1) / step : (start - end + (-step) - 1) / (-step);
    out[axis] = Dim::known(std::max<int64_t>(length, 0));
  }
  return out;
}

// Conv / MaxPool / AveragePool: [N, channels, spatial...] with the output sizes the kernels compute
// (conv::resolve_geometry); nullopt when an attribute is malformed or a spatial input dim is unknown.
std::optional<SymbolicShape> window_shape(const graph::Node& node, const SymbolicShape& in, Dim channels,
                                          const std::vector<int64_t>& kernel, const cpu::conv::WindowAttrs& attrs) {
  if (in.size() != kernel.size() + 2) return std::nullopt;
  std::vector<int64_t> spatial;
  for (size_t i = 2; i < in.size(); ++i) {
    if (!in[i].is_known()) return std::nullopt;
    spatial.push_back(in[i].value);
  }
  auto geometry = cpu::conv::resolve_geometry(attrs, spatial, kernel, node.describe());
  if (!geometry) return std::nullopt;
  SymbolicShape out{in[0], channels};
  for (int64_t size : geometry->out) out.push_back(Dim::known(size));
  return out;
}

std::optional<SymbolicShape> matmul_shape(const SymbolicShape& a, const SymbolicShape& b) {
  if (a.empty() || b.empty()) return std::nullopt;
  const SymbolicShape a_batch(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
  const SymbolicShape b_batch(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
  auto out = broadcast(a_batch, b_batch);
  if (!out) return std::nullopt;
  if (a.size() >= 2) out->push_back(a[a.size() - 2]);
  if (b.size() >= 2) out->push_back(b.back());
  return out;
}

// Shapes of the windowed and linear-algebra ops the fusions follow (Conv, pools, MatMul, Gemm).
std::optional<SymbolicShape> layer_shape(Rewriter& rw, const graph::Node& node, const SymbolicShape& in) {
  const std::string& op = node.op_type;
  const auto second_shape = [&]() -> const SymbolicShape* {
    if (node.inputs.size() < 2 || node.inputs[1] == kNoValue) return nullptr;
    const TypeInfo& type = rw.value(node.inputs[1]).type;
    return has_shape(type) ? &*type.shape : nullptr;
  };
  if (op == "Conv") {
    const SymbolicShape* w = second_shape();
    if (!w || w->size() != in.size() || w->size() < 3) return std::nullopt;
    std::vector<int64_t> kernel;
    for (size_t i = 2; i < w->size(); ++i) {
      if (!(*w)[i].is_known()) return std::nullopt;
      kernel.push_back((*w)[i].value);
    }
    auto attrs = cpu::conv::parse_window_attrs(node);
    return attrs ? window_shape(node, in, (*w)[0], kernel, *attrs) : std::nullopt;
  }
  if (op == "MaxPool" || op == "AveragePool") {
    if (node.outputs.size() > 1 || in.size() < 3) return std::nullopt;
    auto attrs = cpu::conv::parse_window_attrs(node);
    return attrs ? window_shape(node, in, in[1], attrs->kernel_shape, *attrs) : std::nullopt;
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    if (in.size() < 3) return std::nullopt;
    SymbolicShape out{in[0], in[1]};
    out.resize(in.size(), Dim::known(1));
    return out;
  }
  if (op == "MatMul") {
    const SymbolicShape* b = second_shape();
    return b ? matmul_shape(in, *b) : std::nullopt;
  }
  if (op == "Gemm") {
    const SymbolicShape* b = second_shape();
    auto trans_a = node.attr_int("transA", 0);
    auto trans_b = node.attr_int("transB", 0);
    if (!b || in.size() != 2 || b->size() != 2 || !trans_a || !trans_b) return std::nullopt;
    return SymbolicShape{in[*trans_a ? 1 : 0], (*b)[*trans_b ? 0 : 1]};
  }
  return std::nullopt;
}

// Concat: input shapes agree off `axis`; the axis dim is the sum (unknown when any part is).
std::optional<SymbolicShape> concat_shape(Rewriter& rw, const graph::Node& node, const SymbolicShape& first) {
  const auto axis_attr = node.attr_int("axis", 0);
  const int64_t rank = static_cast<int64_t>(first.size());
  if (!axis_attr || rank == 0) return std::nullopt;
  const int64_t axis = *axis_attr < 0 ? *axis_attr + rank : *axis_attr;
  if (axis < 0 || axis >= rank) return std::nullopt;
  SymbolicShape out = first;
  int64_t total = 0;
  bool known = true;
  for (int input : node.inputs) {
    if (input == kNoValue || !has_shape(rw.value(input).type)) return std::nullopt;
    const SymbolicShape& shape = *rw.value(input).type.shape;
    if (static_cast<int64_t>(shape.size()) != rank) return std::nullopt;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && !(shape[d] == out[d])) {
        if (shape[d].is_known() && out[d].is_known()) return std::nullopt;
        if (!out[d].is_known()) out[d] = shape[d];
      }
    }
    known = known && shape[axis].is_known();
    if (known) total += shape[axis].value;
  }
  out[axis] = known ? Dim::known(total) : Dim::unknown();
  return out;
}

std::optional<TypeInfo> completed_type(Rewriter& rw, const graph::Node& node) {
  if (!node.domain.empty() || node.inputs.empty() || node.inputs[0] == kNoValue) return std::nullopt;
  const TypeInfo& first = rw.value(node.inputs[0]).type;
  if (!has_shape(first)) return std::nullopt;
  const std::string& op = node.op_type;
  if (preserves_input_type(op)) return first;
  if (auto shape = layer_shape(rw, node, *first.shape)) return TypeInfo::tensor(first.elem_type, std::move(shape));
  if (op == "Concat") {
    auto shape = concat_shape(rw, node, *first.shape);
    if (!shape) return std::nullopt;
    return TypeInfo::tensor(first.elem_type, std::move(shape));
  }
  if (op == "Slice") {
    auto shape = slice_shape(rw, node, *first.shape);
    if (!shape) return std::nullopt;
    return TypeInfo::tensor(first.elem_type, std::move(shape));
  }
  static const std::set<std::string> kBroadcasting = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  if (kBroadcasting.count(op) && node.inputs.size() == 2 && node.inputs[1] != kNoValue) {
    const TypeInfo& second = rw.value(node.inputs[1]).type;
    if (!has_shape(second)) return std::nullopt;
    auto shape = broadcast(*first.shape, *second.shape);
    if (!shape) return std::nullopt;
    return TypeInfo::tensor(first.elem_type, std::move(shape));
  }
  return std::nullopt;
}

}  // namespace

Expected<bool> complete_types(graph::Graph& graph) {
  Rewriter rw(graph);
  for (int n = 0; n < rw.node_count(); ++n) {
    const graph::Node& node = rw.node(n);
    // Inputs may have gained types since shape inference ran (from the rules below): rerun its rule first.
    // Conflicts it finds are left to the kernels to report.
    (void)graph::infer_node_types(graph, node);
    if (node.outputs.empty() || node.outputs[0] == kNoValue || !needs_type(rw.value(node.outputs[0]).type)) continue;
    auto type = completed_type(rw, node);
    if (!type) continue;
    const TypeInfo& declared = rw.value(node.outputs[0]).type;
    if (declared.is_tensor() && declared.elem_type != DataType::kUndefined && declared.elem_type != type->elem_type) {
      continue;
    }
    rw.value(node.outputs[0]).type = std::move(*type);
  }
  return false;
}

}  // namespace nxrt::optimizer
