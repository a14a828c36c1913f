// Blocked-channel layout (ep/cpu/conv/nchwc.h) for float32 CNN chains, on CPUs with AVX-512F (level 3, "layout"):
//   Conv / com.microsoft FusedConv (W const 4-D, B const, group 1, no dilation, explicit pads, activation none,
//     Relu, LeakyRelu or Clip)                                   -> com.nxrt:NchwcConv
//   MaxPool (2-D, one output, explicit pads) of a blocked value   -> com.nxrt:NchwcMaxPool
//   GlobalAveragePool of a blocked value                          -> com.nxrt:NchwcGlobalAveragePool
//   Add of two blocked values of one shape, Relu of a blocked one -> the same op on the blocked values
// A conv whose input is not blocked reads it as it is when it has at most kPlainInputChannels channels (a network's
// first conv), else through an NchwcReorderIn shared by all its readers. Every converted node's original output is
// rebuilt by an NchwcReorderOut, dropped at the end when nothing reads the plain value. Padding lanes of blocked
// values stay 0 through these ops (Add and Relu keep 0; the conv's padded weights and bias are 0; pools only combine
// a lane with itself); NchwcConv multiplies them by zero weights, so they never reach real channels.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/elementwise/fused_activation.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/conv/nchwc.h"
#include "optimizer/passes.h"
#include "optimizer/rewriter.h"

namespace nxrt::optimizer {

namespace {

using graph::kNoValue;

constexpr int64_t kPlainInputChannels = 4;

struct BlockedTwin {
  int value = kNoValue;
  int64_t channels = 0;
};

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
    if (node.op_type == "GlobalAveragePool" || node.op_type == "Relu") {
      const auto twin = twin_of(node.inputs[0]);
      if (!twin) return Status::ok();
      graph::Node blocked = node_like(node, node.op_type == "Relu" ? "Relu" : "NchwcGlobalAveragePool");
      blocked.inputs = {twin->value};
      return replace(n, std::move(blocked), twin->channels);
    }
    if (node.op_type == "Add") {
      const auto a = twin_of(node.inputs[0]);
      const auto b = twin_of(node.inputs[1]);
      if (!a || !b || a->channels != b->channels ||
          !same_static_or_symbolic_shape(rw_.value(node.inputs[0]).type, rw_.value(node.inputs[1]).type) ||
          !same_static_or_symbolic_shape(rw_.value(node.inputs[0]).type, rw_.value(node.outputs[0]).type)) {
        return Status::ok();
      }
      graph::Node blocked = node_like(node, "Add");
      blocked.inputs = {a->value, b->value};
      return replace(n, std::move(blocked), a->channels);
    }
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
      if (channels && *channels >= 0) return BlockedTwin{rw_.node(producer).inputs[0], *channels};
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

  // Replaces node n by `blocked` (inputs set, output added here) and an NchwcReorderOut rebuilding n's output.
  Status replace(int n, graph::Node blocked, int64_t channels) {
    const int plain = rw_.node(n).outputs[0];
    const graph::TypeInfo type = rw_.value(plain).type;
    if (plain_channels(type) != channels) return Status::ok();
    const BlockedTwin twin{rw_.new_value(rw_.value(plain).name + "_nchwc", blocked_type(type, channels)), channels};
    blocked.outputs = {twin.value};
    graph::Node reorder = reorder_node("NchwcReorderOut", blocked.name + "_nchwc_out", twin.value, plain);
    reorder.attributes = {make_int_attribute("channels", channels)};
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
    if (w == nullptr || w->dtype() != DataType::kFloat32 || w->rank() != 4 || in_channels != w->shape()[1] ||
        (has_bias && (b == nullptr || b->dtype() != DataType::kFloat32 || b->numel() != w->shape()[0]))) {
      return Status::ok();
    }
    const auto group = node.attr_int("group", 1);
    const auto auto_pad = node.attr_string("auto_pad", "NOTSET");
    const auto dilations = node.attr_ints("dilations", {1, 1});
    const auto strides = node.attr_ints("strides", {1, 1});
    const auto pads = node.attr_ints("pads", {0, 0, 0, 0});
    const auto kernel_shape = node.attr_ints("kernel_shape", {w->shape()[2], w->shape()[3]});
    if (!group || *group != 1 || !auto_pad || *auto_pad != "NOTSET" || !dilations || dilations->size() != 2 ||
        !all_ones(*dilations) || !strides || strides->size() != 2 || !pads || pads->size() != 4 || !kernel_shape ||
        *kernel_shape != std::vector<int64_t>{w->shape()[2], w->shape()[3]}) {
      return Status::ok();
    }
    if (fused) {
      const auto name = node.attr_string("activation", "");
      const auto params = node.attr_floats("activation_params", {});
      if (!name || !params) return Status::ok();
      const auto activation = cpu::parse_fused_activation(*name, *params, node.describe());
      if (!activation || !cpu::activation_in_avx512_registers(activation->kind)) return Status::ok();
    }
    graph::Node blocked = node_like(node, "NchwcConv");
    const int64_t out_channels = w->shape()[0];
    if (plain_channels(rw_.value(node.outputs[0]).type) != out_channels) return Status::ok();
    std::optional<BlockedTwin> input = twin_of(node.inputs[0]);
    const bool plain_input = !input && in_channels <= kPlainInputChannels;
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
    return replace(n, std::move(blocked), out_channels);
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
    return replace(n, std::move(blocked), twin->channels);
  }

  Rewriter& rw_;
  std::unordered_map<int, BlockedTwin> twins_;  // plain value -> its blocked twin
  std::vector<int> reorder_outs_;
};

}  // namespace

Expected<bool> convert_to_nchwc(graph::Graph& graph, std::string_view owner) {
  if (!cpu::cpu_isa_at_least(cpu::CpuIsa::kAvx512) || cpu::find_kernel(kNxrtDomain, "NchwcConv", 1) == nullptr) return false;
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
