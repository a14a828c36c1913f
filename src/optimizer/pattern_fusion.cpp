// Pattern fusions of exporter-expanded subgraphs back into single ops: Gelu (erf and tanh forms) and
// LayerNormalization. Every matched intermediate must be private to the pattern (one reader, not a graph output,
// not read by a subgraph); the fused node takes over the pattern's final output value.
#include <cmath>
#include <numbers>

#include "ep/cpu/kernel.h"
#include "optimizer/passes.h"
#include "optimizer/rewriter.h"

namespace nxrt::optimizer {

namespace {

using graph::kNoValue;

bool near(double value, double expected) { return std::fabs(value - expected) <= 1e-4 * std::fabs(expected); }

// The node producing `value` when it is an ONNX `op_type` node whose output only `reader` reads.
int private_producer(Rewriter& rw, int value, const char* op_type) {
  const int p = rw.producer(value);
  if (p < 0 || !rw.node(p).domain.empty() || rw.node(p).op_type != op_type || rw.node(p).outputs.size() != 1) return -1;
  return p;
}

// For a two-input node: the input other than the one equal to constant `c` (within tolerance); kNoValue if neither.
int other_than_constant(Rewriter& rw, const graph::Node& node, double c) {
  if (node.inputs.size() != 2) return kNoValue;
  for (int slot = 0; slot < 2; ++slot) {
    const auto k = rw.scalar_constant(node.inputs[slot]);
    if (k && near(*k, c)) return node.inputs[1 - slot];
  }
  return kNoValue;
}

// Sole reader of `value` when it is an ONNX `op_type` node.
int sole_reader(Rewriter& rw, int value, const char* op_type) {
  const int n = rw.sole_consumer(value);
  if (n < 0 || !rw.node(n).domain.empty() || rw.node(n).op_type != op_type || rw.node(n).outputs.size() != 1) return -1;
  return n;
}

struct GeluMatch {
  std::vector<int> nodes;
  int output = kNoValue;
};

// From `core` (the Erf or Tanh output): Add(core, 1) then either Mul(x, .) and Mul(., 0.5), or Mul(Mul(x, 0.5), .).
bool match_gelu_tail(Rewriter& rw, int core, int x, GeluMatch& match) {
  const int add = sole_reader(rw, core, "Add");
  if (add < 0 || other_than_constant(rw, rw.node(add), 1.0) != core) return false;
  const int one_plus = rw.node(add).outputs[0];
  const int mul = sole_reader(rw, one_plus, "Mul");
  if (mul < 0) return false;
  const graph::Node& m = rw.node(mul);
  const int other = m.inputs[0] == one_plus ? m.inputs[1] : m.inputs[0];
  match.nodes.push_back(add);
  match.nodes.push_back(mul);
  if (other == x) {
    const int half = sole_reader(rw, m.outputs[0], "Mul");
    if (half < 0 || other_than_constant(rw, rw.node(half), 0.5) != m.outputs[0]) return false;
    match.nodes.push_back(half);
    match.output = rw.node(half).outputs[0];
    return true;
  }
  const int half = private_producer(rw, other, "Mul");
  if (half < 0 || rw.sole_consumer(other) != mul || other_than_constant(rw, rw.node(half), 0.5) != x) return false;
  match.nodes.push_back(half);
  match.output = m.outputs[0];
  return true;
}

// Erf(x / sqrt(2)) or Erf(x * (1 / sqrt(2))) followed by the tail.
std::optional<std::pair<int, GeluMatch>> match_erf_gelu(Rewriter& rw, int erf) {
  const graph::Node& node = rw.node(erf);
  const int scaled = node.inputs[0];
  int x = kNoValue;
  int scale = private_producer(rw, scaled, "Div");
  if (scale >= 0 && rw.sole_consumer(scaled) == erf) {
    const auto k = rw.scalar_constant(rw.node(scale).inputs[1]);
    if (k && near(*k, std::sqrt(2.0))) x = rw.node(scale).inputs[0];
  } else if ((scale = private_producer(rw, scaled, "Mul")) >= 0 && rw.sole_consumer(scaled) == erf) {
    x = other_than_constant(rw, rw.node(scale), std::sqrt(0.5));
  }
  if (x == kNoValue) return std::nullopt;
  GeluMatch match{{scale, erf}, kNoValue};
  if (!match_gelu_tail(rw, node.outputs[0], x, match)) return std::nullopt;
  return std::make_pair(x, match);
}

// x^3 as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x); appends the nodes and returns x.
int match_cube(Rewriter& rw, int cube, int reader, std::vector<int>& nodes) {
  if (rw.sole_consumer(cube) != reader) return kNoValue;
  if (const int pow = private_producer(rw, cube, "Pow"); pow >= 0) {
    const auto e = rw.scalar_constant(rw.node(pow).inputs[1]);
    if (!e || *e != 3.0) return kNoValue;
    nodes.push_back(pow);
    return rw.node(pow).inputs[0];
  }
  const int outer = private_producer(rw, cube, "Mul");
  if (outer < 0) return kNoValue;
  for (int slot = 0; slot < 2; ++slot) {
    const int square = rw.node(outer).inputs[slot];
    const int x = rw.node(outer).inputs[1 - slot];
    const int inner = private_producer(rw, square, "Mul");
    if (inner < 0 || rw.sole_consumer(square) != outer) continue;
    if (rw.node(inner).inputs[0] == x && rw.node(inner).inputs[1] == x) {
      nodes.push_back(outer);
      nodes.push_back(inner);
      return x;
    }
  }
  return kNoValue;
}

// Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)) followed by the tail.
std::optional<std::pair<int, GeluMatch>> match_tanh_gelu(Rewriter& rw, int tanh) {
  const int scaled = rw.node(tanh).inputs[0];
  const int scale = private_producer(rw, scaled, "Mul");
  if (scale < 0 || rw.sole_consumer(scaled) != tanh) return std::nullopt;
  const int sum = other_than_constant(rw, rw.node(scale), std::sqrt(2.0 / std::numbers::pi));
  const int add = sum == kNoValue ? -1 : private_producer(rw, sum, "Add");
  if (add < 0 || rw.sole_consumer(sum) != scale) return std::nullopt;
  for (int slot = 0; slot < 2; ++slot) {
    const int x = rw.node(add).inputs[slot];
    const int term = rw.node(add).inputs[1 - slot];
    const int coefficient = private_producer(rw, term, "Mul");
    if (coefficient < 0 || rw.sole_consumer(term) != add) continue;
    const int cube = other_than_constant(rw, rw.node(coefficient), 0.044715);
    if (cube == kNoValue) continue;
    GeluMatch match{{scale, add, coefficient, tanh}, kNoValue};
    if (match_cube(rw, cube, coefficient, match.nodes) != x) continue;
    if (!match_gelu_tail(rw, rw.node(tanh).outputs[0], x, match)) return std::nullopt;
    return std::make_pair(x, match);
  }
  return std::nullopt;
}

std::string joined_name(Rewriter& rw, const std::vector<int>& nodes) {
  std::string name;
  for (int n : nodes) {
    if (!name.empty()) name += "+";
    name += rw.node(n).name.empty() ? rw.node(n).op_type : rw.node(n).name;
  }
  return name.size() > 200 ? name.substr(0, 200) + "+..." : name;
}

bool kernel_accepts(const cpu::KernelDef* def, DataType dtype) {
  return def && (def->types & (cpu::DataTypeMask{1} << static_cast<int>(dtype)));
}

}  // namespace

Expected<bool> fuse_gelu(graph::Graph& graph) {
  Rewriter rw(graph);
  const int count = rw.node_count();
  for (int n = 0; n < count; ++n) {
    if (!rw.is_matchable(n) || !rw.node(n).domain.empty() || rw.node(n).inputs.size() != 1) continue;
    const bool is_erf = rw.node(n).op_type == "Erf";
    if (!is_erf && rw.node(n).op_type != "Tanh") continue;
    const int opset = rw.node(n).opset;
    auto match = is_erf ? match_erf_gelu(rw, n) : match_tanh_gelu(rw, n);
    if (!match) continue;
    const auto [x, found] = *match;
    const DataType dtype = rw.value(x).type.elem_type;
    graph::Node gelu;
    gelu.op_type = "Gelu";
    const cpu::KernelDef* onnx_gelu = cpu::find_kernel(graph::kOnnxDomain, "Gelu", opset);
    if (opset >= 20 && kernel_accepts(onnx_gelu, dtype)) {
      gelu.opset = opset;
      if (!is_erf) gelu.attributes.push_back(make_string_attribute("approximate", "tanh"));
    } else if (is_erf && kernel_accepts(cpu::find_kernel(graph::kMsDomain, "Gelu", 1), dtype)) {
      gelu.domain = graph::kMsDomain;
      gelu.opset = 1;
    } else {
      continue;
    }
    gelu.name = joined_name(rw, found.nodes);
    gelu.inputs = {x};
    gelu.outputs = {found.output};
    for (int m : found.nodes) rw.remove(m);
    rw.add(std::move(gelu));
  }
  TRY(rw.finish());
  return rw.changed();
}

namespace {

// ReduceMean over the last axis only, keepdims=1; returns its data input.
// `rank` is the rank of the data input.
int last_axis_mean_input(Rewriter& rw, int node, int64_t rank) {
  const graph::Node& mean = rw.node(node);
  if (mean.inputs.empty() || mean.inputs[0] == kNoValue || rank <= 0) return kNoValue;
  auto keep = mean.attr_int("keepdims", 1);
  if (!keep || *keep != 1) return kNoValue;
  std::vector<int64_t> axes;
  if (mean.opset < 18) {
    auto attr = mean.attr_ints("axes", {});
    if (!attr) return kNoValue;
    axes = *attr;
  } else {
    const Tensor* t = mean.inputs.size() > 1 ? rw.constant(mean.inputs[1]) : nullptr;
    if (!t || t->dtype() != DataType::kInt64) return kNoValue;
    axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->numel());
  }
  if (axes.size() != 1 || (axes[0] != -1 && axes[0] != rank - 1)) return kNoValue;
  return mean.inputs[0];
}

// A constant of `columns` elements broadcasting along the last axis only.
bool is_last_axis_constant(Rewriter& rw, int value, int64_t columns, DataType dtype) {
  const Tensor* t = rw.constant(value);
  if (!t || t->dtype() != dtype || t->numel() != columns || t->rank() == 0) return false;
  for (size_t i = 0; i + 1 < t->rank(); ++i) {
    if (t->shape()[i] != 1) return false;
  }
  return true;
}

}  // namespace

