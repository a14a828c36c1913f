// Shape rules of the com.microsoft ops nxrt runs (src/ep/cpu/contrib/), from ONNX Runtime's contrib schemas:
//   Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd, BiasSoftmax, QLinearSigmoid, QLinearLeakyRelu: input 0's type
//     and shape;
//   SkipLayerNormalization, SkipSimplifiedLayerNormalization: output and input_skip_bias_sum as input 0, mean and
//     inv_std_var float with the last dim 1;
//   EmbedLayerNormalization: output and embedding_sum [B, S, H] of word_embedding's type, mask_index int32 [B];
//   Attention: output [B, S, Dv] (Dv from qkv_hidden_sizes, else a third of weights' columns), present
//     [2, B, N, P + S, Dk / N];
//   RotaryEmbedding: input 0's type and shape; GroupQueryAttention: output [B, S, N * H], present_key and
//     present_value [B, Nk, ?, H] (SparseAttention: the same, presents shaped as the pasts); MultiHeadAttention: output [B, S, Dv]; MatMulNBits: A's shape ending in N;
//     GatherBlockQuantized: data's logical shape with the gathered axis replaced by the indices' shape;
//   the quantized forms of default-domain ops (QLinearAdd / Mul / Concat / Where / AveragePool / GlobalAveragePool,
//     QGemm, MatMulIntegerToFloat, DynamicQuantizeMatMul, FusedMatMul, QAttention) by the default (or Attention's)
//     rule over their data inputs, with the result type the schema gives; QLinearSoftmax, Trilu, Inverse, QuantizeLinear, DequantizeLinear keep
//     input 0's shape.
// As for the default-domain rules, what a rule cannot tell stays unknown; the kernels check the inputs.
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>
#include <unordered_map>

#include "graph/shape_rules.h"

