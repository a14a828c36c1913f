// LayerNormalization (opset 17), RMSNormalization (opset 23) and ONNX Runtime's SimplifiedLayerNormalization
// (registered by it in the default domain, version 1: RMSNormalization with an optional InvStdDev output 1, the
// form onnxruntime_genai's model builder writes). X splits at `axis` into outer rows and
// normalized columns; Scale (and B) broadcast unidirectionally to X. Row statistics accumulate in double; the
// elementwise pass runs in float (double for f64 inputs). f32 inputs with Scale (and B) contiguous along the row run
// on the vector-math row functions (vector_row_moments or vector_row_mean_square, vector_normalize_row). LayerNormalization's
// optional Mean and InvStdDev outputs have X's outer dims followed by ones and the stash_type element type.
// Y takes X's element type, except in the RMS forms, where the schemas (RMSNormalization, and ONNX Runtime's
// SimplifiedLayerNormalization) give it the scale's type V.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ep/cpu/norm/norm_common.h"
#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu::norm {

namespace {

constexpr int64_t kGrain = 16384;

// True when `param`, less leading ones, is exactly X's normalized dims (less leading ones): then it is one
// contiguous row of parameters shared by every row of X, and needs no SplitBroadcast.
bool spans_row_exactly(const Shape& param, const Shape& x, size_t axis) {
  size_t first = 0;
  while (first < param.size() && param[first] == 1) ++first;
  const size_t count = param.size() - first;
  if (count > x.size() - axis) return false;
  for (size_t d = axis; d < x.size() - count; ++d) {
    if (x[d] != 1) return false;
  }
  return std::equal(param.begin() + static_cast<std::ptrdiff_t>(first), param.end(),
                    x.end() - static_cast<std::ptrdiff_t>(count));
}

// The output slots of the row statistics; -1 where the op has none.
struct StatisticSlots {
  int mean = -1;
  int inv_std = -1;
};

class RowNormKernel final : public Kernel {
 public:
  RowNormKernel(const KernelInfo& info, bool rms, int64_t axis, double epsilon, DataType stash_type,
                StatisticSlots slots)
      : description_(info.node.describe()), rms_(rms), axis_(axis), epsilon_(epsilon), stash_type_(stash_type),
        slots_(slots) {
    for (int output : info.node.outputs) present_.push_back(output != graph::kNoValue);
    if (present_.empty()) present_.push_back(true);
  }

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_input(inputs, 0, description_, kFloatMask, "X"));
    TRY(require_input(inputs, 1, description_, kFloatMask, "Scale"));
    if (!rms_ && inputs.size() > 2 && inputs[2] != nullptr) {
      TRY(require_input(inputs, 2, description_, kFloatMask, "B"));
    }
    const Tensor& x = *inputs[0];
    TRY_ASSIGN(const int64_t axis, normalized_axis(axis_, static_cast<int64_t>(x.rank()), description_, "axis"));
    for (size_t i = 1; i < (rms_ ? 2u : inputs.size()); ++i) {
      if (inputs[i] == nullptr || spans_row_exactly(inputs[i]->shape(), x.shape(), static_cast<size_t>(axis))) continue;
      TRY(SplitBroadcast::make(inputs[i]->shape(), x.shape(), static_cast<size_t>(axis), description_,
                               i == 1 ? "Scale" : "B")
              .status());
    }
    outputs.assign(present_.size(), OutputDesc{});
    // RMSNormalization's Y has the scale's type (V); LayerNormalization's has X's (Scale shares it).
    outputs[0] = OutputDesc{rms_ ? inputs[1]->dtype() : x.dtype(), x.shape()};
    Shape stat_shape = x.shape();
    for (size_t d = static_cast<size_t>(axis); d < stat_shape.size(); ++d) stat_shape[d] = 1;
    for (size_t o = 1; o < present_.size(); ++o) {
      outputs[o] = OutputDesc{stash_type_, present_[o] ? stat_shape : Shape{0}};
    }
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) {
      // Rows of no columns (the outer dims need not be empty): their mean is undefined, NaN as an empty float
      // ReduceMean gives it (docs/numerics.md), and so is 1 / sqrt(NaN + epsilon).
      for (const int slot : {slots_.mean, slots_.inv_std}) {
        if (!wants(slot)) continue;
        Tensor& statistic = outputs[static_cast<size_t>(slot)];
        write_float_values(statistic, std::vector<double>(static_cast<size_t>(statistic.numel()),
                                                          std::numeric_limits<double>::quiet_NaN()));
      }
      return Status::ok();
    }
    TRY_ASSIGN(const int64_t axis_signed, normalized_axis(axis_, static_cast<int64_t>(x.rank()), description_, "axis"));
    const auto axis = static_cast<size_t>(axis_signed);
    const int64_t outer = shape_numel(std::span<const int64_t>(x.shape().data(), axis));
    const int64_t inner = x.numel() / outer;
    const bool has_bias = !rms_ && inputs.size() > 2 && inputs[2] != nullptr;
    const bool want_mean = wants(slots_.mean);
    const bool want_inv_std = wants(slots_.inv_std);
    std::vector<double> means(want_mean ? static_cast<size_t>(outer) : 0);
    std::vector<double> inv_stds(want_inv_std ? static_cast<size_t>(outer) : 0);
    const auto plain_f32_param = [&](const Tensor& param) {
      return param.dtype() == DataType::kFloat32 && spans_row_exactly(param.shape(), x.shape(), axis);
    };
    const bool plain_f32 = x.dtype() == DataType::kFloat32 && plain_f32_param(*inputs[1]) &&
                           (!has_bias || plain_f32_param(*inputs[2]));
    if (plain_f32) {
      const float* px = x.data<float>();
      float* py = outputs[0].data<float>();
      pool.parallel_for(outer, std::max<int64_t>(1, kGrain / inner), [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          double mean = 0;
          double var = 0;
          if (rms_) {
            var = vector_row_mean_square(px + o * inner, inner);
          } else {
            vector_row_moments(px + o * inner, inner, &mean, &var);
            var = variance_with_mean(mean, var);
          }
          const double inv_std = 1.0 / std::sqrt(var + epsilon_);
          if (!means.empty()) means[static_cast<size_t>(o)] = mean;
          if (!inv_stds.empty()) inv_stds[static_cast<size_t>(o)] = inv_std;
          vector_normalize_row(px + o * inner, static_cast<float>(mean), static_cast<float>(inv_std),
                               inputs[1]->data<float>(), has_bias ? inputs[2]->data<float>() : nullptr, py + o * inner,
                               inner);
        }
      });
    } else {
      TRY_ASSIGN(const SplitBroadcast scale_index,
                 SplitBroadcast::make(inputs[1]->shape(), x.shape(), axis, description_, "Scale"));
      SplitBroadcast bias_index;
      if (has_bias) {
        TRY_ASSIGN(bias_index, SplitBroadcast::make(inputs[2]->shape(), x.shape(), axis, description_, "B"));
      }
      // Y has X's type, or the scale's for RMSNormalization; the element-wise pass runs in double when either is
      // double, else in float.
      visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
        visit_dtype<FloatTypes>(outputs[0].dtype(), [&]<class Y>() {
          using Acc = std::conditional_t<std::is_same_v<T, double> || std::is_same_v<Y, double>, double, float>;
          using RowAcc = AccOf<T>;
          const auto scale = float_values<Acc>(*inputs[1]);
          const auto bias = has_bias ? float_values<Acc>(*inputs[2]) : std::vector<Acc>();
          const T* px = x.data<T>();
          Y* py = outputs[0].data<Y>();
          const int64_t* scale_inner = scale_index.inner_offsets().data();
          const int64_t* bias_inner = has_bias ? bias_index.inner_offsets().data() : nullptr;
          pool.parallel_for(outer, std::max<int64_t>(1, kGrain / inner), [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
              const T* xr = px + o * inner;
              Y* yr = py + o * inner;
              double mean = 0;
              double var = 0;
              if (rms_) {
                var = row_sum<true>(xr, inner, RowAcc{0}) / static_cast<double>(inner);
              } else {
                mean = row_sum<false>(xr, inner, RowAcc{0}) / static_cast<double>(inner);
                // Deviations from the rounded mean, corrected by the mean of those deviations.
                const RowAcc shift = static_cast<RowAcc>(mean);
                const double offset = row_sum<false>(xr, inner, shift) / static_cast<double>(inner);
                var = variance_with_mean(
                    mean, std::max(0.0, row_sum<true>(xr, inner, shift) / static_cast<double>(inner) - offset * offset));
              }
              const double inv_std = 1.0 / std::sqrt(var + epsilon_);
              if (!means.empty()) means[static_cast<size_t>(o)] = mean;
              if (!inv_stds.empty()) inv_stds[static_cast<size_t>(o)] = inv_std;
              const Acc m = static_cast<Acc>(mean);
              const Acc r = static_cast<Acc>(inv_std);
              const auto xv = [&](int64_t i) { return static_cast<Acc>(load(xr[i])); };
              const Acc* so = scale.data() + scale_index.outer_offset(o);
              if (has_bias && scale_index.inner_contiguous() && bias_index.inner_contiguous()) {
                const Acc* bo = bias.data() + bias_index.outer_offset(o);
                for (int64_t i = 0; i < inner; ++i) yr[i] = store<Y>((xv(i) - m) * r * so[i] + bo[i]);
              } else if (!has_bias && scale_index.inner_contiguous()) {
                for (int64_t i = 0; i < inner; ++i) yr[i] = store<Y>((xv(i) - m) * r * so[i]);
              } else if (has_bias) {
                const Acc* bo = bias.data() + bias_index.outer_offset(o);
                for (int64_t i = 0; i < inner; ++i) {
                  yr[i] = store<Y>((xv(i) - m) * r * so[scale_inner[i]] + bo[bias_inner[i]]);
                }
              } else {
                for (int64_t i = 0; i < inner; ++i) yr[i] = store<Y>((xv(i) - m) * r * so[scale_inner[i]]);
              }
            }
          });
        });
      });
    }
    if (want_mean) write_float_values(outputs[static_cast<size_t>(slots_.mean)], means);
    if (want_inv_std) write_float_values(outputs[static_cast<size_t>(slots_.inv_std)], inv_stds);
    return Status::ok();
  }

 private:
  bool wants(int slot) const { return slot > 0 && static_cast<size_t>(slot) < present_.size() && present_[slot]; }

  std::string description_;
  bool rms_;
  int64_t axis_;
  double epsilon_;
  DataType stash_type_;
  StatisticSlots slots_;
  std::vector<bool> present_;
};

