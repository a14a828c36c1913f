// ai.onnx.ml SVMRegressor: X [N, F] or [F] (float, double, int64, int32; converted to float) -> Y [N, 1] float
// (what skl2onnx writes for SVR, NuSVR and OneClassSVM). With support vectors (n_supports > 0): y = sum_j
// coefficients[j] K(x, sv_j) + rho[0]; without: y = x . coefficients + rho[0]. one_class maps y to +1 when
// positive, else -1. Kernels (kernel_params = [gamma, coef0, degree]): LINEAR x . v, POLY (gamma x . v +
// coef0)^degree, RBF exp(-gamma |x - v|^2), SIGMOID tanh(gamma x . v + coef0), evaluated for blocks of rows (the dot
// products as one GEMM in float; RBF's distances from the differences, in double), summed in double.
// post_transform applies to each output value, as the spec says ("the transform to apply to the score";
// onnxruntime's CPU kernel reads it but applies none). As onnxruntime, X must have exactly the support vectors' (or
// coefficients') width.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/microkernels/vector_math.h"
#include "ep/cpu/ml/ml_common.h"

namespace nxrt::cpu {

namespace {

enum class SvmKernel { kLinear, kPoly, kRbf, kSigmoid };

struct KernelFunction {
  SvmKernel type = SvmKernel::kLinear;
  double gamma = 0, coef0 = 0, degree = 0;
};

// x . v over n floats, summed in double (the linear forms' scores).
double dot(const float* x, const float* v, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * v[i];
  return sum;
}

// The `count` vectors of `features` floats (row-major) stored feature-major: vector j's feature f at [f * count + j].
std::vector<float> feature_major(const std::vector<float>& vectors, int64_t count, int64_t features) {
  std::vector<float> out(vectors.size());
  for (int64_t j = 0; j < count; ++j) {
    for (int64_t f = 0; f < features; ++f) out[static_cast<size_t>(f * count + j)] = vectors[j * features + f];
  }
  return out;
}

// out[i * count + j] = K(x_i, v_j) for `rows` rows of x, on the session's threads. LINEAR, POLY and SIGMOID: the
// dot products by one GEMM, then the kernel per element. RBF: |x - v|^2 summed in double from the differences
// (the GEMM form |x|^2 + |v|^2 - 2 x . v cancels in float32 for nearby vectors, overflows for large ones and
// turns NaN and infinities into 0 distances).
// `by_feature`: the vectors feature-major (feature_major), which RBF reads: one row's distances to all of them run
// side by side in vector lanes.
void kernel_matrix(const KernelFunction& k, const float* x, int64_t rows, const std::vector<float>& vectors,
                   const std::vector<float>& by_feature, int64_t count, int64_t features, float* out,
                   ThreadPool& pool) {
  if (k.type == SvmKernel::kRbf) {
    pool.parallel_for(rows, 8, [&](int64_t begin, int64_t end) {
      std::vector<double> squares(static_cast<size_t>(count));
      for (int64_t i = begin; i < end; ++i) {
        vector_squared_distances(x + i * features, by_feature.data(), features, count, count, squares.data());
        float* kernel_row = out + i * count;
        for (int64_t j = 0; j < count; ++j) kernel_row[j] = static_cast<float>(std::exp(-k.gamma * squares[j]));
      }
    });
    return;
  }
  if (features == 0) {
    std::fill(out, out + rows * count, 0.0f);
  } else {
    gemm_f32(GemmArgs{false, true, rows, count, features, features, features, count}, 1.0f, x, vectors.data(), 0.0f,
             out, pool);
  }
  pool.parallel_for(rows, 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float* row = out + i * count;
      for (int64_t j = 0; j < count; ++j) {
        const double dot = row[j];
        switch (k.type) {
          case SvmKernel::kLinear: break;
          case SvmKernel::kPoly: row[j] = static_cast<float>(std::pow(k.gamma * dot + k.coef0, k.degree)); break;
          case SvmKernel::kSigmoid: row[j] = static_cast<float>(std::tanh(k.gamma * dot + k.coef0)); break;
          case SvmKernel::kRbf: break;  // computed above
        }
      }
    }
  });
}

// X's elements as float (the SVMs compute in float, as onnxruntime): the tensor's own data for float, else a
// conversion into `converted`.
const float* as_float_rows(const Tensor& x, std::vector<float>& converted) {
  const float* rows = nullptr;
  visit_dtype<ml::NumericMlTypes>(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, float>) {
      rows = x.data<float>();
    } else {
      converted.assign(x.data<T>(), x.data<T>() + x.numel());
      rows = converted.data();
    }
  });
  return rows;
}

