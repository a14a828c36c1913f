// Blocked-channel layout (ep/cpu/conv/nchwc.h) for float32 CNN chains, on the avx2 CPU tier and above (level 3,
// "layout"):
//   Conv / com.microsoft FusedConv (W const 4-D, B const, group 1 or depthwise, no dilation, explicit pads, any
//     fused activation)                                          -> com.nxrt:NchwcConv
//   MaxPool (2-D, one output, explicit pads) of a blocked value   -> com.nxrt:NchwcMaxPool
//   GlobalAveragePool of a blocked value                          -> com.nxrt:NchwcGlobalAveragePool
//   Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish, Neg, Abs, Clip (scalar bounds) of a blocked value, and
//   Add, Sub, Mul, Div whose tensor operands are blocked values of one channel count (any broadcast over N, H, W),
//   float scalar constants, or per-channel constants (blocked here)   -> the same op on the blocked values
//   Concat on channels of blocked values (whole blocks but the last), nearest Resize keeping N and C
//                                                                 -> the same op on the blocked values
// A conv whose input is not blocked reads it as it is when it has at most kPlainInputChannels channels (less than a
// block: a network's first conv or a space-to-depth stem, whose padded lanes would only add multiply-adds), else
// through an NchwcReorderIn shared by all its readers. Every converted node's original output is rebuilt by an
// NchwcReorderOut, dropped at the end when nothing reads the plain value. Padding lanes of blocked values hold one
// finite value each (BlockedTwin::padding): NchwcConv multiplies them by zero weights and the pools only combine a
// lane with itself, so they never reach real channels.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ep/cpu/elementwise/fused_activation.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/conv/nchwc.h"
#include "optimizer/passes.h"
#include "optimizer/rewriter.h"

namespace nxrt::optimizer {

namespace {

using graph::kNoValue;

constexpr int64_t kPlainInputChannels = 15;

// A plain value's blocked twin. `padding` is what every padding lane of the twin holds: 0 where a reorder or a conv
// made it, op(padding...) after a blocked elementwise op. Only its finiteness matters (NchwcConv multiplies padding
// lanes by zero weights; the pools and the reorder out never mix them into real channels), so a conversion that
// would make it infinite or NaN is not done.
struct BlockedTwin {
  int value = kNoValue;
  int64_t channels = 0;
  float padding = 0.0f;
};

// Padding values further than this from 0 are treated as overflowing, well before float's range ends.
constexpr double kLargestPadding = 1e30;

bool usable_padding(double value) { return std::isfinite(value) && std::abs(value) <= kLargestPadding; }

// activation(x) on one padding value, as the kernels compute it.
double activate_padding(const cpu::FusedActivation& activation, double x) {
  float value = static_cast<float>(x);
  cpu::apply_activation(activation, &value, 1);
  return value;
}

// Elementwise ops converted to work on blocked values as they are (their broadcasting is the same over the blocked
// shape when every non-scalar operand has the same channels); unary ones first.
constexpr const char* kUnaryElementwise[] = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid",
                                             "HardSwish", "Neg", "Abs", "Clip"};
constexpr const char* kBinaryElementwise[] = {"Add", "Sub", "Mul", "Div"};

template <size_t N>
bool one_of(const std::string& op, const char* const (&names)[N]) {
  return std::any_of(std::begin(names), std::end(names), [&](const char* name) { return op == name; });
}

// Static channel count of a rank-4 f32 tensor value, or -1.
int64_t plain_channels(const graph::TypeInfo& type) {
  if (!type.is_tensor() || type.elem_type != DataType::kFloat32 || !type.shape || type.shape->size() != 4) {
    return -1;
  }
  return (*type.shape)[1].is_known() ? (*type.shape)[1].value : -1;
}

graph::TypeInfo blocked_type(const graph::TypeInfo& plain, int64_t channels) {
  graph::SymbolicShape shape = *plain.shape;
  shape[1] = graph::Dim::known(cpu::nchwc::blocks_of(channels));
  shape.push_back(graph::Dim::known(cpu::nchwc::kBlock));
  return graph::TypeInfo::tensor(DataType::kFloat32, std::move(shape));
}

bool all_ones(const std::vector<int64_t>& values) {
  return std::all_of(values.begin(), values.end(), [](int64_t v) { return v == 1; });
}

class LayoutRewrite {
 public:
  explicit LayoutRewrite(Rewriter& rw) : rw_(rw) {}