Expected<bool> fuse_layer_norm(graph::Graph& graph) {
  Rewriter rw(graph);
  const cpu::KernelDef* def = cpu::find_kernel(graph::kOnnxDomain, "LayerNormalization", 17);
  const int count = rw.node_count();
  for (int n = 0; n < count; ++n) {
    if (!rw.is_matchable(n) || !rw.node(n).domain.empty() || rw.node(n).op_type != "ReduceMean") continue;
    const int candidate = rw.node(n).inputs.empty() ? kNoValue : rw.node(n).inputs[0];
    if (candidate == kNoValue || !rw.value(candidate).type.is_tensor() || !rw.value(candidate).type.shape) continue;
    const auto& x_type = rw.value(candidate).type;
    const int64_t rank = static_cast<int64_t>(x_type.shape->size());
    const int x = last_axis_mean_input(rw, n, rank);
    if (x == kNoValue) continue;
    const graph::Dim last_dim = x_type.shape->back();
    if (!last_dim.is_known() || !kernel_accepts(def, x_type.elem_type)) continue;
    const int sub = sole_reader(rw, rw.node(n).outputs[0], "Sub");
    if (sub < 0 || rw.node(sub).inputs[0] != x) continue;
    const int centered = rw.node(sub).outputs[0];
    // `centered` feeds the square (Pow(d, 2) or Mul(d, d)) and the Div, and nothing else.
    if (!rw.is_private(centered)) continue;
    int square = -1;
    int div = -1;
    for (int reader : rw.value(centered).consumers) {
      const graph::Node& r = rw.node(reader);
      if (!r.domain.empty()) continue;
      if (r.op_type == "Div" && r.inputs[0] == centered && r.inputs[1] != centered) div = reader;
      if (r.op_type == "Mul" && r.inputs[0] == centered && r.inputs[1] == centered) square = reader;
      if (r.op_type == "Pow" && r.inputs[0] == centered) {
        const auto e = rw.scalar_constant(r.inputs[1]);
        if (e && *e == 2.0) square = reader;
      }
    }
    const size_t expected_reads = square >= 0 && rw.node(square).op_type == "Mul" ? 3 : 2;
    if (square < 0 || div < 0 || rw.value(centered).consumers.size() != expected_reads) continue;
    const int variance = sole_reader(rw, rw.node(square).outputs[0], "ReduceMean");
    if (variance < 0 || last_axis_mean_input(rw, variance, rank) != rw.node(square).outputs[0]) continue;
    const int add_eps = sole_reader(rw, rw.node(variance).outputs[0], "Add");
    if (add_eps < 0) continue;
    const graph::Node& eps_node = rw.node(add_eps);
    const int eps_value = eps_node.inputs[0] == rw.node(variance).outputs[0] ? eps_node.inputs[1] : eps_node.inputs[0];
    const auto epsilon = rw.scalar_constant(eps_value);
    if (!epsilon) continue;
    const int sqrt = sole_reader(rw, eps_node.outputs[0], "Sqrt");
    if (sqrt < 0 || rw.sole_consumer(rw.node(sqrt).outputs[0]) != div || rw.node(div).inputs[1] != rw.node(sqrt).outputs[0]) {
      continue;
    }
    std::vector<int> nodes = {n, sub, square, variance, add_eps, sqrt, div};
    int output = rw.node(div).outputs[0];
    const int scale = sole_reader(rw, output, "Mul");
    if (scale < 0) continue;
    const graph::Node& s = rw.node(scale);
    const int gamma = s.inputs[0] == output ? s.inputs[1] : s.inputs[0];
    if (!is_last_axis_constant(rw, gamma, last_dim.value, x_type.elem_type)) continue;
    nodes.push_back(scale);
    output = s.outputs[0];
    int beta = kNoValue;
    if (const int shift = sole_reader(rw, output, "Add"); shift >= 0) {
      const graph::Node& a = rw.node(shift);
      const int candidate = a.inputs[0] == output ? a.inputs[1] : a.inputs[0];
      if (is_last_axis_constant(rw, candidate, last_dim.value, x_type.elem_type)) {
        beta = candidate;
        nodes.push_back(shift);
        output = a.outputs[0];
      }
    }
    graph::Node norm;
    norm.op_type = "LayerNormalization";
    norm.opset = 17;
    norm.name = joined_name(rw, nodes);
    const auto flat = [&](int value) {
      const Tensor* t = rw.constant(value);
      return rw.new_initializer(norm.name + "_param", t->reshaped(Shape{last_dim.value}));
    };
    norm.inputs = {x, flat(gamma)};
    if (beta != kNoValue) norm.inputs.push_back(flat(beta));
    norm.outputs = {output};
    norm.attributes = {make_int_attribute("axis", -1), make_float_attribute("epsilon", static_cast<float>(*epsilon))};
    for (int m : nodes) rw.remove(m);
    rw.add(std::move(norm));
  }
  TRY(rw.finish());
  return rw.changed();
}

}  // namespace nxrt::optimizer
