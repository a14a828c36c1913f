// Folding of per-channel affine ops that follow a Conv into the Conv's constant weights and bias:
//   BatchNormalization (inference): W' = W * s, B' = (B - mean) * s + bias with s = scale / sqrt(var + eps)
//   Mul by a per-channel (or scalar) constant c: W' = W * c, B' = B * c
//   Add of a per-channel (or scalar) constant c: B' = B + c
// The arithmetic is done in double and rounded once to the weight type.
#include <cmath>

#include "optimizer/passes.h"
#include "optimizer/rewriter.h"

namespace nxrt::optimizer {

namespace {

using graph::kNoValue;

std::optional<std::vector<double>> to_doubles(const Tensor* tensor) {
  if (!tensor || tensor->device().type != DeviceType::kCpu) return std::nullopt;
  std::vector<double> values(tensor->numel());
  if (tensor->dtype() == DataType::kFloat32) {
    for (int64_t i = 0; i < tensor->numel(); ++i) values[i] = tensor->data<float>()[i];
  } else if (tensor->dtype() == DataType::kFloat64) {
    for (int64_t i = 0; i < tensor->numel(); ++i) values[i] = tensor->data<double>()[i];
  } else {
    return std::nullopt;
  }
  return values;
}

std::optional<Tensor> from_doubles(const std::vector<double>& values, DataType dtype, Shape shape) {
  auto tensor = Tensor::allocate(dtype, std::move(shape));
  if (!tensor) return std::nullopt;
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DataType::kFloat32) {
      tensor->data<float>()[i] = static_cast<float>(values[i]);
    } else {
      tensor->data<double>()[i] = values[i];
    }
  }
  return std::move(*tensor);
}

// `c` broadcast against a Conv output [N, M, spatial...] of rank `out_rank` as one value per channel, without
// changing the output shape; nullopt otherwise.
std::optional<std::vector<double>> per_channel(const Tensor* c, int64_t channels, size_t out_rank) {
  auto values = to_doubles(c);
  if (!values) return std::nullopt;
  if (values->size() == 1 && c->rank() <= out_rank) return std::vector<double>(channels, (*values)[0]);
  if (c->rank() > out_rank || static_cast<int64_t>(values->size()) != channels) return std::nullopt;
  const size_t offset = out_rank - c->rank();
  for (size_t i = 0; i < c->rank(); ++i) {
    const int64_t expected = offset + i == 1 ? channels : 1;
    if (c->shape()[i] != expected) return std::nullopt;
  }
  return values;
}

struct ConvParams {
  std::vector<double> weight;
  std::vector<double> bias;
  Shape weight_shape;
  DataType dtype;
  int64_t channels;
  size_t out_rank;
};

std::optional<ConvParams> conv_params(Rewriter& rw, const graph::Node& conv) {
  if (conv.inputs.size() < 2) return std::nullopt;
  const Tensor* w = rw.constant(conv.inputs[1]);
  auto weight = to_doubles(w);
  if (!weight || w->rank() < 3 || w->shape()[0] <= 0) return std::nullopt;
  ConvParams params{std::move(*weight), {}, w->shape(), w->dtype(), w->shape()[0], w->rank()};
  const int b = conv.inputs.size() > 2 ? conv.inputs[2] : kNoValue;
  if (b == kNoValue) {
    params.bias.assign(params.channels, 0.0);
  } else {
    const Tensor* bias_tensor = rw.constant(b);
    auto bias = to_doubles(bias_tensor);
    if (!bias || bias_tensor->dtype() != params.dtype || static_cast<int64_t>(bias->size()) != params.channels) {
      return std::nullopt;
    }
    params.bias = std::move(*bias);
  }
  return params;
}

void scale_weights(ConvParams& params, const std::vector<double>& scale) {
  const size_t per_channel_count = params.weight.size() / params.channels;
  for (int64_t m = 0; m < params.channels; ++m) {
    for (size_t i = 0; i < per_channel_count; ++i) params.weight[m * per_channel_count + i] *= scale[m];
  }
}