  Status convert(int n) {
    const graph::Node& node = rw_.node(n);
    if (node.outputs.size() != 1 || node.outputs[0] == kNoValue) return Status::ok();
    const bool onnx = node.domain.empty();
    if ((onnx && node.op_type == "Conv") || (node.domain == graph::kMsDomain && node.op_type == "FusedConv")) {
      return convert_conv(n);
    }
    if (!onnx) return Status::ok();
    if (node.op_type == "MaxPool") return convert_max_pool(n);
    if (node.op_type == "GlobalAveragePool") {
      const auto twin = twin_of(node.inputs[0]);
      if (!twin) return Status::ok();
      graph::Node blocked = node_like(node, "NchwcGlobalAveragePool");
      blocked.inputs = {twin->value};
      return replace(n, std::move(blocked), twin->channels, twin->padding);
    }
    if (one_of(node.op_type, kUnaryElementwise) || one_of(node.op_type, kBinaryElementwise)) {
      return convert_elementwise(n);
    }
    if (node.op_type == "Concat") return convert_concat(n);
    if (node.op_type == "Resize") return convert_resize(n);
    return Status::ok();
  }

  // Drops the reorders whose plain output nothing reads.
  void drop_unread_reorders() {
    for (int r : reorder_outs_) {
      const int plain = rw_.node(r).outputs[0];
      if (rw_.value(plain).consumers.empty() && rw_.is_private(plain)) rw_.remove(r);
    }
  }

 private:
  // The blocked twin of `value`: made by this rewrite, or the input of the NchwcReorderOut producing it.
  std::optional<BlockedTwin> twin_of(int value) {
    if (value == kNoValue) return std::nullopt;
    if (auto it = twins_.find(value); it != twins_.end()) return it->second;
    const int producer = rw_.producer(value);
    if (producer >= 0 && rw_.node(producer).op_type == "NchwcReorderOut" && rw_.node(producer).domain == kNxrtDomain) {
      const auto channels = rw_.node(producer).attr_int("channels", -1);
      const auto padding = rw_.node(producer).attr_float("padding", 0.0f);
      if (channels && *channels >= 0 && padding) return BlockedTwin{rw_.node(producer).inputs[0], *channels, *padding};
    }
    return std::nullopt;
  }

  // The twin of a plain rank-4 f32 value, adding an NchwcReorderIn when there is none yet.
  std::optional<BlockedTwin> reordered(int value) {
    if (auto twin = twin_of(value)) return twin;
    const graph::TypeInfo type = rw_.value(value).type;
    const int64_t channels = plain_channels(type);
    if (channels <= 0) return std::nullopt;
    const BlockedTwin twin{rw_.new_value(rw_.value(value).name + "_nchwc", blocked_type(type, channels)), channels};
    rw_.add(reorder_node("NchwcReorderIn", rw_.value(value).name + "_nchwc_in", value, twin.value));
    twins_[value] = twin;
    return twin;
  }

  // `original` as op_type over blocked values: the same op keeps its domain and opset, others are com.nxrt ops.
  static graph::Node node_like(const graph::Node& original, const char* op_type) {
    graph::Node node;
    node.op_type = op_type;
    const bool same_op = original.op_type == op_type;
    node.domain = same_op ? original.domain : kNxrtDomain;
    node.opset = same_op ? original.opset : 1;
    node.name = original.name.empty() ? original.op_type + "_nchwc" : original.name;
    node.attributes = original.attributes;
    return node;
  }

  static graph::Node reorder_node(const char* op_type, std::string name, int input, int output) {
    graph::Node node;
    node.op_type = op_type;
    node.domain = kNxrtDomain;
    node.opset = 1;
    node.name = std::move(name);
    node.inputs = {input};
    node.outputs = {output};
    return node;
  }

