#include "graph/shape_inference.h"

#include <algorithm>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "graph/model_limits.h"

namespace nxrt::graph {

namespace {

struct InferenceContext {
  const Graph& graph;
  const Node& node;
  std::vector<const TypeInfo*> inputs;  // nullptr for omitted inputs
  std::vector<TypeInfo> outputs;

  const TypeInfo* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  bool input_is_tensor(size_t i) const { return input(i) && input(i)->is_tensor(); }
};

using InferFn = Status (*)(InferenceContext&);

Status broadcast_dims(const Node& node, const SymbolicShape& a, const SymbolicShape& b, SymbolicShape& out) {
  const size_t rank = std::max(a.size(), b.size());
  out.assign(rank, Dim::unknown());
  for (size_t i = 0; i < rank; ++i) {
    const Dim da = i < rank - a.size() ? Dim::known(1) : a[i - (rank - a.size())];
    const Dim db = i < rank - b.size() ? Dim::known(1) : b[i - (rank - b.size())];
    if (da == db) out[i] = da;
    else if (da.is_known() && da.value == 1) out[i] = db;
    else if (db.is_known() && db.value == 1) out[i] = da;
    else if (da.is_known() && db.is_known()) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": shapes ", symbolic_shape_to_string(a), " and ",
                        symbolic_shape_to_string(b), " cannot broadcast (dim ", i, ": ", da.value, " vs ", db.value, ")");
    } else if (da.is_known()) out[i] = da;
    else if (db.is_known()) out[i] = db;
  }
  return Status::ok();
}

Status infer_broadcast(InferenceContext& ctx) {
  DataType type = DataType::kUndefined;
  std::optional<SymbolicShape> shape = SymbolicShape{};
  for (const TypeInfo* input : ctx.inputs) {
    if (!input || !input->is_tensor()) return Status::ok();
    if (type == DataType::kUndefined) type = input->elem_type;
    if (!input->shape || !shape) {
      shape.reset();
      continue;
    }
    SymbolicShape merged;
    TRY(broadcast_dims(ctx.node, *shape, *input->shape, merged));
    shape = std::move(merged);
  }
  ctx.outputs[0] = TypeInfo::tensor(type, shape);
  return Status::ok();
}

Status infer_same_as_input(InferenceContext& ctx) {
  if (ctx.input(0)) ctx.outputs[0] = *ctx.input(0);
  return Status::ok();
}

Status infer_matmul(InferenceContext& ctx) {
  if (!ctx.input_is_tensor(0) || !ctx.input_is_tensor(1)) return Status::ok();
  const TypeInfo& a = *ctx.input(0);
  const TypeInfo& b = *ctx.input(1);
  ctx.outputs[0] = TypeInfo::tensor(a.elem_type);
  if (!a.shape || !b.shape) return Status::ok();
  SymbolicShape sa = *a.shape, sb = *b.shape;
  if (sa.empty() || sb.empty()) {
    return make_error(StatusCode::kInvalidGraph, ctx.node.describe(), ": MatMul inputs must have rank >= 1");
  }
  const bool a_vector = sa.size() == 1, b_vector = sb.size() == 1;
  if (a_vector) sa.insert(sa.begin(), Dim::known(1));
  if (b_vector) sb.push_back(Dim::known(1));
  const Dim& k_a = sa.back();
  const Dim& k_b = sb[sb.size() - 2];
  if (k_a.is_known() && k_b.is_known() && k_a.value != k_b.value) {
    return make_error(StatusCode::kInvalidGraph, ctx.node.describe(), ": inner dimensions differ: ",
                      symbolic_shape_to_string(*a.shape), " x ", symbolic_shape_to_string(*b.shape));
  }
  SymbolicShape batch;
  TRY(broadcast_dims(ctx.node, SymbolicShape(sa.begin(), sa.end() - 2), SymbolicShape(sb.begin(), sb.end() - 2), batch));
  if (!a_vector) batch.push_back(sa[sa.size() - 2]);
  if (!b_vector) batch.push_back(sb.back());
  ctx.outputs[0].shape = std::move(batch);
  return Status::ok();
}

