// Fusions of a linear op with what follows it into the fused kernels of the CPU EP:
//   MatMul(A, W const 2-D) [+ Add(bias const along the last axis)] [+ act | + Add(Z with Y's shape)]
//                                                                         -> com.nxrt:FusedMatMul
//   Gemm + act                                                           -> com.microsoft:FusedGemm
//   Conv [+ Add(Z with Y's shape)] + act, or Conv + Add(Z with Y's shape) -> com.microsoft:FusedConv
//     (act also: y * Sigmoid(y) -> Swish, y * Clip(y + 3, 0, 6) / 6 -> HardSwish, where y has no other reader)
//   Conv or FusedConv (no Z, W const) + MaxPool 3x3 stride 2              -> com.nxrt:FusedConvMaxPool
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/conv/conv_winograd.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "optimizer/passes.h"
#include "optimizer/rewriter.h"

namespace nxrt::optimizer {

namespace {

using graph::kNoValue;

struct Activation {
  int node = -1;              // the last node, whose output the fused node takes over
  std::string name;           // fused_activation.h spelling
  std::vector<float> params;  // LeakyRelu {alpha}, Clip {min, max}, HardSigmoid {alpha, beta}, Swish {alpha}
  std::vector<int> inner;     // the pattern's other nodes (gated forms), removed with it
};

// The activation reading `value` as its only consumer, when it has a fused-activation equivalent.
std::optional<Activation> match_activation(Rewriter& rw, int value) {
  const int n = rw.sole_consumer(value);
  if (n < 0) return std::nullopt;
  const graph::Node& node = rw.node(n);
  if (node.inputs.empty() || node.inputs[0] != value || node.outputs.size() != 1) return std::nullopt;
  // The activations below keep their input's type; types that inference could not follow are no obstacle.
  const graph::TypeInfo& in_type = rw.value(value).type;
  const graph::TypeInfo& out_type = rw.value(node.outputs[0]).type;
  if (in_type.is_tensor() && out_type.is_tensor() && in_type.elem_type != out_type.elem_type) return std::nullopt;
  Activation act{n, node.op_type, {}, {}};
  if (!node.domain.empty()) return std::nullopt;
  if (node.op_type == "Relu" || node.op_type == "Sigmoid" || node.op_type == "Tanh") return act;
  if (node.op_type == "HardSwish") return act;
  if (node.op_type == "LeakyRelu") {
    auto alpha = node.attr_float("alpha", 0.01f);
    if (!alpha) return std::nullopt;
    act.params = {*alpha};
    return act;
  }
  if (node.op_type == "HardSigmoid") {
    auto alpha = node.attr_float("alpha", 0.2f);
    auto beta = node.attr_float("beta", 0.5f);
    if (!alpha || !beta) return std::nullopt;
    act.params = {*alpha, *beta};
    return act;
  }
  if (node.op_type == "Clip") {
    const auto bounds = rw.clip_bounds(node);
    if (!bounds) return std::nullopt;
    act.params = {bounds->first, bounds->second};
    return act;
  }
  if (node.op_type == "Gelu") {
    auto approximate = node.attr_string("approximate", "none");
    if (!approximate) return std::nullopt;
    if (*approximate == "none") act.name = "Gelu";
    else if (*approximate == "tanh") act.name = "GeluTanh";
    else return std::nullopt;
    return act;
  }
  return std::nullopt;
}

// The ai.onnx node `n` when it is op_type with `inputs` inputs and one output; else nullptr.
const graph::Node* onnx_node(Rewriter& rw, int n, const char* op_type, size_t inputs) {
  if (n < 0) return nullptr;
  const graph::Node& node = rw.node(n);
  if (!node.domain.empty() || node.op_type != op_type || node.inputs.size() != inputs || node.outputs.size() != 1) {
    return nullptr;
  }
  return &node;
}

// True when `node` (a binary op) reads `value` on one side and a scalar constant equal to `expected` on the other
// (on the right only when `right_only`).
bool reads_value_and_scalar(Rewriter& rw, const graph::Node& node, int value, double expected, bool right_only) {
  const auto matches = [&](int a, int b) {
    const auto scalar = rw.scalar_constant(b);
    return a == value && scalar && *scalar == expected;
  };
  return matches(node.inputs[0], node.inputs[1]) || (!right_only && matches(node.inputs[1], node.inputs[0]));
}

// The gated activations y * gate(y) reading a private `value` that exactly these two nodes read: y * Sigmoid(y)
// (Swish, alpha 1) and y * Clip(y + 3, 0, 6) / 6 (HardSwish, as Paddle and others export it). The conv fusion only:
// the two readers make these patterns no sole-consumer chain.
std::optional<Activation> match_gated_activation(Rewriter& rw, int value) {
  const std::vector<int>& readers = rw.value(value).consumers;
  if (!rw.is_private(value) || readers.size() != 2 || readers[0] == readers[1]) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const int gate_start = readers[k], mul = readers[1 - k];
    const graph::Node* product = onnx_node(rw, mul, "Mul", 2);
    if (!product) continue;
    const int gate_value = product->inputs[0] == value ? product->inputs[1] : product->inputs[0];
    if (product->inputs[0] != value && product->inputs[1] != value) continue;
    if (const graph::Node* sigmoid = onnx_node(rw, gate_start, "Sigmoid", 1)) {
      if (sigmoid->inputs[0] != value || sigmoid->outputs[0] != gate_value || rw.sole_consumer(gate_value) != mul) {
        continue;
      }
      return Activation{mul, "Swish", {1.0f}, {gate_start}};
    }
    // Add(y, 3) -> Clip(0, 6) -> Mul(y, clipped) -> Div(6)
    const graph::Node* add = onnx_node(rw, gate_start, "Add", 2);
    if (!add || !reads_value_and_scalar(rw, *add, value, 3.0, false)) continue;
    const int clip_index = rw.sole_consumer(add->outputs[0]);
    if (clip_index < 0) continue;
    const graph::Node& clip = rw.node(clip_index);
    if (!clip.domain.empty() || clip.op_type != "Clip" || clip.opset < 11 || clip.inputs.size() != 3 ||
        clip.inputs[0] != add->outputs[0] || clip.outputs.size() != 1 || clip.outputs[0] != gate_value ||
        rw.sole_consumer(gate_value) != mul) {
      continue;
    }
    const auto low = rw.scalar_constant(clip.inputs[1]);
    const auto high = rw.scalar_constant(clip.inputs[2]);
    if (!low || !high || *low != 0.0 || *high != 6.0) continue;
    const int div = rw.sole_consumer(product->outputs[0]);
    const graph::Node* divide = onnx_node(rw, div, "Div", 2);
    if (!divide || !reads_value_and_scalar(rw, *divide, product->outputs[0], 6.0, true)) continue;
    return Activation{div, "HardSwish", {}, {gate_start, clip_index, mul}};
  }
  return std::nullopt;
}

bool has_kernel(const char* domain, const char* op_type, DataType dtype) {
  const cpu::KernelDef* def = cpu::find_kernel(domain, op_type, 1);
  return def && (def->types & (cpu::DataTypeMask{1} << static_cast<int>(dtype)));
}

std::string joined_name(Rewriter& rw, std::initializer_list<int> nodes) {
  std::string name;
  for (int n : nodes) {
    if (n < 0) continue;
    if (!name.empty()) name += "+";
    name += rw.node(n).name.empty() ? rw.node(n).op_type : rw.node(n).name;
  }
  return name;
}

// The Add that is the sole reader of `value` (typed `out_type`) and adds an operand with the same element type
// and shape, its output keeping that shape: the Z of FusedConv and FusedMatMul. Returns {add node, operand}.
std::optional<std::pair<int, int>> match_same_shape_add(Rewriter& rw, int value, const graph::TypeInfo& out_type) {
  const int next = rw.sole_consumer(value);
  if (next < 0) return std::nullopt;
  const graph::Node& node = rw.node(next);
  if (!node.domain.empty() || node.op_type != "Add" || node.inputs.size() != 2 || node.outputs.size() != 1) {
    return std::nullopt;
  }
  const int other = node.inputs[0] == value ? node.inputs[1] : node.inputs[0];
  const auto& other_type = rw.value(other).type;
  if (other == value || other_type.elem_type != out_type.elem_type ||
      !same_static_or_symbolic_shape(other_type, out_type) ||
      !same_static_or_symbolic_shape(rw.value(node.outputs[0]).type, out_type)) {
    return std::nullopt;
  }
  return std::pair{next, other};
}

// Replaces the chain `nodes` (first .. last, each the sole reader of the previous) by `fused`, which takes over
// the last node's output.
Status replace_chain(Rewriter& rw, graph::Node fused, std::initializer_list<int> nodes, int last_output) {
  fused.outputs = {last_output};
  for (int n : nodes) {
    if (n >= 0) rw.remove(n);
  }
  rw.add(std::move(fused));
  return Status::ok();
}

graph::Node fused_node(std::string op_type, const char* domain, std::string name) {
  graph::Node node;
  node.op_type = std::move(op_type);
  node.domain = domain;
  node.opset = 1;
  node.name = std::move(name);
  return node;
}

// Bias constant of `value` broadcasting along the last axis of an output of rank `out_rank` with `columns`
// columns, reshaped 1-D; nullopt otherwise.
std::optional<Tensor> last_axis_bias(Rewriter& rw, int value, size_t out_rank, int64_t columns, DataType dtype) {
  const Tensor* bias = rw.constant(value);
  if (!bias || bias->dtype() != dtype || bias->numel() != columns || bias->rank() > out_rank || bias->rank() == 0) {
    return std::nullopt;
  }
  for (size_t i = 0; i + 1 < bias->rank(); ++i) {
    if (bias->shape()[i] != 1) return std::nullopt;
  }
  return bias->reshaped(Shape{columns});
}

Status fuse_matmul(Rewriter& rw, int n) {
  const graph::Node& matmul = rw.node(n);
  if (matmul.inputs.size() != 2 || matmul.outputs.size() != 1) return Status::ok();
  const Tensor* weight = rw.constant(matmul.inputs[1]);
  const auto& out_type = rw.value(matmul.outputs[0]).type;
  if (!weight || weight->rank() != 2 || !out_type.is_tensor() || !out_type.shape || out_type.shape->empty()) {
    return Status::ok();
  }
  const DataType dtype = out_type.elem_type;
  if (weight->dtype() != dtype || !has_kernel(kNxrtDomain, "FusedMatMul", dtype)) return Status::ok();
  int value = matmul.outputs[0];
  int add = -1;
  std::optional<Tensor> bias;
  if (const int next = rw.sole_consumer(value); next >= 0) {
    const graph::Node& node = rw.node(next);
    if (node.domain.empty() && node.op_type == "Add" && node.inputs.size() == 2 && node.outputs.size() == 1) {
      const int other = node.inputs[0] == value ? node.inputs[1] : node.inputs[0];
      bias = last_axis_bias(rw, other, out_type.shape->size(), weight->shape()[1], dtype);
      if (bias) {
        add = next;
        value = node.outputs[0];
      }
    }
  }
  const auto act = match_activation(rw, value);
  // Without an activation, a following Add of an output-shaped tensor (a residual connection) becomes Z.
  int residual_add = -1;
  int residual = kNoValue;
  if (const auto z = act ? std::nullopt : match_same_shape_add(rw, value, out_type)) {
    residual_add = z->first;
    residual = z->second;
    value = rw.node(residual_add).outputs[0];
  }
  if (add < 0 && !act && residual_add < 0) return Status::ok();
  graph::Node fused =
      fused_node("FusedMatMul", kNxrtDomain, joined_name(rw, {n, add, act ? act->node : -1, residual_add}));
  fused.inputs = {matmul.inputs[0], matmul.inputs[1]};
  if (bias) fused.inputs.push_back(rw.new_initializer(fused.name + "_bias", std::move(*bias)));
  if (residual != kNoValue) {
    fused.inputs.resize(3, kNoValue);
    fused.inputs.push_back(residual);
  }
  fused.attributes = {make_string_attribute("activation", act ? act->name : ""),
                      make_floats_attribute("activation_params", act ? act->params : std::vector<float>{})};
  const int last = act ? rw.node(act->node).outputs[0] : value;
  return replace_chain(rw, std::move(fused), {n, add, act ? act->node : -1, residual_add}, last);
}

Status fuse_gemm(Rewriter& rw, int n) {
  const graph::Node& gemm = rw.node(n);
  if (gemm.outputs.size() != 1 || !rw.value(gemm.outputs[0]).type.is_tensor()) return Status::ok();
  const DataType dtype = rw.value(gemm.outputs[0]).type.elem_type;
  if (!has_kernel(graph::kMsDomain, "FusedGemm", dtype)) return Status::ok();
  const auto act = match_activation(rw, gemm.outputs[0]);
  if (!act) return Status::ok();
  graph::Node fused = fused_node("FusedGemm", graph::kMsDomain, joined_name(rw, {n, act->node}));
  fused.inputs = gemm.inputs;
  fused.attributes = gemm.attributes;
  fused.attributes.push_back(make_string_attribute("activation", act->name));
  const char* names[] = {"activation_alpha", "activation_beta"};
  for (size_t i = 0; i < act->params.size() && i < 2; ++i) {
    fused.attributes.push_back(make_float_attribute(names[i], act->params[i]));
  }
  return replace_chain(rw, std::move(fused), {n, act->node}, rw.node(act->node).outputs[0]);
}

// The element type of a Conv's output: its inferred type, else W's (X, W and Y share one type), which an
// initializer W always has when inference could not follow X (symbolic or data-dependent shapes upstream).
DataType conv_output_type(Rewriter& rw, const graph::Node& conv) {
  const graph::TypeInfo& out_type = rw.value(conv.outputs[0]).type;
  if (out_type.is_tensor()) return out_type.elem_type;
  if (conv.inputs.size() < 2 || conv.inputs[1] == kNoValue) return DataType::kUndefined;
  const graph::TypeInfo& w_type = rw.value(conv.inputs[1]).type;
  return w_type.is_tensor() ? w_type.elem_type : DataType::kUndefined;
}

Status fuse_conv(Rewriter& rw, int n) {
  const graph::Node& conv = rw.node(n);
  if (conv.outputs.size() != 1) return Status::ok();
  const graph::TypeInfo& out_type = rw.value(conv.outputs[0]).type;
  if (!has_kernel(graph::kMsDomain, "FusedConv", conv_output_type(rw, conv))) return Status::ok();
  int value = conv.outputs[0];
  int add = -1;
  int z = kNoValue;
  if (const auto match = match_same_shape_add(rw, value, out_type)) {
    add = match->first;
    z = match->second;
    value = rw.node(add).outputs[0];
  }
  auto act = match_activation(rw, value);
  if (!act) act = match_gated_activation(rw, value);
  // Without an activation, a residual Add alone (a linear bottleneck's skip, as MobileNetV2 writes it) becomes Z.
  if (!act && add < 0) return Status::ok();
  const int act_node = act ? act->node : -1;
  graph::Node fused = fused_node("FusedConv", graph::kMsDomain, joined_name(rw, {n, add, act_node}));
  fused.inputs = conv.inputs;
  fused.inputs.resize(3, kNoValue);
  if (z != kNoValue) fused.inputs.push_back(z);
  while (!fused.inputs.empty() && fused.inputs.back() == kNoValue) fused.inputs.pop_back();
  fused.attributes = conv.attributes;
  if (act) {
    fused.attributes.push_back(make_string_attribute("activation", act->name));
    fused.attributes.push_back(make_floats_attribute("activation_params", act->params));
    for (int inner : act->inner) rw.remove(inner);
  }
  return replace_chain(rw, std::move(fused), {n, add, act_node}, rw.node(act ? act_node : add).outputs[0]);
}

// True when `pool` is a MaxPool this fusion covers: one output, 3x3 window, stride 2, explicit pads of 0 or 1
// (so every window holds input taps), no dilation, floor rounding.
bool is_fusable_max_pool(const graph::Node& pool) {
  if (pool.op_type != "MaxPool" || !pool.domain.empty() || pool.outputs.size() != 1) return false;
  const auto kernel = pool.attr_ints("kernel_shape", {});
  const auto strides = pool.attr_ints("strides", {});
  const auto pads = pool.attr_ints("pads", {0, 0, 0, 0});
  const auto dilations = pool.attr_ints("dilations", {1, 1});
  const auto auto_pad = pool.attr_string("auto_pad", "NOTSET");
  const auto ceil_mode = pool.attr_int("ceil_mode", 0);
  if (!kernel || !strides || !pads || !dilations || !auto_pad || !ceil_mode) return false;
  const bool pads_fit = pads->size() == 4 && std::all_of(pads->begin(), pads->end(), [](int64_t p) {
                          return p == 0 || p == 1;
                        });
  return *kernel == std::vector<int64_t>{3, 3} && *strides == std::vector<int64_t>{2, 2} && pads_fit &&
         *dilations == std::vector<int64_t>{1, 1} && *auto_pad == "NOTSET" && *ceil_mode == 0;
}

Status fuse_conv_max_pool_at(Rewriter& rw, int n) {
  const graph::Node& pool = rw.node(n);
  if (!is_fusable_max_pool(pool) || pool.inputs.size() != 1) return Status::ok();
  const int conv_index = rw.producer(pool.inputs[0]);
  if (conv_index < 0 || rw.sole_consumer(pool.inputs[0]) != n) return Status::ok();
  const graph::Node& conv = rw.node(conv_index);
  const bool plain = conv.domain.empty() && conv.op_type == "Conv";
  const bool fused = conv.domain == graph::kMsDomain && conv.op_type == "FusedConv";
  if ((!plain && !fused) || conv.outputs.size() != 1 || conv.inputs.size() < 2 || conv.inputs.size() > 3) {
    return Status::ok();
  }
  const graph::TypeInfo& out_type = rw.value(conv.outputs[0]).type;
  const Tensor* w = rw.constant(conv.inputs[1]);
  const auto group = conv.attr_int("group", 1);
  const auto auto_pad = conv.attr_string("auto_pad", "NOTSET");
  const auto strides = conv.attr_ints("strides", {1, 1});
  const auto dilations = conv.attr_ints("dilations", {1, 1});
  if (!out_type.is_tensor() || out_type.elem_type != DataType::kFloat32 || w == nullptr || w->rank() != 4 ||
      !group || *group != 1 || !auto_pad || *auto_pad != "NOTSET" || !strides || !dilations ||
      !has_kernel(kNxrtDomain, "FusedConvMaxPool", DataType::kFloat32) ||
      !cpu::cpu_isa_at_least(cpu::CpuIsa::kAvx2)) {  // below the avx2 tier the fused kernel runs the two ops apart
    return Status::ok();
  }
  // A conv that FusedConv runs with Winograd stays as it is: the fused kernel's striped path is the direct one.
  const Shape& ws = w->shape();
  const std::vector<int64_t> ones{1, 1};
  if (cpu::conv::winograd_weights_fit(ws[0], ws[1], ws[2], ws[3]) && *strides == ones && *dilations == ones) {
    return Status::ok();
  }
  graph::Node node = fused_node("FusedConvMaxPool", kNxrtDomain, joined_name(rw, {conv_index, n}));
  node.inputs = conv.inputs;
  node.attributes = conv.attributes;
  if (plain) {
    node.attributes.push_back(make_string_attribute("activation", ""));
    node.attributes.push_back(make_floats_attribute("activation_params", {}));
  }
  node.attributes.push_back(make_ints_attribute("pool_pads", *pool.attr_ints("pads", {0, 0, 0, 0})));
  return replace_chain(rw, std::move(node), {conv_index, n}, pool.outputs[0]);
}

}  // namespace

Expected<bool> fuse_conv_max_pool(graph::Graph& graph, std::string_view owner) {
  Rewriter rw(graph, owner);
  const int original_count = rw.node_count();
  for (int n = 0; n < original_count; ++n) {
    if (rw.is_matchable(n)) TRY(fuse_conv_max_pool_at(rw, n));
  }
  TRY(rw.finish());
  return rw.changed();
}

Expected<bool> fuse_linear_activations(graph::Graph& graph, std::string_view owner) {
  Rewriter rw(graph, owner);
  const int original_count = rw.node_count();
  for (int n = 0; n < original_count; ++n) {
    if (!rw.is_matchable(n) || !rw.node(n).domain.empty()) continue;
    const std::string& op = rw.node(n).op_type;
    if (op == "MatMul") TRY(fuse_matmul(rw, n));
    else if (op == "Gemm") TRY(fuse_gemm(rw, n));
    else if (op == "Conv") TRY(fuse_conv(rw, n));
  }
  TRY(rw.finish());
  return rw.changed();
}

}  // namespace nxrt::optimizer