  // Replaces node n by `blocked` (inputs set, output added here) and an NchwcReorderOut rebuilding n's output, whose
  // padding lanes hold `padding` (recorded on the reorder, for twin_of).
  Status replace(int n, graph::Node blocked, int64_t channels, float padding) {
    const int plain = rw_.node(n).outputs[0];
    const graph::TypeInfo type = rw_.value(plain).type;
    if (plain_channels(type) != channels) return Status::ok();
    const BlockedTwin twin{rw_.new_value(rw_.value(plain).name + "_nchwc", blocked_type(type, channels)), channels,
                           padding};
    blocked.outputs = {twin.value};
    graph::Node reorder = reorder_node("NchwcReorderOut", blocked.name + "_nchwc_out", twin.value, plain);
    reorder.attributes = {make_int_attribute("channels", channels)};
    if (padding != 0.0f) reorder.attributes.push_back(make_float_attribute("padding", padding));
    rw_.remove(n);
    rw_.add(std::move(blocked));
    reorder_outs_.push_back(rw_.add(std::move(reorder)));
    twins_[plain] = twin;
    return Status::ok();
  }

  Status convert_conv(int n) {
    const graph::Node node = rw_.node(n);  // a copy: reordered() appends nodes
    const bool fused = node.op_type == "FusedConv";
    if (node.inputs.size() < 2 || node.inputs.size() > (fused ? 4u : 3u)) return Status::ok();
    if (node.inputs[0] == kNoValue || node.outputs.empty() || node.outputs[0] == kNoValue) return Status::ok();
    const Tensor* w = rw_.constant(node.inputs[1]);
    const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
    const Tensor* b = has_bias ? rw_.constant(node.inputs[2]) : nullptr;
    const int64_t in_channels = plain_channels(rw_.value(node.inputs[0]).type);
    if (w == nullptr || w->dtype() != DataType::kFloat32 || w->rank() != 4 ||
        (has_bias && (b == nullptr || b->dtype() != DataType::kFloat32 || b->numel() != w->shape()[0]))) {
      return Status::ok();
    }
    const auto group = node.attr_int("group", 1);
    if (!group) return Status::ok();
    // Depthwise: one filter per input channel (the kernel needs a blocked input).
    const bool depthwise = *group > 1 && *group == in_channels && w->shape()[0] == in_channels && w->shape()[1] == 1;
    if (!depthwise && (*group != 1 || in_channels != w->shape()[1])) return Status::ok();
    const auto auto_pad = node.attr_string("auto_pad", "NOTSET");
    const auto dilations = node.attr_ints("dilations", {1, 1});
    const auto strides = node.attr_ints("strides", {1, 1});
    const auto pads = node.attr_ints("pads", {0, 0, 0, 0});
    const auto kernel_shape = node.attr_ints("kernel_shape", {w->shape()[2], w->shape()[3]});
    if (!auto_pad || *auto_pad != "NOTSET" || !dilations || dilations->size() != 2 ||
        !all_ones(*dilations) || !strides || strides->size() != 2 || !pads || pads->size() != 4 || !kernel_shape ||
        *kernel_shape != std::vector<int64_t>{w->shape()[2], w->shape()[3]}) {
      return Status::ok();
    }
    cpu::FusedActivation activation;
    if (fused) {
      const auto name = node.attr_string("activation", "");
      const auto params = node.attr_floats("activation_params", {});
      if (!name || !params) return Status::ok();
      const auto parsed = cpu::parse_fused_activation(*name, *params, node.describe());
      if (!parsed) return Status::ok();
      activation = *parsed;
    }
    graph::Node blocked = node_like(node, "NchwcConv");
    const int64_t out_channels = w->shape()[0];
    if (plain_channels(rw_.value(node.outputs[0]).type) != out_channels) return Status::ok();
    std::optional<BlockedTwin> input = twin_of(node.inputs[0]);
    const bool plain_input = !input && !depthwise && in_channels <= kPlainInputChannels;
    if (!input && !plain_input) input = reordered(node.inputs[0]);
    if (!input && !plain_input) return Status::ok();
    std::optional<BlockedTwin> z;
    if (node.inputs.size() > 3 && node.inputs[3] != kNoValue) {
      if (plain_channels(rw_.value(node.inputs[3]).type) != out_channels) return Status::ok();
      z = reordered(node.inputs[3]);
      if (!z) return Status::ok();
    }
    blocked.inputs = {plain_input ? node.inputs[0] : input->value, node.inputs[1],
                      has_bias ? node.inputs[2] : kNoValue};
    if (z) blocked.inputs.push_back(z->value);
    if (!fused) {
      blocked.attributes.push_back(make_string_attribute("activation", ""));
      blocked.attributes.push_back(make_floats_attribute("activation_params", {}));
    }
    blocked.attributes.push_back(make_int_attribute("input_blocked", plain_input ? 0 : 1));
    // Padding output lanes: zero weights and bias, plus Z's padding, activated.
    const double padding = activate_padding(activation, z ? z->padding : 0.0);
    if (!usable_padding(padding)) return Status::ok();
    return replace(n, std::move(blocked), out_channels, static_cast<float>(padding));
  }