namespace nxrt::graph {

namespace {

Status infer_input_type_and_shape(ShapeRuleContext& ctx) {
  if (ctx.input(0)) ctx.outputs[0] = *ctx.input(0);
  return Status::ok();
}

Status infer_skip_norm(ShapeRuleContext& ctx) {
  if (!ctx.input_is_tensor(0)) return Status::ok();
  ctx.outputs[0] = *ctx.input(0);
  if (ctx.outputs.size() > 3) ctx.outputs[3] = *ctx.input(0);
  std::optional<SymbolicShape> statistics;
  if (const SymbolicShape* x = ctx.input_shape(0); x != nullptr && !x->empty()) {
    statistics = *x;
    statistics->back() = Dim::known(1);
  }
  for (size_t o = 1; o < 3 && o < ctx.outputs.size(); ++o) {
    ctx.outputs[o] = TypeInfo::tensor(DataType::kFloat32, statistics);
  }
  return Status::ok();
}

Status infer_embed_layer_norm(ShapeRuleContext& ctx) {
  if (!ctx.input_is_tensor(2)) return Status::ok();
  std::optional<SymbolicShape> out;
  std::optional<SymbolicShape> mask;
  const SymbolicShape* ids = ctx.input_shape(0);
  const SymbolicShape* word = ctx.input_shape(2);
  if (ids != nullptr && ids->size() == 2 && word != nullptr && word->size() == 2) {
    out = SymbolicShape{(*ids)[0], (*ids)[1], (*word)[1]};
  }
  if (ids != nullptr && ids->size() == 2) mask = SymbolicShape{(*ids)[0]};
  ctx.outputs[0] = TypeInfo::tensor(ctx.input(2)->elem_type, out);
  if (ctx.outputs.size() > 1) ctx.outputs[1] = TypeInfo::tensor(DataType::kInt32, mask);
  if (ctx.outputs.size() > 2) ctx.outputs[2] = ctx.outputs[0];
  return Status::ok();
}

Status infer_attention(ShapeRuleContext& ctx) {
  if (!ctx.input_is_tensor(0)) return Status::ok();
  const DataType type = ctx.input(0)->elem_type;
  ctx.outputs[0] = TypeInfo::tensor(type);
  if (ctx.outputs.size() > 1) ctx.outputs[1] = TypeInfo::tensor(type);
  const SymbolicShape* x = ctx.input_shape(0);
  const SymbolicShape* w = ctx.input_shape(1);
  const auto heads = ctx.node.attr_int("num_heads", 0);
  const auto sizes = ctx.node.attr_ints("qkv_hidden_sizes", {});
  if (x == nullptr || x->size() != 3 || !heads || *heads <= 0 || !sizes) return Status::ok();
  int64_t dk = -1;
  int64_t dv = -1;
  if (sizes->size() == 3) {
    dk = (*sizes)[1];
    dv = (*sizes)[2];
  } else if (w != nullptr && w->size() == 2 && (*w)[1].is_known() && (*w)[1].value % 3 == 0) {
    dk = dv = (*w)[1].value / 3;
  }
  if (dv < 0 || dk < 0) return Status::ok();
  ctx.outputs[0].shape = SymbolicShape{(*x)[0], (*x)[1], Dim::known(dv)};
  if (ctx.outputs.size() > 1 && dk % *heads == 0) {
    Dim total = Dim::unknown();
    const SymbolicShape* past = ctx.input_shape(4);
    if (ctx.input(4) == nullptr) {
      total = (*x)[1];
    } else if (past != nullptr && past->size() == 5 && (*past)[3].is_known() && (*x)[1].is_known()) {
      total = Dim::known((*past)[3].value + (*x)[1].value);
    }
    ctx.outputs[1].shape = SymbolicShape{Dim::known(2), (*x)[0], Dim::known(*heads), total, Dim::known(dk / *heads)};
  }
  return Status::ok();
}

// Output [B, S, N * H]; present_key / present_value [B, Nk, ?, H] (their length comes from an input's value).
Status infer_group_query_attention(ShapeRuleContext& ctx) {
  if (!ctx.input_is_tensor(0)) return Status::ok();
  const DataType type = ctx.input(0)->elem_type;
  for (TypeInfo& output : ctx.outputs) output = TypeInfo::tensor(type);
  const SymbolicShape* q = ctx.input_shape(0);
  const auto heads = ctx.node.attr_int("num_heads", 0);
  const auto kv_heads = ctx.node.attr_int("kv_num_heads", 0);
  if (q == nullptr || q->size() != 3 || !(*q)[2].is_known() || !heads || !kv_heads || *heads <= 0 || *kv_heads <= 0) {
    return Status::ok();
  }
  const bool packed = ctx.input(1) == nullptr;
  const int64_t columns = packed ? *heads + 2 * *kv_heads : *heads;
  if ((*q)[2].value % columns != 0) return Status::ok();
  const int64_t head = (*q)[2].value / columns;
  ctx.outputs[0].shape = SymbolicShape{(*q)[0], (*q)[1], Dim::known(*heads * head)};
  for (size_t o = 1; o < 3 && o < ctx.outputs.size(); ++o) {
    ctx.outputs[o].shape = SymbolicShape{(*q)[0], Dim::known(*kv_heads), Dim::unknown(), Dim::known(head)};
  }
  return Status::ok();
}

// SparseAttention: GroupQueryAttention's rule, with the presents shaped as the pasts (one buffer in ONNX Runtime).
Status infer_sparse_attention(ShapeRuleContext& ctx) {
  TRY(infer_group_query_attention(ctx));
  const SymbolicShape* past = ctx.input_shape(3);
  if (!ctx.input_is_tensor(0) || past == nullptr || past->size() != 4) return Status::ok();
  for (size_t o = 1; o < 3 && o < ctx.outputs.size(); ++o) ctx.outputs[o].shape = *past;
  return Status::ok();
}

// Output [B, S, Dv] when query, and value (or the packed forms), tell Dv; the presents' length needs the past's.
Status infer_multi_head_attention(ShapeRuleContext& ctx) {
  if (!ctx.input_is_tensor(0)) return Status::ok();
  for (TypeInfo& output : ctx.outputs) output = TypeInfo::tensor(ctx.input(0)->elem_type);
  const SymbolicShape* q = ctx.input_shape(0);
  const SymbolicShape* v = ctx.input_shape(2);
  const auto heads = ctx.node.attr_int("num_heads", 0);
  if (q == nullptr || !heads || *heads <= 0) return Status::ok();
  Dim width = Dim::unknown();
  if (q->size() == 5 && (*q)[4].is_known()) {
    width = Dim::known(*heads * (*q)[4].value);  // packed QKV
  } else if (q->size() == 3 && ctx.input(2) == nullptr) {
    width = (*q)[2];  // packed KV: V heads as wide as Q's
  } else if (q->size() == 3 && v != nullptr && v->size() == 3) {
    width = (*v)[2];
  } else if (q->size() == 3 && v != nullptr && v->size() == 4 && (*v)[3].is_known()) {
    width = Dim::known(*heads * (*v)[3].value);
  }
  if (q->size() == 3 || q->size() == 5) ctx.outputs[0].shape = SymbolicShape{(*q)[0], (*q)[1], width};
  return Status::ok();
}

Status infer_matmul_nbits(ShapeRuleContext& ctx) {
  if (!ctx.input_is_tensor(0)) return Status::ok();
  ctx.outputs[0] = TypeInfo::tensor(ctx.input(0)->elem_type);
  const SymbolicShape* a = ctx.input_shape(0);
  const auto n = ctx.node.attr_int("N", -1);
  if (a != nullptr && !a->empty() && n && *n >= 0) {
    SymbolicShape out = *a;
    out.back() = Dim::known(*n);
    ctx.outputs[0].shape = std::move(out);
  }
  return Status::ok();
}

// data's logical shape (uint8 holds 8 / bits values per byte along the last axis) with the gathered axis
// replaced by the indices' shape; the scales' type.
Status infer_gather_block_quantized(ShapeRuleContext& ctx) {
  if (!ctx.input_is_tensor(2)) return Status::ok();
  ctx.outputs[0] = TypeInfo::tensor(ctx.input(2)->elem_type);
  const SymbolicShape* data = ctx.input_shape(0);
  const SymbolicShape* indices = ctx.input_shape(1);
  const auto axis = ctx.node.attr_int("gather_axis", 0);
  const auto bits = ctx.node.attr_int("bits", 4);
  if (data == nullptr || indices == nullptr || data->empty() || !axis || !bits || *bits <= 0 || *bits > 8) {
    return Status::ok();
  }
  const int64_t rank = static_cast<int64_t>(data->size());
  if (*axis < -rank || *axis >= rank) return Status::ok();
  SymbolicShape logical = *data;
  if (ctx.input(0)->elem_type == DataType::kUInt8) {
    if (!logical.back().is_known()) return Status::ok();
    logical.back() = Dim::known(logical.back().value * (8 / *bits));
  }
  const size_t g = static_cast<size_t>(*axis < 0 ? *axis + rank : *axis);
  SymbolicShape out(logical.begin(), logical.begin() + static_cast<std::ptrdiff_t>(g));
  out.insert(out.end(), indices->begin(), indices->end());
  out.insert(out.end(), logical.begin() + static_cast<std::ptrdiff_t>(g) + 1, logical.end());
  ctx.outputs[0].shape = std::move(out);
  return Status::ok();
}

// Runs the default-domain rule of `op` over the node's inputs `data_inputs` (the data operands of a quantized
// form; attributes are read from the node, so only ops whose attributes share the default op's names use this),
// then sets output 0's element type to `type` when it is known.
Status infer_by_default_rule(ShapeRuleContext& ctx, std::string_view op, std::initializer_list<size_t> data_inputs,
                             DataType type) {
  ShapeRuleContext sub{ctx.graph, ctx.node, {}, std::vector<TypeInfo>(1)};
  for (size_t i : data_inputs) {
    if (!ctx.input_is_tensor(i)) return Status::ok();
    sub.inputs.push_back(ctx.input(i));
  }
  TRY(find_shape_rule(op)(sub));
  ctx.outputs[0] = TypeInfo::tensor(type, sub.outputs[0].is_tensor() ? sub.outputs[0].shape : std::nullopt);
  return Status::ok();
}

DataType input_type(const ShapeRuleContext& ctx, size_t i, DataType otherwise) {
  return ctx.input_is_tensor(i) ? ctx.input(i)->elem_type : otherwise;
}

Status infer_qlinear_binary(ShapeRuleContext& ctx) {
  return infer_by_default_rule(ctx, "Add", {0, 3}, input_type(ctx, 0, DataType::kUndefined));
}

Status infer_integer_matmul(ShapeRuleContext& ctx) {
  const bool dynamic = ctx.node.op_type == "DynamicQuantizeMatMul";
  return infer_by_default_rule(ctx, "MatMul", {0, 1}, dynamic ? DataType::kFloat32 : input_type(ctx, 2, DataType::kFloat32));
}

Status infer_qgemm(ShapeRuleContext& ctx) {
  const bool quantized = ctx.input(7) != nullptr && ctx.input(8) != nullptr;
  return infer_by_default_rule(ctx, "Gemm", {0, 3}, quantized ? input_type(ctx, 8, DataType::kUInt8) : DataType::kFloat32);
}

Status infer_qlinear_concat(ShapeRuleContext& ctx) {
  ShapeRuleContext sub{ctx.graph, ctx.node, {}, std::vector<TypeInfo>(1)};
  for (size_t i = 2; i < ctx.inputs.size(); i += 3) {
    if (!ctx.input_is_tensor(i)) return Status::ok();
    sub.inputs.push_back(ctx.input(i));
  }
  if (sub.inputs.empty()) return Status::ok();
  TRY(find_shape_rule("Concat")(sub));
  ctx.outputs[0] = TypeInfo::tensor(input_type(ctx, 1, sub.inputs[0]->elem_type),
                                    sub.outputs[0].is_tensor() ? sub.outputs[0].shape : std::nullopt);
  return Status::ok();
}

Status infer_qlinear_where(ShapeRuleContext& ctx) {
  return infer_by_default_rule(ctx, "Sum", {1, 4, 0}, input_type(ctx, 1, DataType::kUndefined));
}

// Pooling over NCHW; channels-last inputs keep only their type.
Status infer_qlinear_pool(ShapeRuleContext& ctx) {
  const auto channels_last = ctx.node.attr_int("channels_last", 0);
  if (!channels_last || *channels_last != 0) {
    if (ctx.input_is_tensor(0)) ctx.outputs[0] = TypeInfo::tensor(ctx.input(0)->elem_type);
    return Status::ok();
  }
  const bool global = ctx.node.op_type == "QLinearGlobalAveragePool";
  return infer_by_default_rule(ctx, global ? "GlobalAveragePool" : "AveragePool", {0},
                               input_type(ctx, 0, DataType::kUndefined));
}

// FusedMatMul: MatMul's rule over the operands as the transposes leave them (see matmul.cpp MatMulTransposes).
Status infer_fused_matmul(ShapeRuleContext& ctx) {
  if (!ctx.input_is_tensor(0) || !ctx.input_is_tensor(1)) return Status::ok();
  TypeInfo operands[2] = {*ctx.input(0), *ctx.input(1)};
  const char* names[2][2] = {{"transA", "transBatchA"}, {"transB", "transBatchB"}};
  for (int i = 0; i < 2; ++i) {
    const auto trans = ctx.node.attr_int(names[i][0], 0);
    const auto trans_batch = ctx.node.attr_int(names[i][1], 0);
    std::optional<SymbolicShape>& shape = operands[i].shape;
    if (!trans || !trans_batch) return Status::ok();
    if (!shape || shape->size() < 2) continue;
    const size_t rank = shape->size();
    if (*trans_batch != 0 && rank >= 3) {
      const Dim first = (*shape)[0];
      for (size_t d = 0; d + 2 < rank; ++d) (*shape)[d] = (*shape)[d + 1];
      (*shape)[rank - 2] = first;
    }
    if (*trans != 0) std::swap((*shape)[rank - 2], (*shape)[rank - 1]);
  }
  ShapeRuleContext sub{ctx.graph, ctx.node, {&operands[0], &operands[1]}, std::vector<TypeInfo>(1)};
  TRY(find_shape_rule("MatMul")(sub));
  ctx.outputs[0] = sub.outputs[0];
  return Status::ok();
}

// QuantizeLinear: input 0's shape in the zero point's type (uint8 without one); DequantizeLinear: in the scale's.
Status infer_quantize_linear(ShapeRuleContext& ctx) {
  if (!ctx.input_is_tensor(0)) return Status::ok();
  const bool quantize = ctx.node.op_type == "QuantizeLinear";
  const DataType type = quantize ? input_type(ctx, 2, DataType::kUInt8) : input_type(ctx, 1, DataType::kFloat32);
  ctx.outputs[0] = TypeInfo::tensor(type, ctx.input(0)->shape);
  return Status::ok();
}

// QAttention: Attention's rule over (input in the bias' type, weight, bias, mask_index, past).
Status infer_qattention(ShapeRuleContext& ctx) {
  if (!ctx.input_is_tensor(0) || !ctx.input_is_tensor(2)) return Status::ok();
  TypeInfo input = *ctx.input(0);
  input.elem_type = ctx.input(2)->elem_type;
  ShapeRuleContext sub{ctx.graph, ctx.node, {&input, ctx.input(1), ctx.input(2), ctx.input(5), ctx.input(8)},
                       std::vector<TypeInfo>(ctx.outputs.size())};
  TRY(infer_attention(sub));
  ctx.outputs = std::move(sub.outputs);
  return Status::ok();
}

const std::unordered_map<std::string_view, ShapeRule>& contrib_shape_rules() {
  static const std::unordered_map<std::string_view, ShapeRule> rules = [] {
    std::unordered_map<std::string_view, ShapeRule> table;
    for (std::string_view op :
         {"Gelu", "FastGelu", "BiasGelu", "QuickGelu", "BiasAdd", "BiasSoftmax", "RotaryEmbedding", "QLinearSigmoid",
          "QLinearLeakyRelu", "QLinearSoftmax", "Trilu", "Inverse"}) {
      table[op] = infer_input_type_and_shape;
    }
    table["SkipLayerNormalization"] = infer_skip_norm;
    table["SkipSimplifiedLayerNormalization"] = infer_skip_norm;
    table["EmbedLayerNormalization"] = infer_embed_layer_norm;
    table["Attention"] = infer_attention;
    table["QAttention"] = infer_qattention;
    table["GroupQueryAttention"] = infer_group_query_attention;
    table["SparseAttention"] = infer_sparse_attention;
    table["MultiHeadAttention"] = infer_multi_head_attention;
    table["MatMulNBits"] = infer_matmul_nbits;
    table["GatherBlockQuantized"] = infer_gather_block_quantized;
    table["QLinearAdd"] = infer_qlinear_binary;
    table["QLinearMul"] = infer_qlinear_binary;
    table["MatMulIntegerToFloat"] = infer_integer_matmul;
    table["DynamicQuantizeMatMul"] = infer_integer_matmul;
    table["QGemm"] = infer_qgemm;
    table["QLinearConcat"] = infer_qlinear_concat;
    table["QLinearWhere"] = infer_qlinear_where;
    table["QLinearAveragePool"] = infer_qlinear_pool;
    table["QLinearGlobalAveragePool"] = infer_qlinear_pool;
    table["FusedMatMul"] = infer_fused_matmul;
    table["QuantizeLinear"] = infer_quantize_linear;
    table["DequantizeLinear"] = infer_quantize_linear;
    return table;
  }();
  return rules;
}

}  // namespace

ShapeRule find_contrib_shape_rule(std::string_view op_type) {
  const auto rule = contrib_shape_rules().find(op_type);
  return rule == contrib_shape_rules().end() ? nullptr : rule->second;
}

}  // namespace nxrt::graph