Status infer_gemm(InferenceContext& ctx) {
  if (!ctx.input_is_tensor(0) || !ctx.input_is_tensor(1)) return Status::ok();
  const TypeInfo& a = *ctx.input(0);
  const TypeInfo& b = *ctx.input(1);
  ctx.outputs[0] = TypeInfo::tensor(a.elem_type);
  if (!a.shape || !b.shape) return Status::ok();
  if (a.shape->size() != 2 || b.shape->size() != 2) {
    return make_error(StatusCode::kInvalidGraph, ctx.node.describe(), ": Gemm inputs must be 2-D, got ",
                      symbolic_shape_to_string(*a.shape), " and ", symbolic_shape_to_string(*b.shape));
  }
  TRY_ASSIGN(int64_t trans_a, ctx.node.attr_int("transA", 0));
  TRY_ASSIGN(int64_t trans_b, ctx.node.attr_int("transB", 0));
  const Dim& m = (*a.shape)[trans_a ? 1 : 0];
  const Dim& n = (*b.shape)[trans_b ? 0 : 1];
  const Dim& k_a = (*a.shape)[trans_a ? 0 : 1];
  const Dim& k_b = (*b.shape)[trans_b ? 1 : 0];
  if (k_a.is_known() && k_b.is_known() && k_a.value != k_b.value) {
    return make_error(StatusCode::kInvalidGraph, ctx.node.describe(), ": inner dimensions differ: ", k_a.value,
                      " vs ", k_b.value);
  }
  ctx.outputs[0].shape = SymbolicShape{m, n};
  return Status::ok();
}

Status infer_transpose(InferenceContext& ctx) {
  if (!ctx.input_is_tensor(0)) return Status::ok();
  const TypeInfo& in = *ctx.input(0);
  ctx.outputs[0] = TypeInfo::tensor(in.elem_type);
  if (!in.shape) return Status::ok();
  const size_t rank = in.shape->size();
  std::vector<int64_t> reversed(rank);
  for (size_t i = 0; i < rank; ++i) reversed[i] = static_cast<int64_t>(rank - 1 - i);
  TRY_ASSIGN(std::vector<int64_t> perm, ctx.node.attr_ints("perm", reversed));
  if (perm.size() != rank) {
    return make_error(StatusCode::kInvalidGraph, ctx.node.describe(), ": perm has ", perm.size(),
                      " entries for an input of rank ", rank);
  }
  SymbolicShape out;
  std::vector<bool> used(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || used[p]) {
      return make_error(StatusCode::kInvalidGraph, ctx.node.describe(), ": perm is not a permutation of 0..", rank - 1);
    }
    used[p] = true;
    out.push_back((*in.shape)[p]);
  }
  ctx.outputs[0].shape = std::move(out);
  return Status::ok();
}

Status infer_reshape(InferenceContext& ctx) {
  if (!ctx.input_is_tensor(0)) return Status::ok();
  const TypeInfo& in = *ctx.input(0);
  ctx.outputs[0] = TypeInfo::tensor(in.elem_type);
  const Tensor* shape_tensor = ctx.node.inputs.size() > 1 ? constant_value(ctx.graph, ctx.node.inputs[1]) : nullptr;
  if (!shape_tensor || shape_tensor->dtype() != DataType::kInt64 || shape_tensor->rank() != 1) return Status::ok();
  TRY_ASSIGN(int64_t allow_zero, ctx.node.attr_int("allowzero", 0));
  const int64_t* requested = shape_tensor->data<int64_t>();
  SymbolicShape out;
  int infer_index = -1;
  for (int64_t i = 0; i < shape_tensor->numel(); ++i) {
    const int64_t d = requested[i];
    if (d == 0 && !allow_zero) {
      if (!in.shape || i >= static_cast<int64_t>(in.shape->size())) return Status::ok();
      out.push_back((*in.shape)[i]);
    } else if (d == -1) {
      if (infer_index >= 0) {
        return make_error(StatusCode::kInvalidGraph, ctx.node.describe(), ": shape has more than one -1");
      }
      infer_index = static_cast<int>(i);
      out.push_back(Dim::unknown());
    } else if (d < -1) {
      return make_error(StatusCode::kInvalidGraph, ctx.node.describe(), ": invalid shape value ", d);
    } else {
      out.push_back(Dim::known(d));
    }
  }
  if (infer_index >= 0 && in.shape) {
    const auto in_concrete = concrete_shape_of(*in.shape);
    // -1: the input's element count is unknown or overflows.
    const int64_t in_count = in_concrete ? checked_numel(*in_concrete).value_or(-1) : -1;
    // A product that overflows leaves the dim unknown: the kernel reports that shape when the node runs.
    int64_t known_product = 1;
    bool all_known = true;
    for (const Dim& d : out) {
      if (d.is_known()) all_known = all_known && !__builtin_mul_overflow(known_product, d.value, &known_product);
      else if (&d != &out[infer_index]) all_known = false;
    }
    if (in_count >= 0 && all_known && known_product > 0 && in_count % known_product == 0) {
      out[infer_index] = Dim::known(in_count / known_product);
    }
  }
  ctx.outputs[0].shape = std::move(out);
  return Status::ok();
}