  Status convert_max_pool(int n) {
    const graph::Node& node = rw_.node(n);
    const auto twin = twin_of(node.inputs[0]);
    if (!twin) return Status::ok();
    const auto kernel = node.attr_ints("kernel_shape", {});
    const auto auto_pad = node.attr_string("auto_pad", "NOTSET");
    const auto dilations = node.attr_ints("dilations", {1, 1});
    const auto strides = node.attr_ints("strides", {1, 1});
    const auto pads = node.attr_ints("pads", {0, 0, 0, 0});
    if (!kernel || kernel->size() != 2 || !auto_pad || *auto_pad != "NOTSET" || !dilations || dilations->size() != 2 ||
        !strides || strides->size() != 2 || !pads || pads->size() != 4) {
      return Status::ok();
    }
    for (int d = 0; d < 2; ++d) {
      // Every window must hold an input tap: a begin pad inside the (dilated) kernel.
      if ((*pads)[d] >= ((*kernel)[d] - 1) * (*dilations)[d] + 1) return Status::ok();
    }
    graph::Node blocked = node_like(node, "NchwcMaxPool");
    blocked.inputs = {twin->value};
    std::erase_if(blocked.attributes, [](const graph::Attribute& a) { return a.name == "storage_order"; });
    return replace(n, std::move(blocked), twin->channels, twin->padding);
  }

  // Concat along the channels of blocked values whose channel counts, all but the last one's, are whole blocks: the
  // blocked tensors concatenate along their block axis, and the last input's padding lanes are the output's.
  Status convert_concat(int n) {
    const graph::Node& node = rw_.node(n);
    const auto axis = node.attr_int("axis", 0);
    if (!axis || (*axis != 1 && *axis != -3) || node.inputs.empty()) return Status::ok();
    std::vector<int> inputs;
    int64_t channels = 0;
    float padding = 0.0f;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const auto twin = twin_of(node.inputs[i]);
      if (!twin || (i + 1 < node.inputs.size() && twin->channels % cpu::nchwc::kBlock != 0)) return Status::ok();
      inputs.push_back(twin->value);
      channels += twin->channels;
      padding = twin->padding;
    }
    graph::Node blocked = node_like(node, "Concat");
    std::erase_if(blocked.attributes, [](const graph::Attribute& a) { return a.name == "axis"; });
    blocked.attributes.push_back(make_int_attribute("axis", 1));
    blocked.inputs = std::move(inputs);
    return replace(n, std::move(blocked), channels, padding);
  }

