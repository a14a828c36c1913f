// Shared pieces of the ai.onnx.ml kernels: score post-transforms and reading numeric inputs as double.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu::ml {

inline constexpr const char* kMlDomain = "ai.onnx.ml";

// Numbered as TreeEnsemble's post_transform attribute.
enum class PostTransform { kNone = 0, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

inline Expected<PostTransform> post_transform_of(const graph::Node& node) {
  TRY_ASSIGN(const std::string name, node.attr_string("post_transform", "NONE"));
  if (name == "NONE") return PostTransform::kNone;
  if (name == "SOFTMAX") return PostTransform::kSoftmax;
  if (name == "LOGISTIC") return PostTransform::kLogistic;
  if (name == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (name == "PROBIT") return PostTransform::kProbit;
  return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute post_transform = '", name,
                    "' is not NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT");
}

// Winitzki's closed-form approximation of erf^-1 (a = 0.147), the one ONNX Runtime's ML kernels use.
inline double approximate_erf_inverse(double x) {
  const double sign = x < 0 ? -1.0 : 1.0;
  const double one_minus_square = (1.0 - x) * (1.0 + x);
  if (one_minus_square == 0) return sign * INFINITY;  // log(0) = -inf carries through to +-inf, as in ORT
  const double log_term = std::log(one_minus_square);
  const double a = 2.0 / (3.14159265358979323846 * 0.147) + 0.5 * log_term;
  const double b = log_term / 0.147;
  return sign * std::sqrt(-a + std::sqrt(a * a - b));
}

// Transforms one row of scores in place, in T's precision (float: as onnxruntime's kernels compute, and with the
// float exp, for kernels whose outputs are float). SOFTMAX_ZERO leaves (near-)zero scores at zero and spreads 0.5
// over a row of zeros.
template <class T>
inline void apply_post_transform(PostTransform post, T* row, int64_t n) {
  switch (post) {
    case PostTransform::kNone: return;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) row[i] = T(1) / (T(1) + std::exp(-row[i]));
      return;
    case PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) {
        row[i] = static_cast<T>(1.41421356 * approximate_erf_inverse(static_cast<double>(row[i]) * 2.0 - 1.0));
      }
      return;
    case PostTransform::kSoftmax: {
      T top = -INFINITY;
      for (int64_t i = 0; i < n; ++i) top = std::max(top, row[i]);
      T sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += (row[i] = std::exp(row[i] - top));
      for (int64_t i = 0; i < n; ++i) row[i] /= sum;
      return;
    }
    case PostTransform::kSoftmaxZero: {
      T top = -INFINITY;
      for (int64_t i = 0; i < n; ++i) top = std::max(top, row[i]);
      T sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        row[i] = std::abs(row[i]) > T(1e-7) ? std::exp(row[i] - top) : row[i] * std::exp(-top);
        sum += row[i];
      }
      for (int64_t i = 0; i < n; ++i) row[i] = sum == 0 ? T(0.5) : row[i] / sum;
      return;
    }
  }
}

// The same transform over `rows` contiguous rows of `width` floats, with the vectorized exp and sigmoid of
// vector_math for LOGISTIC and SOFTMAX (what a classifier's score rows go through).
inline void apply_post_transform_rows(PostTransform post, float* z, int64_t rows, int64_t width) {
  if (post == PostTransform::kLogistic) {
    vector_sigmoid(z, z, rows * width);
  } else if (post == PostTransform::kSoftmax && width > 0) {
    for (int64_t r = 0; r < rows; ++r) {
      float* row = z + r * width;
      const float top = *std::max_element(row, row + width);
      for (int64_t c = 0; c < width; ++c) row[c] -= top;
    }
    vector_exp(z, z, rows * width);
    for (int64_t r = 0; r < rows; ++r) {
      float* row = z + r * width;
      float sum = 0;
      for (int64_t c = 0; c < width; ++c) sum += row[c];
      for (int64_t c = 0; c < width; ++c) row[c] /= sum;
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) apply_post_transform(post, z + r * width, width);
  }
}

// The index of the largest of n >= 1 scores, the first on ties; NaN counts as the largest, so the first NaN wins
// (numpy's argmax, as the reference picks a classifier's label, and Hardmax's rule).
template <class T>
int64_t argmax_nan_first(const T* scores, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(scores[i])) return i;
    if (scores[i] > scores[best]) best = i;
  }
  return best;
}

// A 1-D tensor of `values` (attribute lists: labels, keys, vocabularies).
template <class T>
Expected<Tensor> vector_tensor(const std::vector<T>& values) {
  TRY_ASSIGN(Tensor t, Tensor::allocate(data_type_of<T>, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}

using NumericMlTypes = TypeList<float, double, int64_t, int32_t>;

// Every element of a float/double/int64/int32 tensor as double.
inline std::vector<double> numeric_values(const Tensor& x) {
  std::vector<double> values(static_cast<size_t>(x.numel()));
  visit_dtype<NumericMlTypes>(x.dtype(), [&]<class T>() {
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(x.data<T>()[i]);
  });
  return values;
}

// Rows and columns of a [N, C] input, or of a [C] input taken as one row.
struct Matrix {
  int64_t rows = 0;
  int64_t columns = 0;
};

inline Expected<Matrix> matrix_of(const Tensor* x, const std::string& description) {
  if (x == nullptr || !type_list_contains(NumericMlTypes{}, x->dtype())) {
    return make_error(StatusCode::kInvalidArgument, description,
                      ": input X must be a float, double, int64 or int32 tensor");
  }
  if (x->rank() == 1) return Matrix{1, x->shape()[0]};
  if (x->rank() == 2) return Matrix{x->shape()[0], x->shape()[1]};
  return make_error(StatusCode::kInvalidArgument, description, ": input X shape ", shape_to_string(x->shape()),
                    " must be [N, C] or [C]");
}

}  // namespace nxrt::cpu::ml
