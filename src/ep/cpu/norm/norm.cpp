// BatchNormalization, InstanceNormalization, GroupNormalization, and the table for the whole norm family
// (LayerNormalization and RMSNormalization live in norm_layer.cpp; LpNormalization, LRN,
// MeanVarianceNormalization and Dropout in norm_misc.cpp).
// Inputs are viewed as [N, C, inner]. Statistics accumulate in double; the elementwise pass runs in float for
// f16/bf16/f32 and in double for f64. Variances are population variances (divide by the element count).
#include <algorithm>
#include <cmath>
#include <string>

#include "ep/cpu/norm/norm_common.h"

namespace nxrt::cpu::norm {

Expected<SplitBroadcast> SplitBroadcast::make(const Shape& param, const Shape& x, size_t axis,
                                              const std::string& description, const char* input_name) {
  if (param.size() > x.size()) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", input_name, " shape ",
                      shape_to_string(param), " is not broadcastable to input 0 shape ", shape_to_string(x));
  }
  const size_t lead = x.size() - param.size();
  std::vector<int64_t> strides(x.size(), 0);
  int64_t stride = 1;
  for (size_t d = x.size(); d-- > lead;) {
    const int64_t dim = param[d - lead];
    if (dim != x[d] && dim != 1) {
      return make_error(StatusCode::kInvalidArgument, description, ": ", input_name, " shape ",
                        shape_to_string(param), " is not broadcastable to input 0 shape ", shape_to_string(x));
    }
    strides[d] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  SplitBroadcast out;
  out.outer_dims_.assign(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(axis));
  out.outer_strides_.assign(strides.begin(), strides.begin() + static_cast<std::ptrdiff_t>(axis));
  const int64_t inner = shape_numel(std::span<const int64_t>(x.data() + axis, x.size() - axis));
  out.inner_offsets_.assign(static_cast<size_t>(inner), 0);
  std::vector<int64_t> index(x.size() - axis, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < inner; ++i) {
    out.inner_offsets_[static_cast<size_t>(i)] = offset;
    out.inner_contiguous_ = out.inner_contiguous_ && offset == i;
    for (size_t k = index.size(); k-- > 0;) {
      const size_t d = axis + k;
      ++index[k];
      offset += strides[d];
      if (index[k] < x[d]) break;
      offset -= strides[d] * index[k];
      index[k] = 0;
    }
  }
  return out;
}

int64_t SplitBroadcast::outer_offset(int64_t o) const {
  int64_t offset = 0;
  for (size_t d = outer_dims_.size(); d-- > 0;) {
    offset += (o % outer_dims_[d]) * outer_strides_[d];
    o /= outer_dims_[d];
  }
  return offset;
}