  // Nearest-neighbour Resize of a blocked value that keeps N and C (constant scales [1, 1, sh, sw] or sizes
  // [n, C, h, w]; no crop, no antialias, no axes): the same Resize over the blocked shape, with the lane axis kept.
  Status convert_resize(int n) {
    const graph::Node node = rw_.node(n);  // a copy: new_initializer adds values
    const auto twin = twin_of(node.inputs[0]);
    if (!twin) return Status::ok();
    const auto mode = node.attr_string("mode", "nearest");
    const auto coordinates = node.attr_string("coordinate_transformation_mode", "half_pixel");
    const auto antialias = node.attr_int("antialias", 0);
    const auto axes = node.attr_ints("axes", {});
    const auto policy = node.attr_string("keep_aspect_ratio_policy", "stretch");
    if (!mode || *mode != "nearest" || !coordinates || *coordinates == "tf_crop_and_resize" || !antialias ||
        *antialias != 0 || !axes || !axes->empty() || !policy || *policy != "stretch") {
      return Status::ok();
    }
    const size_t scales_input = node.opset < 11 ? 1 : 2;
    const Tensor* scales = scales_input < node.inputs.size() ? rw_.constant(node.inputs[scales_input]) : nullptr;
    const Tensor* sizes = node.opset >= 11 && node.inputs.size() > 3 ? rw_.constant(node.inputs[3]) : nullptr;
    graph::Node blocked = node_like(node, "Resize");
    blocked.inputs = node.inputs;
    blocked.inputs[0] = twin->value;
    if (scales && scales->numel() == 4 && scales->dtype() == DataType::kFloat32 &&
        (node.inputs.size() <= 3 || node.inputs[3] == kNoValue)) {
      const float* s = scales->data<float>();
      if (s[0] != 1.0f || s[1] != 1.0f) return Status::ok();
      auto blocked_scales = Tensor::allocate(DataType::kFloat32, Shape{5});
      if (!blocked_scales) return Status::ok();
      const float values[5] = {1.0f, 1.0f, s[2], s[3], 1.0f};
      std::copy(values, values + 5, blocked_scales->data<float>());
      blocked.inputs[scales_input] =
          rw_.new_initializer(rw_.value(node.inputs[scales_input]).name + "_nchwc", std::move(*blocked_scales));
    } else if (sizes && sizes->numel() == 4 && sizes->dtype() == DataType::kInt64 &&
               (!scales || scales->numel() == 0)) {
      const int64_t* z = sizes->data<int64_t>();
      if (z[1] != twin->channels) return Status::ok();
      auto blocked_sizes = Tensor::allocate(DataType::kInt64, Shape{5});
      if (!blocked_sizes) return Status::ok();
      const int64_t values[5] = {z[0], cpu::nchwc::blocks_of(twin->channels), z[2], z[3], cpu::nchwc::kBlock};
      std::copy(values, values + 5, blocked_sizes->data<int64_t>());
      blocked.inputs[3] = rw_.new_initializer(rw_.value(node.inputs[3]).name + "_nchwc", std::move(*blocked_sizes));
    } else {
      return Status::ok();
    }
    return replace(n, std::move(blocked), twin->channels, twin->padding);
  }

  // One operand of a blocked elementwise op: a blocked twin, or a scalar constant used as it is.
  struct Operand {
    int value = kNoValue;
    double padding = 0;  // the twin's padding, or the scalar
    bool blocked = false;
  };

  // Operand `value` of an elementwise op over `channels` channels: its twin, a float scalar constant (rank <= 4, so
  // it broadcasts alike over both layouts), or a per-channel constant ([C, 1, 1] or [1, C, 1, 1]) blocked here into
  // a [1, C/16, 1, 1, 16] initializer with zero padding. nullopt: the op stays plain.
  std::optional<Operand> operand(int value, int64_t channels) {
    if (const auto twin = twin_of(value)) {
      if (twin->channels != channels) return std::nullopt;
      return Operand{twin->value, twin->padding, true};
    }
    const Tensor* constant = rw_.constant(value);
    if (!constant || constant->dtype() != DataType::kFloat32 || constant->device().type != DeviceType::kCpu) {
      return std::nullopt;
    }
    const Shape& shape = constant->shape();
    if (constant->numel() == 1 && shape.size() <= 4) return Operand{value, *constant->data<float>(), false};
    const bool per_channel = (shape == Shape{channels, 1, 1}) || (shape == Shape{1, channels, 1, 1});
    if (!per_channel) return std::nullopt;
    const Shape blocked_shape{1, cpu::nchwc::blocks_of(channels), 1, 1, cpu::nchwc::kBlock};
    auto blocked = Tensor::allocate(DataType::kFloat32, blocked_shape);
    if (!blocked) return std::nullopt;
    float* lanes = blocked->data<float>();
    std::fill(lanes, lanes + blocked->numel(), 0.0f);
    std::copy(constant->data<float>(), constant->data<float>() + channels, lanes);
    const BlockedTwin twin{rw_.new_initializer(rw_.value(value).name + "_nchwc", std::move(*blocked)), channels};
    twins_[value] = twin;
    return Operand{twin.value, 0.0, true};
  }

