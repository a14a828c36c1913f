// Attention fusion: the exporter-expanded scaled dot-product attention
//   MatMul(Q, Kt) [-> Mul/Div by a scalar constant] [-> Add(mask)] -> Softmax(last axis) -> MatMul(., V)
// becomes one com.nxrt:FusedAttention node, which computes it per row block so the score matrix never leaves
// the cache. Every intermediate must be private to the chain; all values float32. When Q and V are rank-4
// Transposes (perm [0, 2, 1, 3]) of [B, S, H, D] projections and Y's only reader is the same Transpose back, the
// three Transposes go too (heads_last=1: the kernel reads Q and V and writes Y with the heads in place).
#include "ep/cpu/kernel.h"
#include "optimizer/passes.h"
#include "optimizer/rewriter.h"

namespace nxrt::optimizer {

namespace {

using graph::kNoValue;

// The ONNX node producing `value` when it has one output and that output's only reader is the chain.
int chain_producer(Rewriter& rw, int value, const char* op_type) {
  const int p = rw.producer(value);
  if (p < 0 || rw.sole_consumer(value) < 0) return -1;
  const graph::Node& node = rw.node(p);
  if (!node.domain.empty() || node.op_type != op_type || node.outputs.size() != 1) return -1;
  return p;
}

bool is_float_tensor(const graph::TypeInfo& type) {
  return type.is_tensor() && type.elem_type == DataType::kFloat32 && type.shape.has_value();
}

struct AttentionMatch {
  int scores = -1;  // MatMul(Q, Kt)
  int scale = -1;   // Mul or Div, optional
  int mask = -1;    // Add, optional
  int softmax = -1;
  float scale_value = 1.0f;
  bool divide = false;
  int mask_value = kNoValue;
};

// Softmax over the last axis of a statically ranked input (every opset agrees when axis is the last one).
bool softmax_over_last_axis(Rewriter& rw, const graph::Node& softmax) {
  const graph::TypeInfo& type = rw.value(softmax.inputs[0]).type;
  if (!is_float_tensor(type) || type.shape->empty()) return false;
  const int64_t rank = static_cast<int64_t>(type.shape->size());
  auto axis = softmax.attr_int("axis", softmax.opset >= 13 ? -1 : 1);
  return axis && (*axis == -1 || *axis == rank - 1);
}

std::optional<AttentionMatch> match_attention(Rewriter& rw, const graph::Node& output_matmul) {
  AttentionMatch m;
  m.softmax = chain_producer(rw, output_matmul.inputs[0], "Softmax");
  if (m.softmax < 0 || !softmax_over_last_axis(rw, rw.node(m.softmax))) return std::nullopt;
  int value = rw.node(m.softmax).inputs[0];
  const graph::TypeInfo scores_type = rw.value(value).type;
  if (const int add = chain_producer(rw, value, "Add"); add >= 0) {
    const graph::Node& node = rw.node(add);
    const auto continues_chain = [&](int input) {
      return chain_producer(rw, input, "MatMul") >= 0 || chain_producer(rw, input, "Mul") >= 0 ||
             chain_producer(rw, input, "Div") >= 0;
    };
    const int scores_slot = continues_chain(node.inputs[0]) ? 0 : 1;
    m.mask = add;
    m.mask_value = node.inputs[1 - scores_slot];
    value = node.inputs[scores_slot];
    // The mask must not widen the scores: the Add's output has the scores' shape.
    if (!is_float_tensor(rw.value(m.mask_value).type) ||
        !same_static_or_symbolic_shape(rw.value(value).type, scores_type)) {
      return std::nullopt;
    }
  }
  for (const char* op : {"Mul", "Div"}) {
    const int s = chain_producer(rw, value, op);
    if (s < 0) continue;
    const graph::Node& node = rw.node(s);
    const int constant_slot = op[0] == 'D' ? 1 : (rw.scalar_constant(node.inputs[1]) ? 1 : 0);
    const auto k = rw.scalar_constant(node.inputs[constant_slot]);
    if (!k || rw.constant(node.inputs[constant_slot])->dtype() != DataType::kFloat32) return std::nullopt;
    m.scale = s;
    m.scale_value = static_cast<float>(*k);
    m.divide = op[0] == 'D';
    value = node.inputs[1 - constant_slot];
    break;
  }
  m.scores = chain_producer(rw, value, "MatMul");
  if (m.scores < 0) return std::nullopt;
  // Q, Kt and V of one rank >= 3 with batch dims the kernel can check; no broadcasting between them.
  const graph::Node& qk = rw.node(m.scores);
  const graph::TypeInfo& q = rw.value(qk.inputs[0]).type;
  const graph::TypeInfo& kt = rw.value(qk.inputs[1]).type;
  const graph::TypeInfo& v = rw.value(output_matmul.inputs[1]).type;
  if (!is_float_tensor(q) || !is_float_tensor(kt) || !is_float_tensor(v)) return std::nullopt;
  const size_t rank = q.shape->size();
  if (rank < 3 || kt.shape->size() != rank || v.shape->size() != rank) return std::nullopt;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (!((*q.shape)[d] == (*kt.shape)[d]) || !((*q.shape)[d] == (*v.shape)[d])) return std::nullopt;
  }
  return m;
}

// The Transpose with perm [0, 2, 1, 3] producing `value` (its only reader being the chain), or reading it as its
// only reader (`consumer`); -1 otherwise.
int head_swap(Rewriter& rw, int value, bool consumer) {
  const int node_index = consumer ? rw.sole_consumer(value) : rw.producer(value);
  if (node_index < 0 || (!consumer && rw.sole_consumer(value) < 0)) return -1;
  const graph::Node& node = rw.node(node_index);
  if (!node.domain.empty() || node.op_type != "Transpose" || node.inputs.size() != 1 || node.outputs.size() != 1) {
    return -1;
  }
  const auto perm = node.attr_ints("perm", {});
  if (!perm || *perm != std::vector<int64_t>{0, 2, 1, 3}) return -1;
  return is_float_tensor(rw.value(node.inputs[0]).type) && rw.value(node.inputs[0]).type.shape->size() == 4
             ? node_index
             : -1;
}

Status fuse_one(Rewriter& rw, int n) {
  const graph::Node& matmul = rw.node(n);
  if (matmul.inputs.size() != 2 || matmul.outputs.size() != 1) return Status::ok();
  const auto m = match_attention(rw, matmul);
  if (!m) return Status::ok();
  graph::Node fused;
  fused.op_type = "FusedAttention";
  fused.domain = kNxrtDomain;
  fused.opset = 1;
  const graph::Node& qk = rw.node(m->scores);
  fused.name = (qk.name.empty() ? qk.op_type : qk.name) + "+attention";
  fused.inputs = {qk.inputs[0], qk.inputs[1], matmul.inputs[1]};
  if (m->mask >= 0) fused.inputs.push_back(m->mask_value);
  fused.outputs = {matmul.outputs[0]};
  const int q_swap = head_swap(rw, qk.inputs[0], false);
  const int v_swap = head_swap(rw, matmul.inputs[1], false);
  const int y_swap = head_swap(rw, matmul.outputs[0], true);
  const bool heads_last = q_swap >= 0 && v_swap >= 0 && y_swap >= 0 && q_swap != v_swap &&
                          rw.value(qk.inputs[1]).type.shape->size() == 4;
  if (heads_last) {
    fused.inputs[0] = rw.node(q_swap).inputs[0];
    fused.inputs[2] = rw.node(v_swap).inputs[0];
    fused.outputs = {rw.node(y_swap).outputs[0]};
  }
  fused.attributes = {make_float_attribute("scale", m->scale_value), make_int_attribute("divide", m->divide),
                      make_int_attribute("heads_last", heads_last)};
  for (int node : {m->scores, m->scale, m->mask, m->softmax, n}) {
    if (node >= 0) rw.remove(node);
  }
  if (heads_last) {
    for (int node : {q_swap, v_swap, y_swap}) rw.remove(node);
  }
  rw.add(std::move(fused));
  return Status::ok();
}

}  // namespace

Expected<bool> fuse_attention(graph::Graph& graph, std::string_view owner) {
  const cpu::KernelDef* def = cpu::find_kernel(kNxrtDomain, "FusedAttention", 1);
  if (def == nullptr) return false;
  Rewriter rw(graph, owner);
  const int original_count = rw.node_count();
  for (int n = 0; n < original_count; ++n) {
    if (!rw.is_matchable(n) || !rw.node(n).domain.empty() || rw.node(n).op_type != "MatMul") continue;
    TRY(fuse_one(rw, n));
  }
  TRY(rw.finish());
  return rw.changed();
}

}  // namespace nxrt::optimizer