namespace {

constexpr int64_t kGrain = 16384;

struct Moments {
  double mean = 0;
  double var = 0;
};

template <class T>
Moments moments_of(const T* x, int64_t n) {
  Moments m;
  if (n == 0) return m;
  using Acc = AccOf<T>;
  m.mean = row_sum<false>(x, n, Acc{0}) / static_cast<double>(n);
  // Deviations from the rounded mean; the correction term removes the rounding's first-order effect.
  const Acc shift = static_cast<Acc>(m.mean);
  const double offset = row_sum<false>(x, n, shift) / static_cast<double>(n);
  m.var = std::max(0.0, row_sum<true>(x, n, shift) / static_cast<double>(n) - offset * offset);
  m.var = variance_with_mean(m.mean, m.var);
  return m;
}

// y = (x - mean) * inv_std * scale + bias over n elements, in the accumulator type of T, in the order of the spec's
// formulas. Folding the factors (x * a + (bias - mean * a) with a = scale * inv_std) loses the digits of x - mean
// where x is close to the mean, turns an infinite scale into NaN for every x (inf - inf in the offset), and rounds
// a product scale * inv_std that falls in the subnormal range to a few digits.
template <class T>
void normalize(const T* x, T* y, int64_t n, double mean, double inv_std, double scale, double bias) {
  using Acc = AccOf<T>;
  const Acc m = static_cast<Acc>(mean);
  const Acc r = static_cast<Acc>(inv_std);
  const Acc s = static_cast<Acc>(scale);
  const Acc b = static_cast<Acc>(bias);
  for (int64_t i = 0; i < n; ++i) y[i] = store<T>((load(x[i]) - m) * r * s + b);
}

Status check_channel_input(const Tensor& x, const std::string& description) {
  if (x.rank() < 2) {
    return make_error(StatusCode::kInvalidArgument, description, ": input 0 must have rank >= 2 (N x C x ...), got ",
                      shape_to_string(x.shape()));
  }
  return Status::ok();
}

Status check_param_count(const Tensor* t, int64_t expected, const std::string& description, size_t index,
                         const char* name) {
  if (t->numel() != expected) {
    return make_error(StatusCode::kInvalidArgument, description, ": input ", index, " (", name, ") has shape ",
                      shape_to_string(t->shape()), ", expected ", expected, " elements");
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------------------------
// BatchNormalization. Before opset 9, spatial == 0 gives one parameter per (channel, position) instead of per
// channel. Training mode (opset >= 14: attribute; earlier: extra outputs requested and not is_test) normalizes
// with the batch statistics and emits running = input * momentum + batch * (1 - momentum); opsets < 14 also emit
// saved_mean / saved_var, the batch mean and variance.
class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(const KernelInfo& info, double epsilon, double momentum, bool training, bool spatial)
      : description_(info.node.describe()), epsilon_(epsilon), momentum_(momentum), training_(training),
        spatial_(spatial), opset_(info.opset()) {
    for (int output : info.node.outputs) present_.push_back(output != graph::kNoValue);
    if (present_.empty()) present_.push_back(true);
  }

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    static const char* kNames[] = {"X", "scale", "B", "mean", "var"};
    for (size_t i = 0; i < 5; ++i) TRY(require_input(inputs, i, description_, kFloatMask, kNames[i]));
    const Tensor& x = *inputs[0];
    TRY(check_channel_input(x, description_));
    const int64_t params = param_count(x);
    for (size_t i = 1; i < 5; ++i) TRY(check_param_count(inputs[i], params, description_, i, kNames[i]));
    outputs.assign(present_.size(), OutputDesc{});
    outputs[0] = OutputDesc{x.dtype(), x.shape()};
    for (size_t o = 1; o < present_.size(); ++o) {
      // Means follow input_mean and variances input_var: in shape ([C], or [C, D1, ...] for spatial 0 before
      // opset 9) and, from opset 14, in type.
      const Tensor& given = *inputs[3 + (o - 1) % 2];
      const DataType type = opset_ >= 14 ? given.dtype() : x.dtype();
      outputs[o] = OutputDesc{type, present_[o] ? given.shape() : Shape{0}};
    }
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const int64_t n = x.shape()[0];
    const int64_t c = x.shape()[1];
    const int64_t inner = x.numel() == 0 ? 0 : x.numel() / (n * c);
    const int64_t params = param_count(x);
    const auto scale = float_values<double>(*inputs[1]);
    const auto bias = float_values<double>(*inputs[2]);
    auto mean = float_values<double>(*inputs[3]);
    auto var = float_values<double>(*inputs[4]);
    std::vector<double> batch_mean = mean;
    std::vector<double> batch_var = var;
    if (training_) batch_statistics(x, params, batch_mean, batch_var, pool);
    std::vector<double> inv_std(static_cast<size_t>(params));
    for (size_t p = 0; p < inv_std.size(); ++p) inv_std[p] = 1.0 / std::sqrt(batch_var[p] + epsilon_);
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      const T* px = x.data<T>();
      T* py = outputs[0].data<T>();
      pool.parallel_for(n * c, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, inner)),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t item = begin; item < end; ++item) {
                            const int64_t ch = item % c;
                            const T* xi = px + item * inner;
                            T* yi = py + item * inner;
                            if (spatial_) {
                              const auto p = static_cast<size_t>(ch);
                              normalize(xi, yi, inner, batch_mean[p], inv_std[p], scale[p], bias[p]);
                            } else {
                              for (int64_t i = 0; i < inner; ++i) {
                                const auto p = static_cast<size_t>(ch * inner + i);
                                normalize(xi + i, yi + i, 1, batch_mean[p], inv_std[p], scale[p], bias[p]);
                              }
                            }
                          }
                        });
    });
    if (outputs.size() > 1) {
      std::vector<double> running_mean = mean;
      std::vector<double> running_var = var;
      if (training_) {
        for (size_t p = 0; p < mean.size(); ++p) {
          running_mean[p] = mean[p] * momentum_ + batch_mean[p] * (1 - momentum_);
          running_var[p] = var[p] * momentum_ + batch_var[p] * (1 - momentum_);
        }
      }
      const std::vector<double>* sources[] = {&running_mean, &running_var, &batch_mean, &batch_var};
      for (size_t o = 1; o < outputs.size() && o < 5; ++o) {
        if (present_[o]) write_float_values(outputs[o], *sources[o - 1]);
      }
    }
    return Status::ok();
  }

 private:
  int64_t param_count(const Tensor& x) const {
    if (spatial_) return x.shape()[1];
    return shape_numel(std::span<const int64_t>(x.shape().data() + 1, x.rank() - 1));
  }

  void batch_statistics(const Tensor& x, int64_t params, std::vector<double>& mean, std::vector<double>& var,
                        ThreadPool& pool) const {
    const int64_t n = x.shape()[0];
    const int64_t per_sample = x.numel() == 0 ? 0 : x.numel() / n;
    const int64_t run = per_sample / std::max<int64_t>(1, params);  // contiguous elements per parameter
    const double count = static_cast<double>(n * run);
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      const T* px = x.data<T>();
      pool.parallel_for(params, 1, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          double sum = 0;
          for (int64_t s = 0; s < n; ++s) {
            const T* base = px + s * per_sample + p * run;
            for (int64_t i = 0; i < run; ++i) sum += static_cast<double>(load(base[i]));
          }
          const double m = count > 0 ? sum / count : 0;
          double sq = 0;
          for (int64_t s = 0; s < n; ++s) {
            const T* base = px + s * per_sample + p * run;
            for (int64_t i = 0; i < run; ++i) {
              const double d = static_cast<double>(load(base[i])) - m;
              sq += d * d;
            }
          }
          mean[static_cast<size_t>(p)] = m;
          var[static_cast<size_t>(p)] = count > 0 ? sq / count : 0;
        }
      });
    });
  }

  std::string description_;
  double epsilon_;
  double momentum_;
  bool training_;
  bool spatial_;
  int opset_;
  std::vector<bool> present_;
};

