// SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss.
// Both view the scores/log-probabilities as [N, C, inner] and the labels as [N, inner]. Element (n, i) with
// label l contributes -w[l] * logp[n, l, i] and weight w[l] (w == 1 without weights); a label equal to
// ignore_index contributes 0 and weight 0. reduction "none" returns the [N, d1, ...] losses, "sum" their sum,
// "mean" their sum divided by the total weight (NaN when every target is ignored). SoftmaxCrossEntropyLoss
// first takes LogSoftmax over axis 1 and can return it as a second output. Math runs in double; outputs are
// stored in the input type.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

enum class Reduction { kNone, kSum, kMean };

template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return static_cast<double>(static_cast<float>(v));
  }
}

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);
  } else {
    return T(static_cast<float>(v));
  }
}

constexpr DataTypeMask kFloatMask = type_mask(FloatTypes{});
constexpr DataTypeMask kIndexMask = type_mask(TypeList<int32_t, int64_t>{});

class LossKernel final : public Kernel {
 public:
  LossKernel(const KernelInfo& info, bool softmax, Reduction reduction, std::optional<int64_t> ignore_index)
      : description_(info.node.describe()), softmax_(softmax), reduction_(reduction), ignore_index_(ignore_index),
        want_log_prob_(softmax && info.node.outputs.size() > 1 && info.node.outputs[1] != graph::kNoValue) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": inputs 0 and 1 are required");
    }
    const Tensor& scores = *inputs[0];
    const Tensor& labels = *inputs[1];
    if (((kFloatMask >> static_cast<int>(scores.dtype())) & 1u) == 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported type ",
                        data_type_name(scores.dtype()), " for input 0");
    }
    if (((kIndexMask >> static_cast<int>(labels.dtype())) & 1u) == 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 must be int32 or int64, got ",
                        data_type_name(labels.dtype()));
    }
    const Shape& s = scores.shape();
    Shape expected_labels;
    if (s.size() >= 2) {
      expected_labels.push_back(s[0]);
      expected_labels.insert(expected_labels.end(), s.begin() + 2, s.end());
    }
    if (s.size() < 2 || labels.shape() != expected_labels) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(s),
                        " (N x C x d1 ...) does not match input 1 shape ", shape_to_string(labels.shape()));
    }
    if (inputs.size() > 2 && inputs[2] != nullptr) {
      const Tensor& weights = *inputs[2];
      if (weights.dtype() != scores.dtype() || weights.rank() != 1 || weights.shape()[0] != s[1]) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input 2 (weights) must be a ",
                          data_type_name(scores.dtype()), " tensor of shape [", s[1], "], got ",
                          data_type_name(weights.dtype()), " ", shape_to_string(weights.shape()));
      }
    }
    outputs.assign(1, OutputDesc{scores.dtype(), reduction_ == Reduction::kNone ? expected_labels : Shape{}});
    if (softmax_) outputs.push_back(OutputDesc{scores.dtype(), want_log_prob_ ? s : Shape{0}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& /*pool*/) const override {
    const Tensor& scores = *inputs[0];
    const Tensor& labels = *inputs[1];
    const Tensor* weights = optional_input(inputs, 2);
    const int64_t n = scores.shape()[0];
    const int64_t c = scores.shape()[1];
    const int64_t inner = n * c == 0 ? 0 : scores.numel() / (n * c);
    std::vector<int64_t> label_values(static_cast<size_t>(labels.numel()));
    if (labels.dtype() == DataType::kInt32) {
      std::copy_n(labels.data<int32_t>(), labels.numel(), label_values.begin());
    } else {
      std::copy_n(labels.data<int64_t>(), labels.numel(), label_values.begin());
    }
    for (int64_t label : label_values) {
      if (ignore_index_ && label == *ignore_index_) continue;
      if (label < 0 || label >= c) {
        return make_error(StatusCode::kInvalidArgument, description_, ": label ", label,
                          " in input 1 is out of range [0, ", c, ")");
      }
    }
    visit_dtype<FloatTypes>(scores.dtype(), [&]<class T>() {
      const T* ps = scores.data<T>();
      std::vector<double> log_prob(static_cast<size_t>(scores.numel()));
      for (int64_t i = 0; i < scores.numel(); ++i) log_prob[static_cast<size_t>(i)] = to_double(ps[i]);
      if (softmax_) log_softmax_axis1(log_prob, n, c, inner);
      if (want_log_prob_ && outputs.size() > 1) {
        T* out = outputs[1].data<T>();
        for (size_t i = 0; i < log_prob.size(); ++i) out[i] = from_double<T>(log_prob[i]);
      }
      std::vector<double> losses(label_values.size(), 0.0);
      double total_loss = 0;
      double total_weight = 0;
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t i = 0; i < inner; ++i) {
          const auto at = static_cast<size_t>(b * inner + i);
          const int64_t label = label_values[at];
          if (ignore_index_ && label == *ignore_index_) continue;
          const double w = weights != nullptr ? to_double(weights->data<T>()[label]) : 1.0;
          const double loss = -w * log_prob[static_cast<size_t>((b * c + label) * inner + i)];
          losses[at] = loss;
          total_loss += loss;
          total_weight += w;
        }
      }
      T* out = outputs[0].data<T>();
      switch (reduction_) {
        case Reduction::kNone:
          for (size_t i = 0; i < losses.size(); ++i) out[i] = from_double<T>(losses[i]);
          break;
        case Reduction::kSum:
          out[0] = from_double<T>(total_loss);
          break;
        case Reduction::kMean:
          // The function body's Div(loss_sum, weight_sum) in IEEE arithmetic: 0 / 0 (every target ignored) is
          // NaN, a nonzero sum over weights adding up to 0 is an infinity.
          out[0] = from_double<T>(total_loss / total_weight);
          break;
      }
    });
    return Status::ok();
  }

 private:
  static void log_softmax_axis1(std::vector<double>& v, int64_t n, int64_t c, int64_t inner) {
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t i = 0; i < inner; ++i) {
        double* base = v.data() + b * c * inner + i;
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < c; ++k) m = std::max(m, base[k * inner]);
        double sum = 0;
        for (int64_t k = 0; k < c; ++k) sum += std::exp(base[k * inner] - m);
        const double log_sum = std::log(sum);
        for (int64_t k = 0; k < c; ++k) base[k * inner] = base[k * inner] - m - log_sum;
      }
    }
  }

  std::string description_;
  bool softmax_;
  Reduction reduction_;
  std::optional<int64_t> ignore_index_;
  bool want_log_prob_;
};