  // Relu, Sigmoid, ..., Add, Mul, ... whose tensor operands are all blocked with one channel count, applied to the
  // blocked values as they are.
  Status convert_elementwise(int n) {
    const graph::Node node = rw_.node(n);  // a copy: operand() may add values
    const bool unary = one_of(node.op_type, kUnaryElementwise);
    const size_t operands = unary ? 1 : 2;
    if (node.inputs.size() < operands) return Status::ok();
    int64_t channels = -1;
    for (size_t i = 0; i < operands; ++i) {
      if (const auto twin = twin_of(node.inputs[i])) channels = twin->channels;
    }
    if (channels < 0) return Status::ok();
    std::vector<Operand> values;
    for (size_t i = 0; i < operands; ++i) {
      const auto value = operand(node.inputs[i], channels);
      if (!value) return Status::ok();
      values.push_back(*value);
    }
    const auto padding = elementwise_padding(node, values);
    if (!padding || !usable_padding(*padding)) return Status::ok();
    graph::Node blocked = node_like(node, node.op_type.c_str());
    blocked.inputs = node.inputs;
    for (size_t i = 0; i < operands; ++i) blocked.inputs[i] = values[i].value;
    return replace(n, std::move(blocked), channels, static_cast<float>(*padding));
  }

  // The op applied to its operands' padding values (the Clip bounds must be scalar constants or omitted), or nullopt.
  std::optional<double> elementwise_padding(const graph::Node& node, const std::vector<Operand>& values) const {
    const double x = values[0].padding;
    const std::string& op = node.op_type;
    if (op == "Add") return x + values[1].padding;
    if (op == "Sub") return x - values[1].padding;
    if (op == "Mul") return x * values[1].padding;
    if (op == "Div") return x / values[1].padding;
    if (op == "Relu") return std::max(0.0, x);
    if (op == "Neg") return -x;
    if (op == "Abs") return std::abs(x);
    if (op == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
    if (op == "Tanh") return std::tanh(x);
    if (op == "HardSwish") return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0);
    if (op == "LeakyRelu") {
      const auto alpha = node.attr_float("alpha", 0.01f);
      if (!alpha) return std::nullopt;
      return x < 0 ? x * *alpha : x;
    }
    if (op == "HardSigmoid") {
      const auto alpha = node.attr_float("alpha", 0.2f);
      const auto beta = node.attr_float("beta", 0.5f);
      if (!alpha || !beta) return std::nullopt;
      return std::clamp(*alpha * x + *beta, 0.0, 1.0);
    }
    if (op == "Clip") {
      const auto bounds = rw_.clip_bounds(node);
      if (!bounds) return std::nullopt;
      return std::min<double>(bounds->second, std::max<double>(bounds->first, x));
    }
    return std::nullopt;
  }

  Rewriter& rw_;
  std::unordered_map<int, BlockedTwin> twins_;  // plain value -> its blocked twin
  std::vector<int> reorder_outs_;
};

}  // namespace

Expected<bool> convert_to_nchwc(graph::Graph& graph, std::string_view owner) {
  if (cpu::nchwc::active_tier_kernels() == nullptr || cpu::find_kernel(kNxrtDomain, "NchwcConv", 1) == nullptr) {
    return false;
  }
  Rewriter rw(graph, owner);
  LayoutRewrite layout(rw);
  const int original_count = rw.node_count();
  for (int n = 0; n < original_count; ++n) {
    if (rw.is_matchable(n)) TRY(layout.convert(n));
  }
  layout.drop_unread_reorders();
  TRY(rw.finish());
  return rw.changed();
}

}  // namespace nxrt::optimizer