// ---------------------------------------------------------------------------------------------------------------
// InstanceNormalization (groups == channels, per-channel scale/bias) and GroupNormalization. Opset 18 group
// norm takes scale/bias per group, opset 21 per channel.
class GroupNormKernel final : public Kernel {
 public:
  GroupNormKernel(std::string description, double epsilon, int64_t groups, bool per_channel_params)
      : description_(std::move(description)), epsilon_(epsilon), groups_(groups),
        per_channel_params_(per_channel_params) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_input(inputs, 0, description_, kFloatMask, "X"));
    TRY(require_input(inputs, 1, description_, kFloatMask, "scale"));
    TRY(require_input(inputs, 2, description_, kFloatMask, "bias"));
    const Tensor& x = *inputs[0];
    TRY(check_channel_input(x, description_));
    const int64_t c = x.shape()[1];
    const int64_t groups = groups_ > 0 ? groups_ : std::max<int64_t>(c, 1);
    if (c % groups != 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": channel count ", c,
                        " of input 0 is not divisible by num_groups ", groups);
    }
    const int64_t params = per_channel_params_ ? c : groups;
    TRY(check_param_count(inputs[1], params, description_, 1, "scale"));
    TRY(check_param_count(inputs[2], params, description_, 2, "bias"));
    outputs.assign(1, OutputDesc{x.dtype(), x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) return Status::ok();
    const int64_t n = x.shape()[0];
    const int64_t c = x.shape()[1];
    const int64_t inner = x.numel() / (n * c);
    const int64_t groups = groups_ > 0 ? groups_ : c;
    const int64_t channels_per_group = c / groups;
    const int64_t group_size = channels_per_group * inner;
    const auto scale = float_values<double>(*inputs[1]);
    const auto bias = float_values<double>(*inputs[2]);
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      const T* px = x.data<T>();
      T* py = outputs[0].data<T>();
      pool.parallel_for(n * groups, std::max<int64_t>(1, kGrain / group_size), [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
          const int64_t g = item % groups;
          const T* xg = px + item * group_size;
          T* yg = py + item * group_size;
          const Moments m = moments_of(xg, group_size);
          const double inv_std = 1.0 / std::sqrt(m.var + epsilon_);
          for (int64_t k = 0; k < channels_per_group; ++k) {
            const auto p = static_cast<size_t>(per_channel_params_ ? g * channels_per_group + k : g);
            normalize(xg + k * inner, yg + k * inner, inner, m.mean, inv_std, scale[p], bias[p]);
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  double epsilon_;
  int64_t groups_;  // 0: one group per channel (InstanceNormalization)
  bool per_channel_params_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_batch_norm(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const float epsilon, node.attr_float("epsilon", 1e-5f));
  TRY_ASSIGN(const float momentum, node.attr_float("momentum", 0.9f));
  bool training = false;
  bool spatial = true;
  if (info.opset() >= 14) {
    TRY_ASSIGN(const int64_t mode, node.attr_int("training_mode", 0));
    training = mode != 0;
  } else {
    const bool extra_outputs = std::any_of(node.outputs.begin() + std::min<std::ptrdiff_t>(1, std::ssize(node.outputs)),
                                           node.outputs.end(), [](int v) { return v != graph::kNoValue; });
    int64_t is_test = 0;
    if (info.opset() < 7) {
      TRY_ASSIGN(is_test, node.attr_int("is_test", 0));
    }
    training = extra_outputs && is_test == 0;
    if (info.opset() < 9) {
      TRY_ASSIGN(const int64_t spatial_attr, node.attr_int("spatial", 1));
      spatial = spatial_attr != 0;
    }
  }
  if (!(epsilon >= 0)) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute epsilon must be >= 0, got ", epsilon);
  }
  return std::unique_ptr<Kernel>(std::make_unique<BatchNormKernel>(info, epsilon, momentum, training, spatial));
}

Expected<std::unique_ptr<Kernel>> create_instance_norm(const KernelInfo& info) {
  TRY_ASSIGN(const float epsilon, info.node.attr_float("epsilon", 1e-5f));
  return std::unique_ptr<Kernel>(std::make_unique<GroupNormKernel>(info.node.describe(), epsilon, 0, true));
}

Expected<std::unique_ptr<Kernel>> create_group_norm(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const float epsilon, node.attr_float("epsilon", 1e-5f));
  TRY_ASSIGN(const int64_t groups, node.attr_int("num_groups", 0));
  if (groups <= 0) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute num_groups must be positive, got ",
                      groups);
  }
  if (info.opset() >= 21) {
    // Statistics always accumulate in double, at least as precise as any stash type.
    TRY_ASSIGN(const int64_t stash, node.attr_int("stash_type", 1));
    const auto stash_type = data_type_from_int(stash);
    if (!stash_type || !type_list_contains(FloatTypes{}, *stash_type)) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute stash_type ", stash,
                        " is not a floating-point type");
    }
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<GroupNormKernel>(node.describe(), epsilon, groups, info.opset() >= 21));
}

}  // namespace nxrt::cpu::norm