// The folded parameters for `conv` followed by `next`, or nullopt when `next` does not fold.
std::optional<ConvParams> fold_next(Rewriter& rw, const graph::Node& conv, const graph::Node& next, int conv_out) {
  auto params = conv_params(rw, conv);
  if (!params || !next.domain.empty()) return std::nullopt;
  if (next.op_type == "BatchNormalization") {
    if (next.inputs.size() < 5 || next.inputs[0] != conv_out) return std::nullopt;
    for (size_t i = 1; i < next.outputs.size(); ++i) {
      if (next.outputs[i] != kNoValue) return std::nullopt;
    }
    auto training = next.attr_int("training_mode", 0);
    auto epsilon = next.attr_float("epsilon", 1e-5f);
    if (!training || *training != 0 || !epsilon) return std::nullopt;
    std::vector<double> stats[4];
    for (int i = 0; i < 4; ++i) {
      const Tensor* t = rw.constant(next.inputs[1 + i]);
      auto values = to_doubles(t);
      if (!values || static_cast<int64_t>(values->size()) != params->channels) return std::nullopt;
      stats[i] = std::move(*values);
    }
    std::vector<double> scale(params->channels);
    for (int64_t m = 0; m < params->channels; ++m) {
      scale[m] = stats[0][m] / std::sqrt(stats[3][m] + static_cast<double>(*epsilon));
      params->bias[m] = (params->bias[m] - stats[2][m]) * scale[m] + stats[1][m];
    }
    scale_weights(*params, scale);
    return params;
  }
  if ((next.op_type != "Mul" && next.op_type != "Add") || next.inputs.size() != 2) return std::nullopt;
  const int other = next.inputs[0] == conv_out ? next.inputs[1] : next.inputs[0];
  if (other == conv_out) return std::nullopt;
  const Tensor* c = rw.constant(other);
  if (!c || c->dtype() != params->dtype) return std::nullopt;
  auto values = per_channel(c, params->channels, params->out_rank);
  if (!values) return std::nullopt;
  for (int64_t m = 0; m < params->channels; ++m) {
    if (next.op_type == "Mul") {
      params->bias[m] *= (*values)[m];
    } else {
      params->bias[m] += (*values)[m];
    }
  }
  if (next.op_type == "Mul") scale_weights(*params, *values);
  return params;
}

}  // namespace

Expected<bool> fold_conv_affine(graph::Graph& graph) {
  Rewriter rw(graph);
  for (int n = 0; n < rw.node_count(); ++n) {
    if (!rw.is_matchable(n)) continue;
    const graph::Node& conv = rw.node(n);
    if (!conv.domain.empty() || conv.op_type != "Conv" || conv.outputs.size() != 1) continue;
    const int conv_out = conv.outputs[0];
    const int next_index = rw.sole_consumer(conv_out);
    if (next_index < 0) continue;
    auto params = fold_next(rw, conv, rw.node(next_index), conv_out);
    if (!params) continue;
    auto weight = from_doubles(params->weight, params->dtype, params->weight_shape);
    auto bias = from_doubles(params->bias, params->dtype, Shape{params->channels});
    if (!weight || !bias) continue;
    const int next_out = rw.node(next_index).outputs[0];
    const std::string stem = rw.node(n).name.empty() ? rw.value(conv_out).name : rw.node(n).name;
    const int w = rw.new_initializer(stem + "_W_folded", std::move(*weight));
    const int b = rw.new_initializer(stem + "_B_folded", std::move(*bias));
    rw.set_input(n, 1, w);
    if (rw.node(n).inputs.size() < 3) rw.node(n).inputs.push_back(kNoValue);
    rw.set_input(n, 2, b);
    rw.remove(next_index);
    // conv_out is private (sole reader `next`), so this either rewires next_out's readers or renames.
    if (!rw.replace_value(next_out, conv_out)) return make_error(StatusCode::kFail, "could not rewire ", stem);
  }
  TRY(rw.finish());
  return rw.changed();
}

}  // namespace nxrt::optimizer