Expected<std::unique_ptr<Kernel>> create_row_norm(const KernelInfo& info, bool rms, StatisticSlots slots) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const int64_t axis, node.attr_int("axis", -1));
  TRY_ASSIGN(const float epsilon, node.attr_float("epsilon", 1e-5f));
  TRY_ASSIGN(const int64_t stash, node.attr_int("stash_type", 1));
  const auto stash_type = data_type_from_int(stash);
  if (!stash_type || !type_list_contains(FloatTypes{}, *stash_type)) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute stash_type ", stash,
                      " is not a floating-point type");
  }
  if (!(epsilon >= 0)) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute epsilon must be >= 0, got ", epsilon);
  }
  return std::unique_ptr<Kernel>(std::make_unique<RowNormKernel>(info, rms, axis, epsilon, *stash_type, slots));
}

}  // namespace

Expected<std::unique_ptr<Kernel>> create_layer_norm(const KernelInfo& info) {
  return create_row_norm(info, false, {.mean = 1, .inv_std = 2});
}

Expected<std::unique_ptr<Kernel>> create_rms_norm(const KernelInfo& info) { return create_row_norm(info, true, {}); }

Expected<std::unique_ptr<Kernel>> create_simplified_layer_norm(const KernelInfo& info) {
  return create_row_norm(info, true, {.inv_std = 1});
}

}  // namespace nxrt::cpu::norm