namespace nxrt::cpu {

namespace {

using norm::kFloatMask;
constexpr DataTypeMask kNoBf16 = type_mask(TypeList<float, double, Float16>{});

const KernelDef kNormKernels[] = {
    {"BatchNormalization", graph::kOnnxDomain, 1, 13, kNoBf16, 0, norm::create_batch_norm},
    {"BatchNormalization", graph::kOnnxDomain, 14, kLatestOpset, kFloatMask, 0, norm::create_batch_norm},
    {"InstanceNormalization", graph::kOnnxDomain, 1, 21, kNoBf16, 0, norm::create_instance_norm},
    {"InstanceNormalization", graph::kOnnxDomain, 22, kLatestOpset, kFloatMask, 0, norm::create_instance_norm},
    {"GroupNormalization", graph::kOnnxDomain, 18, kLatestOpset, kFloatMask, 0, norm::create_group_norm},
    {"LayerNormalization", graph::kOnnxDomain, 17, kLatestOpset, kFloatMask, 0, norm::create_layer_norm},
    {"RMSNormalization", graph::kOnnxDomain, 23, kLatestOpset, kFloatMask, 0, norm::create_rms_norm},
    {"SimplifiedLayerNormalization", graph::kOnnxDomain, 1, kLatestOpset, kFloatMask, 0,
     norm::create_simplified_layer_norm},
    {"LpNormalization", graph::kOnnxDomain, 1, 21, kNoBf16, 0, norm::create_lp_norm},
    {"LpNormalization", graph::kOnnxDomain, 22, kLatestOpset, kFloatMask, 0, norm::create_lp_norm},
    {"LRN", graph::kOnnxDomain, 1, 12, kNoBf16, 0, norm::create_lrn},
    {"LRN", graph::kOnnxDomain, 13, kLatestOpset, kFloatMask, 0, norm::create_lrn},
    {"MeanVarianceNormalization", graph::kOnnxDomain, 9, 12, kNoBf16, 0, norm::create_mvn},
    {"MeanVarianceNormalization", graph::kOnnxDomain, 13, kLatestOpset, kFloatMask, 0, norm::create_mvn},
    {"Dropout", graph::kOnnxDomain, 1, 12, kNoBf16, 0, norm::create_dropout},
    {"Dropout", graph::kOnnxDomain, 13, kLatestOpset, kFloatMask, 0, norm::create_dropout},
};

}  // namespace

std::span<const KernelDef> norm_kernels() { return kNormKernels; }

}  // namespace nxrt::cpu