// Rows per kernel-matrix block: bounds the block's floats to rows x support vectors.
constexpr int64_t kKernelBlockRows = 256;

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
                     std::vector<float> coefficients, double rho, int64_t features, bool one_class,
                     ml::PostTransform post)
      : description_(std::move(description)), kernel_(kernel), vectors_(std::move(vectors)),
        coefficients_(std::move(coefficients)), rho_(rho), features_(features), one_class_(one_class), post_(post) {
    if (kernel_.type == SvmKernel::kRbf && !vectors_.empty()) {
      by_feature_ = feature_major(vectors_, static_cast<int64_t>(coefficients_.size()), features_);
    }
  }

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const ml::Matrix m, ml::matrix_of(inputs.empty() ? nullptr : inputs[0], description_));
    if (m.columns != features_) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X has ", m.columns,
                        " features; the model has ", features_);
    }
    outputs.assign(1, OutputDesc{DataType::kFloat32, Shape{m.rows, 1}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const ml::Matrix m, ml::matrix_of(inputs[0], description_));
    std::vector<float> converted;
    const float* x = as_float_rows(*inputs[0], converted);
    float* y = outputs[0].data<float>();
    const int64_t supports = vectors_.empty() ? 0 : static_cast<int64_t>(coefficients_.size());
    if (supports == 0) {
      pool.parallel_for(m.rows, 64, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const double value = rho_ + dot(x + r * features_, coefficients_.data(), features_);
          y[r] = finish(value);
        }
      });
      return Status::ok();
    }
    std::vector<float> block(static_cast<size_t>(std::min(m.rows, kKernelBlockRows) * supports));
    for (int64_t r0 = 0; r0 < m.rows; r0 += kKernelBlockRows) {
      const int64_t count = std::min(kKernelBlockRows, m.rows - r0);
      kernel_matrix(kernel_, x + r0 * features_, count, vectors_, by_feature_, supports, features_, block.data(),
                    pool);
      for (int64_t i = 0; i < count; ++i) {
        double value = rho_;
        for (int64_t j = 0; j < supports; ++j) {
          value += double{coefficients_[static_cast<size_t>(j)]} * block[static_cast<size_t>(i * supports + j)];
        }
        y[r0 + i] = finish(value);
      }
    }
    return Status::ok();
  }

 private:
  // The output value of a row's decision value: +-1 for one_class, through the post-transform.
  float finish(double value) const {
    double y = one_class_ ? (value > 0 ? 1.0 : -1.0) : value;
    ml::apply_post_transform(post_, &y, 1);
    return static_cast<float>(y);
  }

  std::string description_;
  KernelFunction kernel_;
  std::vector<float> vectors_;
  std::vector<float> by_feature_;  // RBF: vectors_ feature-major
  std::vector<float> coefficients_;
  double rho_;
  int64_t features_;
  bool one_class_;
  ml::PostTransform post_;
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
  TRY_ASSIGN(const ml::PostTransform post, ml::post_transform_of(node));
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
      what, kernel, std::move(vectors), std::move(coefficients), rho[0], features, one_class != 0, post));
}