Status infer_cast(InferenceContext& ctx) {
  TRY_ASSIGN(int64_t to, ctx.node.attr_int("to", 0));
  const auto type = data_type_from_int(to);
  if (!type || *type == DataType::kUndefined) {
    return make_error(StatusCode::kInvalidGraph, ctx.node.describe(), ": invalid 'to' type ", to);
  }
  ctx.outputs[0] = TypeInfo::tensor(*type, ctx.input_is_tensor(0) ? ctx.input(0)->shape : std::nullopt);
  return Status::ok();
}

Status infer_constant(InferenceContext& ctx) {
  if (const Attribute* value = ctx.node.find_attribute("value"); value && value->type == Attribute::Type::kTensor) {
    ctx.outputs[0] = TypeInfo::tensor(value->t.dtype(), symbolic_shape_of(value->t.shape()));
  }
  return Status::ok();
}

const std::unordered_map<std::string_view, InferFn>& inference_rules() {
  static const std::unordered_map<std::string_view, InferFn> rules = {
      {"Add", infer_broadcast},      {"Sub", infer_broadcast},         {"Mul", infer_broadcast},
      {"Div", infer_broadcast},      {"Relu", infer_same_as_input},    {"Sigmoid", infer_same_as_input},
      {"Tanh", infer_same_as_input}, {"Identity", infer_same_as_input}, {"MatMul", infer_matmul},
      {"Gemm", infer_gemm},          {"Transpose", infer_transpose},   {"Reshape", infer_reshape},
      {"Cast", infer_cast},          {"Constant", infer_constant},
  };
  return rules;
}

// A declared (value_info) type wins where inference knows less, e.g. an unknown dim.
void merge_inferred(TypeInfo& declared, const TypeInfo& inferred) {
  if (inferred.kind == TypeInfo::Kind::kUnknown) return;
  if (declared.kind == TypeInfo::Kind::kUnknown || !declared.shape) {
    const auto kept_shape = declared.shape;
    declared = inferred;
    if (!declared.shape && kept_shape) declared.shape = kept_shape;
    return;
  }
  if (inferred.shape && inferred.shape->size() == declared.shape->size()) {
    for (size_t i = 0; i < inferred.shape->size(); ++i) {
      if (!(*declared.shape)[i].is_known() && (*inferred.shape)[i].is_known()) (*declared.shape)[i] = (*inferred.shape)[i];
    }
  }
}

}  // namespace

const Tensor* constant_value(const Graph& graph, int value) {
  if (value == kNoValue) return nullptr;
  const Value& v = graph.values[value];
  if (v.initializer && !v.is_graph_input) return &*v.initializer;
  if (v.producer == kNoValue) return nullptr;
  const Node& producer = graph.nodes[v.producer];
  if (producer.op_type != "Constant" || !producer.domain.empty()) return nullptr;
  const Attribute* attribute = producer.find_attribute("value");
  return attribute && attribute->type == Attribute::Type::kTensor ? &attribute->t : nullptr;
}

Status infer_node_types(Graph& graph, const Node& node) {
  if (!node.domain.empty()) return Status::ok();
  const auto rule = inference_rules().find(node.op_type);
  if (rule == inference_rules().end() || node.outputs.empty()) return Status::ok();
  InferenceContext ctx{graph, node, {}, std::vector<TypeInfo>(node.outputs.size())};
  for (int input : node.inputs) ctx.inputs.push_back(input == kNoValue ? nullptr : &graph.values[input].type);
  TRY(rule->second(ctx));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != kNoValue) merge_inferred(graph.values[node.outputs[i]].type, ctx.outputs[i]);
  }
  return Status::ok();
}

namespace {

// `graph_level` counts as graph::kMaxGraphNesting does; checked before recursing into a node's subgraphs.
Status infer_shapes_at(Graph& graph, int graph_level) {
  for (Node& node : graph.nodes) {
    for (Attribute& attribute : node.attributes) {
      if (!attribute.g && attribute.graphs.empty()) continue;
      if (graph_level >= kMaxGraphNesting) {
        return make_error(StatusCode::kInvalidArgument, "shape inference: ", node.describe(), " of graph '",
                          graph.name, "': subgraph nesting level ", graph_level + 1, " exceeds the limit of ",
                          kMaxGraphNesting);
      }
      if (attribute.g) TRY(infer_shapes_at(*attribute.g, graph_level + 1));
      for (auto& sub : attribute.graphs) TRY(infer_shapes_at(*sub, graph_level + 1));
    }
    TRY(infer_node_types(graph, node));
  }
  return Status::ok();
}

}  // namespace

Status infer_shapes(Graph& graph) { return infer_shapes_at(graph, 0); }

}  // namespace nxrt::graph
