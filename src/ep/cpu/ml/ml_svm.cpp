// ai.onnx.ml SVMRegressor: X [N, F] or [F] float -> Y [N, 1] float (what skl2onnx writes for SVR, NuSVR and
// OneClassSVM). With support vectors (n_supports > 0): y = sum_j coefficients[j] K(x, sv_j) + rho[0]; without:
// y = x . coefficients + rho[0]. one_class maps y to +1 when positive, else -1. Kernels (kernel_params = [gamma,
// coef0, degree]): LINEAR x . v, POLY (gamma x . v + coef0)^degree, RBF exp(-gamma |x - v|^2), SIGMOID
// tanh(gamma x . v + coef0). As onnxruntime's CPU kernel: post_transform is read but not applied, and X must have
// exactly the support vectors' (or coefficients') width.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/ml/ml_common.h"

namespace nxrt::cpu {

namespace {

enum class SvmKernel { kLinear, kPoly, kRbf, kSigmoid };

struct KernelFunction {
  SvmKernel type = SvmKernel::kLinear;
  double gamma = 0, coef0 = 0, degree = 0;

  double operator()(const float* x, const float* v, int64_t n) const {
    if (type == SvmKernel::kRbf) {
      double squares = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(x[i]) - v[i];
        squares += d * d;
      }
      return std::exp(-gamma * squares);
    }
    double dot = 0;
    for (int64_t i = 0; i < n; ++i) dot += static_cast<double>(x[i]) * v[i];
    if (type == SvmKernel::kPoly) return std::pow(gamma * dot + coef0, degree);
    if (type == SvmKernel::kSigmoid) return std::tanh(gamma * dot + coef0);
    return dot;
  }
};

Expected<KernelFunction> kernel_function_of(const graph::Node& node) {
  TRY_ASSIGN(const std::string name, node.attr_string("kernel_type", "LINEAR"));
  TRY_ASSIGN(const std::vector<float> params, node.attr_floats("kernel_params", {}));
  KernelFunction k;
  if (name == "LINEAR") {
    k.type = SvmKernel::kLinear;
  } else if (name == "POLY") {
    k.type = SvmKernel::kPoly;
  } else if (name == "RBF") {
    k.type = SvmKernel::kRbf;
  } else if (name == "SIGMOID") {
    k.type = SvmKernel::kSigmoid;
  } else {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": kernel_type '", name,
                      "' is not LINEAR, POLY, RBF or SIGMOID");
  }
  if (!params.empty()) {
    if (params.size() != 3) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": kernel_params holds ", params.size(),
                        " values, not [gamma, coef0, degree]");
    }
    k.gamma = params[0];
    k.coef0 = params[1];
    k.degree = params[2];
  }
  return k;
}

class SvmRegressorKernel final : public Kernel {
 public:
  SvmRegressorKernel(std::string description, KernelFunction kernel, std::vector<float> vectors,
                     std::vector<float> coefficients, double rho, int64_t features, bool one_class)
      : description_(std::move(description)), kernel_(kernel), vectors_(std::move(vectors)),
        coefficients_(std::move(coefficients)), rho_(rho), features_(features), one_class_(one_class) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr || inputs[0]->dtype() != DataType::kFloat32) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X must be a float tensor");
    }
    TRY_ASSIGN(const ml::Matrix m, ml::matrix_of(inputs[0], description_));
    if (m.columns != features_) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X has ", m.columns,
                        " features; the model has ", features_);
    }
    outputs.assign(1, OutputDesc{DataType::kFloat32, Shape{m.rows, 1}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const ml::Matrix m, ml::matrix_of(inputs[0], description_));
    const float* x = inputs[0]->data<float>();
    float* y = outputs[0].data<float>();
    const int64_t supports = vectors_.empty() ? 0 : static_cast<int64_t>(coefficients_.size());
    pool.parallel_for(m.rows, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* row = x + r * features_;
        double value = rho_;
        if (supports == 0) {
          value += KernelFunction{}(row, coefficients_.data(), features_);
        } else {
          for (int64_t j = 0; j < supports; ++j) {
            value += coefficients_[static_cast<size_t>(j)] * kernel_(row, vectors_.data() + j * features_, features_);
          }
        }
        y[r] = one_class_ ? (value > 0 ? 1.0f : -1.0f) : static_cast<float>(value);
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
  KernelFunction kernel_;
  std::vector<float> vectors_;
  std::vector<float> coefficients_;
  double rho_;
  int64_t features_;
  bool one_class_;
};

Expected<std::unique_ptr<Kernel>> create_svm_regressor(const KernelInfo& info) {
  const graph::Node& node = info.node;
  const std::string what = node.describe();
  TRY_ASSIGN(const int64_t supports, node.attr_int("n_supports", 0));
  TRY_ASSIGN(std::vector<float> vectors, node.attr_floats("support_vectors", {}));
  TRY_ASSIGN(std::vector<float> coefficients, node.attr_floats("coefficients", {}));
  TRY_ASSIGN(const std::vector<float> rho, node.attr_floats("rho", {}));
  TRY_ASSIGN(const int64_t one_class, node.attr_int("one_class", 0));
  TRY_ASSIGN(KernelFunction kernel, kernel_function_of(node));
  TRY(ml::post_transform_of(node).status());
  if (coefficients.empty() || rho.empty() || supports < 0) {
    return make_error(StatusCode::kInvalidGraph, what, ": coefficients and rho are required and n_supports >= 0");
  }
  int64_t features = static_cast<int64_t>(coefficients.size());
  if (supports > 0) {
    if (vectors.size() % static_cast<size_t>(supports) != 0 || coefficients.size() != static_cast<size_t>(supports)) {
      return make_error(StatusCode::kInvalidGraph, what, ": ", supports, " support vectors need ", supports,
                        " coefficients and support_vectors a multiple of ", supports, " long (got ",
                        coefficients.size(), " and ", vectors.size(), ")");
    }
    features = static_cast<int64_t>(vectors.size()) / supports;
  } else {
    vectors.clear();
  }
  return std::unique_ptr<Kernel>(std::make_unique<SvmRegressorKernel>(
      what, kernel, std::move(vectors), std::move(coefficients), rho[0], features, one_class != 0));
}

const KernelDef kSvmKernels[] = {
    {"SVMRegressor", ml::kMlDomain, 1, kLatestOpset, type_mask(TypeList<float>{}), 0, create_svm_regressor},
};

}  // namespace

std::span<const KernelDef> ml_svm_kernels() { return kSvmKernels; }

}  // namespace nxrt::cpu