// libsvm's pairwise coupling (Wu, Lin and Weng 2004, method 2) as onnxruntime computes it in float: class
// probabilities p from the pairwise estimates r[i * k + j] (i != j), at most 100 iterations, stopping when every
// (Q p)_i is within 0.005 / k of p' Q p.
void couple_pairwise(int64_t k, const std::vector<float>& r, float* p) {
  std::vector<float> q(static_cast<size_t>(k * k), 0.0f), qp(static_cast<size_t>(k), 0.0f);
  const auto at = [k](int64_t i, int64_t j) { return static_cast<size_t>(i * k + j); };
  for (int64_t i = 0; i < k; ++i) {
    p[i] = 1.0f / static_cast<float>(k);
    for (int64_t j = 0; j < i; ++j) {
      q[at(i, i)] += r[at(j, i)] * r[at(j, i)];
      q[at(i, j)] = q[at(j, i)];
    }
    for (int64_t j = i + 1; j < k; ++j) {
      q[at(i, i)] += r[at(j, i)] * r[at(j, i)];
      q[at(i, j)] = -r[at(j, i)] * r[at(i, j)];
    }
  }
  const float eps = 0.005f / static_cast<float>(k);
  for (int iteration = 0; iteration < 100; ++iteration) {
    float pqp = 0.0f;
    for (int64_t i = 0; i < k; ++i) {
      qp[static_cast<size_t>(i)] = 0.0f;
      for (int64_t j = 0; j < k; ++j) qp[static_cast<size_t>(i)] += q[at(i, j)] * p[j];
      pqp += p[i] * qp[static_cast<size_t>(i)];
    }
    float max_error = 0.0f;
    for (int64_t i = 0; i < k; ++i) max_error = std::max(max_error, std::fabs(qp[static_cast<size_t>(i)] - pqp));
    if (max_error < eps) break;
    for (int64_t i = 0; i < k; ++i) {
      const float diff = (-qp[static_cast<size_t>(i)] + pqp) / q[at(i, i)];
      p[i] += diff;
      pqp = (pqp + diff * (diff * q[at(i, i)] + 2 * qp[static_cast<size_t>(i)])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        qp[static_cast<size_t>(j)] = (qp[static_cast<size_t>(j)] + diff * q[at(i, j)]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

float logistic(float v) {
  const float e = 1.0f / (1.0f + std::exp(-std::fabs(v)));
  return v < 0 ? 1.0f - e : e;
}

// SVMClassifier: X [N, F] or [F] (float, double, int64, int32; computed in float) -> Y [N] labels, Z [N, E].
// With support vectors (vectors_per_class): one-vs-one decision values d_ij = sum over the support vectors of
// classes i and j of their coefficients times K(x, sv) + rho[ij], a vote for i when d_ij > 0 else for j; Z holds the
// decision values (E = k (k - 1) / 2; with two classes [-d, d], [logistic(-d), logistic(d)] under LOGISTIC,
// [1 - d, d] under SOFTMAX / SOFTMAX_ZERO, as onnxruntime 1.32 writes them) or, with
// prob_a / prob_b, the pairwise-coupled probabilities (E = k). The label is the class of most votes (first on
// ties). Without support vectors (the linear form): Z[c] = x . coefficients[c] + rho[0] and the label the first
// class of highest score. Two classes follow onnxruntime's rule for the label (class 1 when the score reaches 0.5
// with positive coefficients, or is positive with mixed ones), and every Z goes through the post-transform as in
// its kernel.
class SvmClassifierKernel final : public Kernel {
 public:
  struct Model {
    KernelFunction kernel;
    std::vector<float> vectors, coefficients, rho, prob_a, prob_b;
    std::vector<float> by_feature;  // RBF: vectors feature-major
    std::vector<int64_t> per_class, first_vector;
    std::vector<int64_t> int_labels;
    std::vector<std::string> string_labels;
    int64_t classes = 0, supports = 0, features = 0;
    ml::PostTransform post = ml::PostTransform::kNone;
    bool all_positive = true;
  };

  SvmClassifierKernel(std::string description, Model model)
      : description_(std::move(description)), m_(std::move(model)) {}

  int64_t score_columns() const {
    if (m_.supports > 0 && m_.prob_a.empty()) return m_.classes > 2 ? m_.classes * (m_.classes - 1) / 2 : 2;
    return m_.classes;
  }

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const ml::Matrix mx, ml::matrix_of(inputs.empty() ? nullptr : inputs[0], description_));
    if (mx.columns != m_.features) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X has ", mx.columns,
                        " features; the model has ", m_.features);
    }
    const DataType label_type = m_.string_labels.empty() ? DataType::kInt64 : DataType::kString;
    outputs.assign({OutputDesc{label_type, Shape{mx.rows}}, OutputDesc{DataType::kFloat32, Shape{mx.rows, score_columns()}}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const ml::Matrix mx, ml::matrix_of(inputs[0], description_));
    std::vector<float> converted;
    const float* x = as_float_rows(*inputs[0], converted);
    const int64_t columns = score_columns();
    std::vector<int64_t> labels(static_cast<size_t>(mx.rows));
    float* z = outputs[1].data<float>();
    if (m_.supports == 0) {
      pool.parallel_for(mx.rows, 16, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          labels[static_cast<size_t>(r)] = classify_linear(x + r * m_.features, z + r * columns);
        }
      });
    } else {
      std::vector<float> block(static_cast<size_t>(std::min(mx.rows, kKernelBlockRows) * m_.supports));
      for (int64_t r0 = 0; r0 < mx.rows; r0 += kKernelBlockRows) {
        const int64_t count = std::min(kKernelBlockRows, mx.rows - r0);
        kernel_matrix(m_.kernel, x + r0 * m_.features, count, m_.vectors, m_.by_feature, m_.supports, m_.features,
                      block.data(), pool);
        pool.parallel_for(count, 16, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            labels[static_cast<size_t>(r0 + i)] = classify_supports(block.data() + i * m_.supports, z + (r0 + i) * columns);
          }
        });
      }
    }
    for (int64_t r = 0; r < mx.rows; ++r) {
      const int64_t c = labels[static_cast<size_t>(r)];
      if (m_.string_labels.empty()) {
        outputs[0].data<int64_t>()[r] = c >= 0 ? m_.int_labels[static_cast<size_t>(c)] : -c - 1;
      } else {
        outputs[0].data<std::string>()[r] = c >= 0 ? m_.string_labels[static_cast<size_t>(c)] : std::to_string(-c - 1);
      }
    }
    return Status::ok();
  }

 private:
  // Writes a row's scores in the linear form; returns the label's class index.
  int64_t classify_linear(const float* row, float* z) const {
    const int64_t k = m_.classes;
    for (int64_t c = 0; c < k; ++c) {
      z[c] = static_cast<float>(dot(row, m_.coefficients.data() + c * m_.features, m_.features) +
                                m_.rho[0]);
    }
    const int64_t best = std::max_element(z, z + k) - z;
    const float top = z[best];
    transform(z, k);
    return k == 2 ? two_class_label(top, best) : best;
  }

  // Writes a row's scores from its kernel values against the support vectors; returns the label's class index.
  int64_t classify_supports(const float* kernels, float* z) const {
    const int64_t k = m_.classes;
    std::vector<int64_t> votes(static_cast<size_t>(k), 0);
    std::vector<float> decisions;
    size_t pair = 0;
    for (int64_t i = 0; i < k - 1; ++i) {
      for (int64_t j = i + 1; j < k; ++j, ++pair) {
        double sum = 0;
        for (int64_t v = 0; v < m_.per_class[static_cast<size_t>(i)]; ++v) {
          const int64_t at = m_.first_vector[static_cast<size_t>(i)] + v;
          sum += m_.coefficients[static_cast<size_t>((j - 1) * m_.supports + at)] * kernels[static_cast<size_t>(at)];
        }
        for (int64_t v = 0; v < m_.per_class[static_cast<size_t>(j)]; ++v) {
          const int64_t at = m_.first_vector[static_cast<size_t>(j)] + v;
          sum += m_.coefficients[static_cast<size_t>(i * m_.supports + at)] * kernels[static_cast<size_t>(at)];
        }
        sum += m_.rho[pair];
        decisions.push_back(static_cast<float>(sum));
        ++votes[static_cast<size_t>(sum > 0 ? i : j)];
      }
    }
    const int64_t most = std::max_element(votes.begin(), votes.end()) - votes.begin();
    if (!m_.prob_a.empty()) {
      std::vector<float> r(static_cast<size_t>(k * k), 0.0f);
      pair = 0;
      for (int64_t i = 0; i < k - 1; ++i) {
        for (int64_t j = i + 1; j < k; ++j, ++pair) {
          const float p = 1.0f - logistic(decisions[pair] * m_.prob_a[pair] + m_.prob_b[pair]);
          const float clipped = std::min(std::max(p, 1.0e-7f), 1.0f - 1.0e-7f);
          r[static_cast<size_t>(i * k + j)] = clipped;
          r[static_cast<size_t>(j * k + i)] = 1.0f - clipped;
        }
      }
      couple_pairwise(k, r, z);
      transform(z, k);
      return most;
    }
    if (k > 2) {
      std::copy(decisions.begin(), decisions.end(), z);
      transform(z, static_cast<int64_t>(decisions.size()));
      return most;
    }
    const float d = decisions[0];
    if (m_.post == ml::PostTransform::kProbit) {
      double v = d;
      ml::apply_post_transform(m_.post, &v, 1);
      z[0] = static_cast<float>(v);
      z[1] = 0.0f;
    } else if (m_.post == ml::PostTransform::kNone) {
      z[0] = -d;
      z[1] = d;
    } else if (m_.post == ml::PostTransform::kLogistic) {
      z[0] = logistic(-d);
      z[1] = logistic(d);
    } else {
      z[0] = 1.0f - d;
      z[1] = d;
    }
    return most;
  }

  // Two classes without support vectors: class 1 when the top score reaches 0.5 (positive coefficients) or is
  // positive (mixed ones), else the top class.
  int64_t two_class_label(float top, int64_t best) const {
    if (m_.all_positive && top >= 0.5f) return 1;
    if (!m_.all_positive && top > 0) return 1;
    return best;
  }

  void transform(float* z, int64_t n) const {
    std::vector<double> v(z, z + n);
    ml::apply_post_transform(m_.post, v.data(), n);
    for (int64_t i = 0; i < n; ++i) z[i] = static_cast<float>(v[static_cast<size_t>(i)]);
  }

  std::string description_;
  Model m_;
};