template <bool Softmax>
Expected<std::unique_ptr<Kernel>> create_loss(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const std::string reduction_name, node.attr_string("reduction", "mean"));
  Reduction reduction = Reduction::kMean;
  if (reduction_name == "none") {
    reduction = Reduction::kNone;
  } else if (reduction_name == "sum") {
    reduction = Reduction::kSum;
  } else if (reduction_name != "mean") {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute reduction must be none, sum or mean, got '",
                      reduction_name, "'");
  }
  std::optional<int64_t> ignore_index;
  if (node.find_attribute("ignore_index") != nullptr) {
    TRY_ASSIGN(const int64_t value, node.attr_int("ignore_index", 0));
    ignore_index = value;
  }
  return std::unique_ptr<Kernel>(std::make_unique<LossKernel>(info, Softmax, reduction, ignore_index));
}

constexpr DataTypeMask kNoBf16 = type_mask(TypeList<float, double, Float16>{});

const KernelDef kLossKernels[] = {
    {"SoftmaxCrossEntropyLoss", graph::kOnnxDomain, 12, 12, kNoBf16, 0, create_loss<true>},
    {"SoftmaxCrossEntropyLoss", graph::kOnnxDomain, 13, kLatestOpset, kFloatMask, 0, create_loss<true>},
    {"NegativeLogLikelihoodLoss", graph::kOnnxDomain, 12, 21, kNoBf16, 0, create_loss<false>},
    {"NegativeLogLikelihoodLoss", graph::kOnnxDomain, 22, kLatestOpset, kFloatMask, 0, create_loss<false>},
};

}  // namespace

std::span<const KernelDef> loss_kernels() { return kLossKernels; }

}  // namespace nxrt::cpu
