// Adagrad, Adam, Momentum (ai.onnx.preview.training).
// Inputs are R (scalar learning rate), T (scalar int64 update count), then `n` tensors of each state kind in
// blocks: X1..Xn, G1..Gn, then the optimizer state (Adagrad: H; Momentum: V; Adam: V, H). Outputs are the
// updated X1..Xn followed by the updated state blocks. With G' = norm_coefficient * X + G:
//   Adagrad:  r = R / (1 + T * decay_factor); H' = H + G'^2; X' = X - r * G' / (sqrt(H') + epsilon)
//   Momentum: b = T > 0 ? beta : 1; V' = alpha * V + b * G';
//             X' = X - R * V' (standard) or X - R * (G' + alpha * V') (nesterov)
//   Adam:     V' = alpha * V + (1 - alpha) * G'; H' = beta * H + (1 - beta) * G'^2;
//             r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
//             X' = (1 - norm_coefficient_post) * (X - r * V' / (sqrt(H') + epsilon))
// Everything is computed in double (from the stored values and the float attributes) and each output element
// is rounded once to the tensor type (float or double).
#include <cmath>
#include <string>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

inline constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

enum class Optimizer { kAdagrad, kMomentum, kAdam };

struct OptimizerAttributes {
  double epsilon = 0;
  double decay_factor = 0;
  double norm_coefficient = 0;
  double norm_coefficient_post = 0;
  double alpha = 0;
  double beta = 0;
  bool nesterov = false;
};

constexpr DataTypeMask kTensorMask = type_mask(TypeList<float, double>{});

class OptimizerKernel final : public Kernel {
 public:
  OptimizerKernel(std::string description, Optimizer kind, OptimizerAttributes attrs, size_t node_outputs)
      : description_(std::move(description)), kind_(kind), attrs_(attrs), node_outputs_(node_outputs) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    const size_t kinds = kind_ == Optimizer::kAdam ? 4 : 3;
    if (inputs.size() < 2 + kinds || (inputs.size() - 2) % kinds != 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": expected R, T and ", kinds,
                        " tensors per optimized input, got ", inputs.size(), " inputs");
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] == nullptr) return make_error(StatusCode::kInvalidArgument, description_, ": missing input ", i);
    }
    const Tensor& rate = *inputs[0];
    const Tensor& count = *inputs[1];
    if (((kTensorMask >> static_cast<int>(rate.dtype())) & 1u) == 0 || rate.numel() != 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 (R) must be a float or double scalar");
    }
    if (count.dtype() != DataType::kInt64 || count.numel() != 1) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (T) must be an int64 scalar");
    }
    const size_t n = (inputs.size() - 2) / kinds;
    if (node_outputs_ != n * (kinds - 1)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ", n, " optimized inputs need ", n * (kinds - 1),
                        " outputs, the node has ", node_outputs_);
    }
    outputs.clear();
    for (size_t k = 0; k < kinds; ++k) {
      for (size_t i = 0; i < n; ++i) {
        const Tensor& t = *inputs[2 + k * n + i];
        const Tensor& x = *inputs[2 + i];
        if (((kTensorMask >> static_cast<int>(t.dtype())) & 1u) == 0 || t.dtype() != x.dtype() ||
            t.shape() != x.shape()) {
          return make_error(StatusCode::kInvalidArgument, description_, ": input ", 2 + k * n + i, " (",
                            data_type_name(t.dtype()), " ", shape_to_string(t.shape()), ") must match input ", 2 + i,
                            " (", data_type_name(x.dtype()), " ", shape_to_string(x.shape()), ")");
        }
        if (k != 1) outputs.push_back(OutputDesc{t.dtype(), t.shape()});  // gradients have no output
      }
    }
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& /*pool*/) const override {
    const size_t kinds = kind_ == Optimizer::kAdam ? 4 : 3;
    const size_t n = (inputs.size() - 2) / kinds;
    const double rate = inputs[0]->dtype() == DataType::kFloat32 ? inputs[0]->data<float>()[0]
                                                                 : inputs[0]->data<double>()[0];
    const auto count = static_cast<double>(inputs[1]->data<int64_t>()[0]);
    for (size_t i = 0; i < n; ++i) {
      const Tensor& x = *inputs[2 + i];
      const Tensor& g = *inputs[2 + n + i];
      const Tensor& s1 = *inputs[2 + 2 * n + i];
      const Tensor* s2 = kinds == 4 ? inputs[2 + 3 * n + i] : nullptr;
      Tensor& x_out = outputs[i];
      Tensor& s1_out = outputs[n + i];
      Tensor* s2_out = kinds == 4 && outputs.size() > 2 * n + i ? &outputs[2 * n + i] : nullptr;
      visit_dtype<TypeList<float, double>>(x.dtype(), [&]<class T>() {
        update<T>(x.numel(), rate, count, x.data<T>(), g.data<T>(), s1.data<T>(), s2 ? s2->data<T>() : nullptr,
                  x_out.data<T>(), s1_out.data<T>(), s2_out ? s2_out->data<T>() : nullptr);
      });
    }
    return Status::ok();
  }

 private:
  // Every element's update runs in double from the stored values and each result is rounded once to T.
  template <class T>
  void update(int64_t size, double rate, double count, const T* x, const T* g, const T* s1, const T* s2, T* x_out,
              T* s1_out, T* s2_out) const {
    const double norm = attrs_.norm_coefficient;
    const double epsilon = attrs_.epsilon;
    switch (kind_) {
      case Optimizer::kAdagrad: {
        const double r = rate / (1 + count * attrs_.decay_factor);
        for (int64_t j = 0; j < size; ++j) {
          const double xj = x[j];
          const double gr = norm * xj + g[j];
          const double h = s1[j] + gr * gr;
          s1_out[j] = static_cast<T>(h);
          x_out[j] = static_cast<T>(xj - r * gr / (std::sqrt(h) + epsilon));
        }
        break;
      }
      case Optimizer::kMomentum: {
        const double alpha = attrs_.alpha;
        const double beta = count > 0 ? attrs_.beta : 1.0;  // the first update takes the whole gradient
        for (int64_t j = 0; j < size; ++j) {
          const double xj = x[j];
          const double gr = norm * xj + g[j];
          const double v = alpha * s1[j] + beta * gr;
          s1_out[j] = static_cast<T>(v);
          x_out[j] = static_cast<T>(attrs_.nesterov ? xj - rate * (gr + alpha * v) : xj - rate * v);
        }
        break;
      }
      case Optimizer::kAdam: {
        const double alpha = attrs_.alpha;
        const double beta = attrs_.beta;
        // The bias correction applies for T > 0; T = 0 takes R as it is.
        const double r = count > 0 ? rate * std::sqrt(1 - std::pow(beta, count)) / (1 - std::pow(alpha, count)) : rate;
        const double post = 1 - attrs_.norm_coefficient_post;
        for (int64_t j = 0; j < size; ++j) {
          const double xj = x[j];
          const double gr = norm * xj + g[j];
          const double v = alpha * s1[j] + (1 - alpha) * gr;
          const double h = beta * s2[j] + (1 - beta) * (gr * gr);
          s1_out[j] = static_cast<T>(v);
          if (s2_out != nullptr) s2_out[j] = static_cast<T>(h);
          x_out[j] = static_cast<T>(post * (xj - r * (v / (std::sqrt(h) + epsilon))));
        }
        break;
      }
    }
  }

  std::string description_;
  Optimizer kind_;
  OptimizerAttributes attrs_;
  size_t node_outputs_;
};

