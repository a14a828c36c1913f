// The shape rules of shape_rules.h and their table. Window sizes come from graph/window_geometry.h, the rule the
// Conv and pooling kernels resolve with.
#include "graph/shape_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>

#include "graph/shape_inference.h"
#include "graph/window_geometry.h"

namespace nxrt::graph {

const SymbolicShape* ShapeRuleContext::input_shape(size_t i) const {
  return input_is_tensor(i) && input(i)->shape ? &*input(i)->shape : nullptr;
}

const Tensor* ShapeRuleContext::constant_input(size_t i) const {
  return i < node.inputs.size() ? constant_value(graph, node.inputs[i]) : nullptr;
}

namespace {

// Starts output 0 as a tensor of input 0's element type with an unknown shape; false (and output 0 left unknown)
// when input 0 is not a tensor.
bool output_takes_input_type(ShapeRuleContext& ctx) {
  if (!ctx.input_is_tensor(0)) return false;
  ctx.outputs[0] = TypeInfo::tensor(ctx.input(0)->elem_type);
  return true;
}

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

Status infer_broadcast(ShapeRuleContext& ctx) {
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

Status infer_same_as_input(ShapeRuleContext& ctx) {
  if (ctx.input(0)) ctx.outputs[0] = *ctx.input(0);
  return Status::ok();
}

Status infer_matmul(ShapeRuleContext& ctx) {
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

Status infer_gemm(ShapeRuleContext& ctx) {
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

Status infer_transpose(ShapeRuleContext& ctx) {
  if (!output_takes_input_type(ctx)) return Status::ok();
  const TypeInfo& in = *ctx.input(0);
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

Status infer_reshape(ShapeRuleContext& ctx) {
  if (!output_takes_input_type(ctx)) return Status::ok();
  const TypeInfo& in = *ctx.input(0);
  const Tensor* shape_tensor = ctx.constant_input(1);
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

Status infer_cast(ShapeRuleContext& ctx) {
  TRY_ASSIGN(int64_t to, ctx.node.attr_int("to", 0));
  const auto type = data_type_from_int(to);
  if (!type || *type == DataType::kUndefined) {
    return make_error(StatusCode::kInvalidGraph, ctx.node.describe(), ": invalid 'to' type ", to);
  }
  ctx.outputs[0] = TypeInfo::tensor(*type, ctx.input_is_tensor(0) ? ctx.input(0)->shape : std::nullopt);
  return Status::ok();
}

Status infer_constant(ShapeRuleContext& ctx) {
  if (const Attribute* value = ctx.node.find_attribute("value"); value && value->type == Attribute::Type::kTensor) {
    ctx.outputs[0] = TypeInfo::tensor(value->t.dtype(), symbolic_shape_of(value->t.shape()));
  }
  return Status::ok();
}

// Integer values of a constant 0-D or 1-D int64/int32 input; nullopt when the input is absent or not such.
std::optional<std::vector<int64_t>> constant_ints(const ShapeRuleContext& ctx, size_t i) {
  const Tensor* t = ctx.constant_input(i);
  if (!t || t->rank() > 1 || t->device().type != DeviceType::kCpu) return std::nullopt;
  std::vector<int64_t> values(static_cast<size_t>(t->numel()));
  for (int64_t k = 0; k < t->numel(); ++k) {
    if (t->dtype() == DataType::kInt64) {
      values[k] = t->data<int64_t>()[k];
    } else if (t->dtype() == DataType::kInt32) {
      values[k] = t->data<int32_t>()[k];
    } else {
      return std::nullopt;
    }
  }
  return values;
}

// Elements a Slice keeps of a dim of size n for (start, end, step) as written, clamped as ONNX specifies.
int64_t slice_length(int64_t n, int64_t start, int64_t end, int64_t step) {
  const auto clamp_index = [&](int64_t v, bool is_end) {
    if (v < 0) v += n;
    if (step > 0) return std::clamp<int64_t>(v, 0, n);
    return std::clamp<int64_t>(v, is_end ? -1 : 0, n - 1);
  };
  const __int128 first = clamp_index(start, false);
  const __int128 last = clamp_index(end, true);
  const __int128 stride = step;
  const __int128 length = step > 0 ? (last - first + stride - 1) / stride : (first - last - stride - 1) / -stride;
  return static_cast<int64_t>(std::max<__int128>(length, 0));
}

// Slice (opset >= 10) with constant starts, ends and (when given) axes and steps.
Status infer_slice(ShapeRuleContext& ctx) {
  const SymbolicShape* in = ctx.input_shape(0);
  if (!output_takes_input_type(ctx)) return Status::ok();
  if (!in || ctx.node.opset < 10) return Status::ok();
  const auto starts = constant_ints(ctx, 1);
  const auto ends = constant_ints(ctx, 2);
  if (!starts || !ends || starts->size() != ends->size()) return Status::ok();
  std::vector<int64_t> axes(starts->size());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  std::vector<int64_t> steps(starts->size(), 1);
  if (ctx.input(3)) {
    const auto given = constant_ints(ctx, 3);
    if (!given || given->size() != starts->size()) return Status::ok();
    axes = *given;
  }
  if (ctx.input(4)) {
    const auto given = constant_ints(ctx, 4);
    if (!given || given->size() != starts->size()) return Status::ok();
    steps = *given;
  }
  SymbolicShape out = *in;
  const int64_t rank = static_cast<int64_t>(in->size());
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank || steps[i] == 0) return Status::ok();
    const Dim& dim = (*in)[axis];
    if (!dim.is_known()) {
      const bool whole = steps[i] == 1 && (*starts)[i] == 0 && (*ends)[i] >= std::numeric_limits<int32_t>::max();
      out[axis] = whole ? dim : Dim::unknown();
      continue;
    }
    out[axis] = Dim::known(slice_length(dim.value, (*starts)[i], (*ends)[i], steps[i]));
  }
  ctx.outputs[0].shape = std::move(out);
  return Status::ok();
}

// Concat: input shapes agree off `axis`; the axis dim is the sum (unknown when any part is or the sum overflows).
Status infer_concat(ShapeRuleContext& ctx) {
  if (!output_takes_input_type(ctx)) return Status::ok();
  const SymbolicShape* first = ctx.input_shape(0);
  const auto axis_attr = ctx.node.attr_int("axis", 0);
  if (!first || first->empty() || !axis_attr) return Status::ok();
  const int64_t rank = static_cast<int64_t>(first->size());
  const int64_t axis = *axis_attr < 0 ? *axis_attr + rank : *axis_attr;
  if (axis < 0 || axis >= rank) return Status::ok();
  SymbolicShape out = *first;
  int64_t total = 0;
  bool known = true;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const SymbolicShape* shape = ctx.input_shape(i);
    if (!shape || static_cast<int64_t>(shape->size()) != rank) return Status::ok();
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis || (*shape)[d] == out[d]) continue;
      if ((*shape)[d].is_known() && out[d].is_known()) {
        return make_error(StatusCode::kInvalidGraph, ctx.node.describe(), ": inputs 0 and ", i, " differ in dim ", d,
                          ": ", symbolic_shape_to_string(*first), " vs ", symbolic_shape_to_string(*shape));
      }
      if (!out[d].is_known()) out[d] = (*shape)[d];
    }
    known = known && (*shape)[axis].is_known() && !__builtin_add_overflow(total, (*shape)[axis].value, &total);
  }
  out[axis] = known ? Dim::known(total) : Dim::unknown();
  ctx.outputs[0].shape = std::move(out);
  return Status::ok();
}

// [N, channels, spatial...] for a window op whose kernel dims are `kernel`; a spatial output dim is unknown where its
// input dim is (each axis resolves on its own), and the whole shape stays unknown when the attributes do not resolve
// (the kernel reports those when it runs).
void write_window_shape(ShapeRuleContext& ctx, const SymbolicShape& in, const Dim& channels,
                        std::span<const int64_t> kernel) {
  auto attrs = parse_window_attrs(ctx.node);
  if (!attrs || in.size() != kernel.size() + 2) return;
  // An unknown input dim is resolved as a stand-in size that holds one dilated window plus one stride, and its
  // output dropped. The stand-in stays that small because the geometry checks that the input volume fits int64.
  std::vector<int64_t> spatial;
  for (size_t i = 2; i < in.size(); ++i) {
    if (in[i].is_known()) {
      spatial.push_back(in[i].value);
      continue;
    }
    const size_t axis = i - 2;
    const int64_t dilation = axis < attrs->dilations.size() ? attrs->dilations[axis] : 1;
    const int64_t stride = axis < attrs->strides.size() ? attrs->strides[axis] : 1;
    int64_t extent = 0;  // (kernel - 1) * dilation + 1
    int64_t stand_in = 0;
    if (kernel[axis] < 1 || __builtin_mul_overflow(kernel[axis] - 1, dilation, &extent) ||
        __builtin_add_overflow(extent, 1, &extent) || __builtin_add_overflow(extent, stride, &stand_in)) {
      return;  // the kernel reports these attributes when it runs
    }
    spatial.push_back(stand_in);
  }
  auto geometry = resolve_geometry(*attrs, spatial, kernel, ctx.node.describe());
  if (!geometry) return;
  SymbolicShape out{in[0], channels};
  for (size_t i = 0; i < geometry->out.size(); ++i) {
    out.push_back(in[i + 2].is_known() ? Dim::known(geometry->out[i]) : Dim::unknown());
  }
  ctx.outputs[0].shape = std::move(out);
}

// Conv: W is [out_channels, in_channels / group, kernel...].
Status infer_conv(ShapeRuleContext& ctx) {
  if (!output_takes_input_type(ctx)) return Status::ok();
  const SymbolicShape* in = ctx.input_shape(0);
  const SymbolicShape* w = ctx.input_shape(1);
  if (!in || !w || w->size() != in->size() || w->size() < 3) return Status::ok();
  std::vector<int64_t> kernel;
  for (size_t i = 2; i < w->size(); ++i) {
    if (!(*w)[i].is_known()) return Status::ok();
    kernel.push_back((*w)[i].value);
  }
  write_window_shape(ctx, *in, (*w)[0], kernel);
  return Status::ok();
}

// MaxPool / AveragePool: output 0 only (MaxPool's Indices output stays as declared).
Status infer_pool(ShapeRuleContext& ctx) {
  if (!output_takes_input_type(ctx)) return Status::ok();
  const SymbolicShape* in = ctx.input_shape(0);
  auto kernel = ctx.node.attr_ints("kernel_shape", {});
  if (!in || in->size() < 3 || !kernel) return Status::ok();
  write_window_shape(ctx, *in, (*in)[1], *kernel);
  return Status::ok();
}

Status infer_global_pool(ShapeRuleContext& ctx) {
  if (!output_takes_input_type(ctx)) return Status::ok();
  const SymbolicShape* in = ctx.input_shape(0);
  if (!in || in->size() < 3) return Status::ok();
  SymbolicShape out{(*in)[0], (*in)[1]};
  out.resize(in->size(), Dim::known(1));
  ctx.outputs[0].shape = std::move(out);
  return Status::ok();
}

// Resize (opset 10: X, scales; 11+: X, roi, scales, sizes; 18+: axes): X's type and rank. A resized dim is
// sizes[i] (keep_aspect_ratio_policy stretch), or floor(scale * in) in double as the kernel computes it, or the input
// dim itself where the scale is exactly 1; anything else (a computed scales or sizes input, another policy) is an
// unknown dim. Values the kernel rejects leave the shape unknown.
Status infer_resize(ShapeRuleContext& ctx) {
  if (!output_takes_input_type(ctx)) return Status::ok();
  const SymbolicShape* in = ctx.input_shape(0);
  if (!in) return Status::ok();
  const auto rank = static_cast<int64_t>(in->size());
  const auto axes_attr = ctx.node.attr_ints("axes", {});
  if (!axes_attr) return Status::ok();
  std::vector<int64_t> axes;
  std::vector<bool> seen(in->size(), false);
  for (int64_t axis : *axes_attr) {
    if (axis < -rank || axis >= rank) return Status::ok();
    const int64_t d = axis < 0 ? axis + rank : axis;
    if (seen[static_cast<size_t>(d)]) return Status::ok();
    seen[static_cast<size_t>(d)] = true;
    axes.push_back(d);
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  SymbolicShape out = *in;
  for (int64_t d : axes) out[static_cast<size_t>(d)] = Dim::unknown();
  const bool opset10 = ctx.node.opset > 0 && ctx.node.opset < 11;
  const size_t scales_input = opset10 ? 1 : 2;
  const auto given = [&](size_t i) { return ctx.input(i) != nullptr; };
  const Tensor* scales = ctx.constant_input(scales_input);
  const Tensor* sizes = opset10 ? nullptr : ctx.constant_input(3);
  const auto policy = ctx.node.attr_string("keep_aspect_ratio_policy", "stretch");
  if (sizes && sizes->numel() > 0 && (!scales || scales->numel() == 0) && policy && *policy == "stretch") {
    if (sizes->dtype() != DataType::kInt64 || sizes->rank() != 1 ||
        sizes->numel() != static_cast<int64_t>(axes.size())) {
      return Status::ok();
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t size = sizes->data<int64_t>()[i];
      if (size < 0 || size > (int64_t{1} << 40)) return Status::ok();
      out[static_cast<size_t>(axes[i])] = Dim::known(size);
    }
  } else if (scales && scales->numel() > 0 && (!given(3) || (sizes && sizes->numel() == 0))) {
    if (scales->dtype() != DataType::kFloat32 || scales->rank() != 1 ||
        scales->numel() != static_cast<int64_t>(axes.size())) {
      return Status::ok();
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      const double scale = scales->data<float>()[i];
      if (!(scale > 0) || !std::isfinite(scale)) return Status::ok();
      const Dim& dim = (*in)[static_cast<size_t>(axes[i])];
      Dim& result = out[static_cast<size_t>(axes[i])];
      if (dim.is_known()) {
        const double length = std::floor(scale * static_cast<double>(dim.value));
        if (length > 1e12) return Status::ok();
        result = Dim::known(static_cast<int64_t>(length));
      } else if (scale == 1.0) {
        result = dim;
      }
    }
  }
  ctx.outputs[0].shape = std::move(out);
  return Status::ok();
}

const std::unordered_map<std::string_view, ShapeRule>& shape_rules() {
  static const std::unordered_map<std::string_view, ShapeRule> rules = [] {
    std::unordered_map<std::string_view, ShapeRule> table;
    // Multidirectional broadcasting; output 0 takes input 0's element type (Pow's exponent may differ).
    for (std::string_view op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean"}) {
      table[op] = infer_broadcast;
    }
    // Output 0 has input 0's type and shape.
    for (std::string_view op :
         {"Identity", "Neg", "Abs", "Sqrt", "Exp", "Log", "Erf", "Reciprocal", "Relu", "Sigmoid", "Tanh", "Softplus",
          "Softsign", "Ceil", "Floor", "Round", "Sin", "Cos", "Sign", "LeakyRelu", "Gelu", "HardSigmoid", "HardSwish",
          "Clip", "Elu", "Selu", "Celu", "Mish", "Dropout", "Softmax", "LogSoftmax", "LayerNormalization"}) {
      table[op] = infer_same_as_input;
    }
    table["MatMul"] = infer_matmul;
    table["Gemm"] = infer_gemm;
    table["Transpose"] = infer_transpose;
    table["Reshape"] = infer_reshape;
    table["Cast"] = infer_cast;
    table["Constant"] = infer_constant;
    table["Slice"] = infer_slice;
    table["Concat"] = infer_concat;
    table["Conv"] = infer_conv;
    table["Resize"] = infer_resize;
    table["MaxPool"] = infer_pool;
    table["AveragePool"] = infer_pool;
    table["GlobalAveragePool"] = infer_global_pool;
    table["GlobalMaxPool"] = infer_global_pool;
    return table;
  }();
  return rules;
}

}  // namespace

ShapeRule find_shape_rule(std::string_view op_type) {
  const auto rule = shape_rules().find(op_type);
  return rule == shape_rules().end() ? nullptr : rule->second;
}

ShapeRule find_shape_rule(std::string_view domain, std::string_view op_type) {
  if (domain.empty() || domain == "ai.onnx") return find_shape_rule(op_type);
  if (domain == kMsDomain) return find_contrib_shape_rule(op_type);
  return nullptr;
}

}  // namespace nxrt::graph