Expected<std::unique_ptr<Kernel>> create_svm_classifier(const KernelInfo& info) {
  const graph::Node& node = info.node;
  const std::string what = node.describe();
  SvmClassifierKernel::Model m;
  TRY_ASSIGN(m.kernel, kernel_function_of(node));
  TRY_ASSIGN(m.vectors, node.attr_floats("support_vectors", {}));
  TRY_ASSIGN(m.coefficients, node.attr_floats("coefficients", {}));
  TRY_ASSIGN(m.rho, node.attr_floats("rho", {}));
  TRY_ASSIGN(m.prob_a, node.attr_floats("prob_a", {}));
  TRY_ASSIGN(m.prob_b, node.attr_floats("prob_b", {}));
  TRY_ASSIGN(m.per_class, node.attr_ints("vectors_per_class", {}));
  TRY_ASSIGN(m.int_labels, node.attr_ints("classlabels_ints", {}));
  if (const graph::Attribute* a = node.find_attribute("classlabels_strings")) m.string_labels = a->strings;
  TRY_ASSIGN(m.post, ml::post_transform_of(node));
  if (m.int_labels.empty() == m.string_labels.empty()) {
    return make_error(StatusCode::kInvalidGraph, what, ": exactly one of classlabels_ints and classlabels_strings");
  }
  m.classes = static_cast<int64_t>(std::max(m.int_labels.size(), m.string_labels.size()));
  const int64_t k = m.classes;
  if (k < 2 || m.coefficients.empty() || m.rho.empty() || m.prob_a.size() != m.prob_b.size()) {
    return make_error(StatusCode::kInvalidGraph, what, ": needs two or more labels, coefficients, rho, and prob_a "
                      "and prob_b of one length");
  }
  for (int64_t count : m.per_class) {
    if (count < 0) return make_error(StatusCode::kInvalidGraph, what, ": negative vectors_per_class");
    m.first_vector.push_back(m.supports);
    m.supports += count;
  }
  const size_t pairs = static_cast<size_t>(k * (k - 1) / 2);
  if (m.supports > 0) {
    if (static_cast<int64_t>(m.per_class.size()) != k || m.vectors.size() % static_cast<size_t>(m.supports) != 0 ||
        m.coefficients.size() != static_cast<size_t>((k - 1) * m.supports) || m.rho.size() < pairs ||
        (!m.prob_a.empty() && m.prob_a.size() < pairs)) {
      return make_error(StatusCode::kInvalidGraph, what, ": vectors_per_class, support_vectors, coefficients ((k - 1) x "
                        "supports), rho and prob_a / prob_b (one per class pair) do not agree for ", k, " classes");
    }
    m.features = static_cast<int64_t>(m.vectors.size()) / m.supports;
    if (m.kernel.type == SvmKernel::kRbf) m.by_feature = feature_major(m.vectors, m.supports, m.features);
  } else {
    if (m.coefficients.size() % static_cast<size_t>(k) != 0) {
      return make_error(StatusCode::kInvalidGraph, what, ": ", m.coefficients.size(),
                        " coefficients are not one row per class of ", k);
    }
    m.features = static_cast<int64_t>(m.coefficients.size()) / k;
  }
  m.all_positive = std::all_of(m.coefficients.begin(), m.coefficients.end(), [](float c) { return c >= 0; });
  return std::unique_ptr<Kernel>(std::make_unique<SvmClassifierKernel>(what, std::move(m)));
}

const KernelDef kSvmKernels[] = {
    {"SVMRegressor", ml::kMlDomain, 1, kLatestOpset, type_mask(ml::NumericMlTypes{}), 0, create_svm_regressor},
    {"SVMClassifier", ml::kMlDomain, 1, kLatestOpset, type_mask(ml::NumericMlTypes{}), 0, create_svm_classifier},
};

}  // namespace

std::span<const KernelDef> ml_svm_kernels() { return kSvmKernels; }

}  // namespace nxrt::cpu