template <Optimizer Kind>
Expected<std::unique_ptr<Kernel>> create_optimizer(const KernelInfo& info) {
  const graph::Node& node = info.node;
  OptimizerAttributes attrs;
  TRY_ASSIGN(attrs.norm_coefficient, node.attr_float("norm_coefficient", 0.0f));
  if constexpr (Kind == Optimizer::kAdagrad) {
    TRY_ASSIGN(attrs.epsilon, node.attr_float("epsilon", 1e-6f));
    TRY_ASSIGN(attrs.decay_factor, node.attr_float("decay_factor", 0.0f));
  } else if constexpr (Kind == Optimizer::kAdam) {
    TRY_ASSIGN(attrs.epsilon, node.attr_float("epsilon", 1e-6f));
    TRY_ASSIGN(attrs.alpha, node.attr_float("alpha", 0.9f));
    TRY_ASSIGN(attrs.beta, node.attr_float("beta", 0.999f));
    TRY_ASSIGN(attrs.norm_coefficient_post, node.attr_float("norm_coefficient_post", 0.0f));
  } else {
    for (const char* required : {"alpha", "beta", "mode", "norm_coefficient"}) {
      if (node.find_attribute(required) == nullptr) {
        return make_error(StatusCode::kInvalidGraph, node.describe(), ": missing required attribute ", required);
      }
    }
    TRY_ASSIGN(attrs.alpha, node.attr_float("alpha", 0.0f));
    TRY_ASSIGN(attrs.beta, node.attr_float("beta", 0.0f));
    const Expected<std::string> mode = node.attr_string("mode", "standard");
    if (!mode.has_value()) return mode.status();
    if (*mode != "standard" && *mode != "nesterov") {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute mode must be standard or nesterov, got '",
                        *mode, "'");
    }
    attrs.nesterov = *mode == "nesterov";
  }
  return std::unique_ptr<Kernel>(std::make_unique<OptimizerKernel>(node.describe(), Kind, attrs, node.outputs.size()));
}

const KernelDef kTrainingKernels[] = {
    {"Adagrad", kTrainingDomain, 1, kLatestOpset, kTensorMask, 2, create_optimizer<Optimizer::kAdagrad>},
    {"Momentum", kTrainingDomain, 1, kLatestOpset, kTensorMask, 2, create_optimizer<Optimizer::kMomentum>},
    {"Adam", kTrainingDomain, 1, kLatestOpset, kTensorMask, 2, create_optimizer<Optimizer::kAdam>},
};

}  // namespace

std::span<const KernelDef> training_kernels() { return kTrainingKernels; }

}  // namespace nxrt::cpu
