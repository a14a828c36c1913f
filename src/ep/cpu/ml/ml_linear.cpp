// ai.onnx.ml feature transforms and linear models: Scaler, Normalizer, Imputer, OneHotEncoder,
// FeatureVectorizer, LinearRegressor, LinearClassifier. Arithmetic happens in double; float outputs round once.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/ml/ml_common.h"
#include "ep/cpu/elementwise/unary_common.h"

namespace nxrt::cpu {

namespace {

using ml::Matrix;
using ml::NumericMlTypes;

Status missing_input(const std::string& description) {
  return make_error(StatusCode::kInvalidArgument, description, ": missing input X");
}

// Per-column parameter of length 1 (broadcast) or C.
Status check_per_column(size_t size, int64_t columns, const char* name, const std::string& description) {
  if (size != 1 && static_cast<int64_t>(size) != columns) {
    return make_error(StatusCode::kInvalidArgument, description, ": attribute ", name, " has ", size,
                      " values but input X has ", columns, " columns");
  }
  return Status::ok();
}

// Y = (X - offset) * scale along the last axis.
class ScalerKernel final : public Kernel {
 public:
  ScalerKernel(std::string description, std::vector<float> offset, std::vector<float> scale)
      : description_(std::move(description)), offset_(std::move(offset)), scale_(std::move(scale)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) return missing_input(description_);
    const Tensor& x = *inputs[0];
    if (!type_list_contains(NumericMlTypes{}, x.dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input type ",
                        data_type_name(x.dtype()));
    }
    const int64_t columns = x.rank() == 0 ? 1 : x.shape().back();
    TRY(check_per_column(offset_.size(), columns, "offset", description_));
    TRY(check_per_column(scale_.size(), columns, "scale", description_));
    outputs.assign(1, OutputDesc{DataType::kFloat32, x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    const std::vector<double> v = ml::numeric_values(x);
    const size_t columns = x.rank() == 0 ? 1 : static_cast<size_t>(x.shape().back());
    float* y = outputs[0].data<float>();
    for (size_t i = 0; i < v.size(); ++i) {
      const size_t c = i % columns;
      const double offset = offset_[offset_.size() == 1 ? 0 : c];
      const double scale = scale_[scale_.size() == 1 ? 0 : c];
      y[i] = static_cast<float>((v[i] - offset) * scale);
    }
    return Status::ok();
  }

 private:
  std::string description_;
  std::vector<float> offset_;
  std::vector<float> scale_;
};

Expected<std::unique_ptr<Kernel>> create_scaler(const KernelInfo& info) {
  TRY_ASSIGN(std::vector<float> offset, info.node.attr_floats("offset", {0.0f}));
  TRY_ASSIGN(std::vector<float> scale, info.node.attr_floats("scale", {1.0f}));
  if (offset.empty()) offset = {0.0f};
  if (scale.empty()) scale = {1.0f};
  return std::unique_ptr<Kernel>(std::make_unique<ScalerKernel>(info.node.describe(), offset, scale));
}

enum class Norm { kMax, kL1, kL2 };

// Each row divided by max |x|, sum |x| or sqrt(sum x^2) (the spec's max(X), sum(X) and sum(X^2) read with the
// norms' absolute values, as the reference computes them); a zero divisor leaves the row unchanged, a NaN in the
// row makes the divisor NaN.
class NormalizerKernel final : public Kernel {
 public:
  NormalizerKernel(std::string description, Norm norm) : description_(std::move(description)), norm_(norm) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(ml::matrix_of(inputs.empty() ? nullptr : inputs[0], description_).status());
    outputs.assign(1, OutputDesc{DataType::kFloat32, inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    TRY_ASSIGN(const Matrix m, ml::matrix_of(inputs[0], description_));
    const std::vector<double> v = ml::numeric_values(*inputs[0]);
    float* y = outputs[0].data<float>();
    for (int64_t r = 0; r < m.rows; ++r) {
      const double* row = v.data() + r * m.columns;
      double divisor = 0;
      for (int64_t c = 0; c < m.columns; ++c) {
        if (norm_ == Norm::kMax) {
          divisor = std::isnan(row[c]) ? row[c] : std::max(divisor, std::abs(row[c]));
          if (std::isnan(divisor)) break;
        } else {
          divisor += norm_ == Norm::kL1 ? std::abs(row[c]) : row[c] * row[c];
        }
      }
      if (norm_ == Norm::kL2) divisor = std::sqrt(divisor);
      for (int64_t c = 0; c < m.columns; ++c) {
        y[r * m.columns + c] = static_cast<float>(divisor == 0 ? row[c] : row[c] / divisor);
      }
    }
    return Status::ok();
  }

 private:
  std::string description_;
  Norm norm_;
};

Expected<std::unique_ptr<Kernel>> create_normalizer(const KernelInfo& info) {
  TRY_ASSIGN(const std::string norm, info.node.attr_string("norm", "MAX"));
  Norm mode = Norm::kMax;
  if (norm == "L1") {
    mode = Norm::kL1;
  } else if (norm == "L2") {
    mode = Norm::kL2;
  } else if (norm != "MAX") {
    return make_error(StatusCode::kInvalidArgument, info.node.describe(), ": attribute norm = '", norm,
                      "' must be MAX, L1 or L2");
  }
  return std::unique_ptr<Kernel>(std::make_unique<NormalizerKernel>(info.node.describe(), mode));
}

// The imputed values and the replaced value, as the node gives them: floats (imputed_value_floats,
// replaced_value_float) or int64 (imputed_value_int64s, replaced_value_int64).
struct Imputation {
  bool integers = false;
  std::vector<double> float_values;
  double float_replaced = 0;  // NaN: every NaN is replaced
  std::vector<int64_t> int_values;
  int64_t int_replaced = 0;
};

// Replaces each element equal to the replaced value by its column's imputed value; output keeps X's type. Integer
// inputs with integer attributes compare and copy as int64 (no trip through double, which rounds beyond 2^53); a
// value outside the input type saturates (the spec requires imputed values to fit it).
class ImputerKernel final : public Kernel {
 public:
  ImputerKernel(std::string description, Imputation imputation)
      : description_(std::move(description)), imputation_(std::move(imputation)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) return missing_input(description_);
    const Tensor& x = *inputs[0];
    if (!type_list_contains(NumericMlTypes{}, x.dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported input type ",
                        data_type_name(x.dtype()));
    }
    const size_t count = imputation_.integers ? imputation_.int_values.size() : imputation_.float_values.size();
    TRY(check_per_column(count, x.rank() == 0 ? 1 : x.shape().back(), "imputed_value_*", description_));
    outputs.assign(1, OutputDesc{x.dtype(), x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    const size_t columns = x.rank() == 0 ? 1 : static_cast<size_t>(x.shape().back());
    const Imputation& m = imputation_;
    visit_dtype<NumericMlTypes>(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      T* out = outputs[0].data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const size_t column = static_cast<size_t>(i) % columns;
        if constexpr (std::is_integral_v<T>) {
          if (m.integers) {
            const int64_t value = m.int_values[m.int_values.size() == 1 ? 0 : column];
            const bool replace = static_cast<int64_t>(in[i]) == m.int_replaced;
            out[i] = replace ? static_cast<T>(std::clamp<int64_t>(value, std::numeric_limits<T>::min(),
                                                                  std::numeric_limits<T>::max()))
                             : in[i];
            continue;
          }
        }
        const double v = static_cast<double>(in[i]);
        const double replaced = m.integers ? static_cast<double>(m.int_replaced) : m.float_replaced;
        const bool replace = std::isnan(replaced) ? std::isnan(v) : v == replaced;
        const double value = m.integers ? static_cast<double>(m.int_values[m.int_values.size() == 1 ? 0 : column])
                                        : m.float_values[m.float_values.size() == 1 ? 0 : column];
        if constexpr (std::is_integral_v<T>) {
          out[i] = replace ? saturate_to_int<T>(value) : in[i];  // NaN and out-of-range values saturate
        } else {
          out[i] = replace ? static_cast<T>(value) : in[i];
        }
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
  Imputation imputation_;
};

Expected<std::unique_ptr<Kernel>> create_imputer(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const std::vector<float> floats, node.attr_floats("imputed_value_floats", {}));
  Imputation m;
  TRY_ASSIGN(m.int_values, node.attr_ints("imputed_value_int64s", {}));
  if (!floats.empty()) {
    m.float_values.assign(floats.begin(), floats.end());
    TRY_ASSIGN(const float r, node.attr_float("replaced_value_float", 0.0f));
    m.float_replaced = r;
  } else if (!m.int_values.empty()) {
    m.integers = true;
    TRY_ASSIGN(m.int_replaced, node.attr_int("replaced_value_int64", 0));
  } else {
    return make_error(StatusCode::kInvalidGraph, node.describe(),
                      ": one of imputed_value_floats and imputed_value_int64s must be set");
  }
  return std::unique_ptr<Kernel>(std::make_unique<ImputerKernel>(node.describe(), std::move(m)));
}

// Y = X.shape + [categories]; numeric inputs are truncated to int64 and looked up in cats_int64s (NaN and values
// outside int64 match none). A repeated category sets the column of its last occurrence, as onnxruntime.
class OneHotEncoderKernel final : public Kernel {
 public:
  OneHotEncoderKernel(std::string description, std::unordered_map<std::string, int64_t> string_index,
                      std::unordered_map<int64_t, int64_t> int_index, int64_t count, bool zeros)
      : description_(std::move(description)), string_index_(std::move(string_index)),
        int_index_(std::move(int_index)), count_(count), zeros_(zeros) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) return missing_input(description_);
    const bool strings = inputs[0]->dtype() == DataType::kString;
    if (strings ? string_index_.empty() : !type_list_contains(NumericMlTypes{}, inputs[0]->dtype()) ||
                                              int_index_.empty()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input type ",
                        data_type_name(inputs[0]->dtype()), " does not match the cats_* attribute");
    }
    Shape out = inputs[0]->shape();
    out.push_back(count_);
    outputs.assign(1, OutputDesc{DataType::kFloat32, out});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    float* y = outputs[0].data<float>();
    std::fill(y, y + outputs[0].numel(), 0.0f);
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t at = -1;
      if (x.dtype() == DataType::kString) {
        const auto found = string_index_.find(x.data<std::string>()[i]);
        if (found != string_index_.end()) at = found->second;
      } else {
        const std::optional<int64_t> category = integer_category(x, i);
        const auto found = category ? int_index_.find(*category) : int_index_.end();
        if (found != int_index_.end()) at = found->second;
      }
      if (at < 0) {
        if (!zeros_) {
          return make_error(StatusCode::kInvalidArgument, description_, ": element ", i,
                            " of input X is not a known category and zeros = 0");
        }
        continue;
      }
      y[i * count_ + at] = 1.0f;
    }
    return Status::ok();
  }

 private:
  // Element i of a numeric X as the int64 it is looked up as: integers as they are (no trip through double, which
  // rounds beyond 2^53), floats truncated toward zero; NaN and floats outside int64 have none.
  static std::optional<int64_t> integer_category(const Tensor& x, int64_t i) {
    std::optional<int64_t> category;
    visit_dtype<NumericMlTypes>(x.dtype(), [&]<class T>() {
      const T value = x.data<T>()[i];
      if constexpr (std::is_integral_v<T>) {
        category = static_cast<int64_t>(value);
      } else if (std::abs(static_cast<double>(value)) < 0x1p63) {
        category = static_cast<int64_t>(value);
      }
    });
    return category;
  }

  std::string description_;
  std::unordered_map<std::string, int64_t> string_index_;
  std::unordered_map<int64_t, int64_t> int_index_;
  int64_t count_;
  bool zeros_;
};

Expected<std::unique_ptr<Kernel>> create_one_hot_encoder(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const std::vector<int64_t> ints, node.attr_ints("cats_int64s", {}));
  std::vector<std::string> strings;
  if (const graph::Attribute* a = node.find_attribute("cats_strings")) strings = a->strings;
  if (ints.empty() == strings.empty()) {
    return make_error(StatusCode::kInvalidGraph, node.describe(),
                      ": exactly one of cats_int64s and cats_strings must be set");
  }
  TRY_ASSIGN(const int64_t zeros, node.attr_int("zeros", 1));
  std::unordered_map<std::string, int64_t> string_index;
  std::unordered_map<int64_t, int64_t> int_index;
  for (size_t i = 0; i < strings.size(); ++i) string_index[strings[i]] = static_cast<int64_t>(i);
  for (size_t i = 0; i < ints.size(); ++i) int_index[ints[i]] = static_cast<int64_t>(i);
  const int64_t count = static_cast<int64_t>(std::max(ints.size(), strings.size()));
  return std::unique_ptr<Kernel>(std::make_unique<OneHotEncoderKernel>(
      node.describe(), std::move(string_index), std::move(int_index), count, zeros != 0));
}

// Concatenates [N, C_i] (or [C_i] as one row) inputs, each cut or zero-padded to inputdimensions[i] columns.
class FeatureVectorizerKernel final : public Kernel {
 public:
  FeatureVectorizerKernel(std::string description, std::vector<int64_t> dimensions)
      : description_(std::move(description)), dimensions_(std::move(dimensions)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() != dimensions_.size()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ", inputs.size(), " inputs but ",
                        dimensions_.size(), " inputdimensions");
    }
    int64_t rows = -1;
    int64_t total = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      TRY_ASSIGN(const Matrix m, ml::matrix_of(inputs[i], description_));
      if (rows >= 0 && m.rows != rows) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " has ", m.rows,
                          " rows, input 0 has ", rows);
      }
      rows = m.rows;
      total += dimensions_[i];
    }
    outputs.assign(1, OutputDesc{DataType::kFloat32, Shape{std::max<int64_t>(rows, 0), total}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    float* y = outputs[0].data<float>();
    const int64_t rows = outputs[0].shape()[0];
    const int64_t total = outputs[0].shape()[1];
    int64_t offset = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      TRY_ASSIGN(const Matrix m, ml::matrix_of(inputs[i], description_));
      const std::vector<double> v = ml::numeric_values(*inputs[i]);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < dimensions_[i]; ++c) {
          y[r * total + offset + c] = c < m.columns ? static_cast<float>(v[static_cast<size_t>(r * m.columns + c)]) : 0.0f;
        }
      }
      offset += dimensions_[i];
    }
    return Status::ok();
  }

 private:
  std::string description_;
  std::vector<int64_t> dimensions_;
};

Expected<std::unique_ptr<Kernel>> create_feature_vectorizer(const KernelInfo& info) {
  TRY_ASSIGN(const std::vector<int64_t> dimensions, info.node.attr_ints("inputdimensions", {}));
  for (int64_t d : dimensions) {
    if (d < 0) {
      return make_error(StatusCode::kInvalidArgument, info.node.describe(), ": inputdimensions holds ", d);
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<FeatureVectorizerKernel>(info.node.describe(), dimensions));
}

// scores[r][t] = sum_c X[r][c] * coefficients[t * C + c] + intercepts[t], then the post-transform.
struct LinearModel {
  std::vector<double> coefficients;
  std::vector<double> intercepts;
  int64_t targets = 1;
  ml::PostTransform post = ml::PostTransform::kNone;

  Status check(int64_t columns, const std::string& description) const {
    int64_t expected = 0;  // targets * columns, overflow-checked (targets comes from the model)
    if (__builtin_mul_overflow(targets, columns, &expected) || static_cast<int64_t>(coefficients.size()) != expected ||
        (!intercepts.empty() && static_cast<int64_t>(intercepts.size()) != targets)) {
      return make_error(StatusCode::kInvalidArgument, description, ": ", coefficients.size(), " coefficients and ",
                        intercepts.size(), " intercepts do not fit ", targets, " targets of ", columns, " columns");
    }
    return Status::ok();
  }

  // out[t] = intercept[t] + row . coefficients[t], summed in four interleaved partial sums (independent chains of
  // additions rather than one chain as long as the row).
  template <class T>
  void scores(const T* row, int64_t columns, double* out) const {
    for (int64_t t = 0; t < targets; ++t) {
      const double* w = coefficients.data() + t * columns;
      double partial[4] = {0, 0, 0, 0};
      int64_t c = 0;
      for (; c + 4 <= columns; c += 4) {
        for (int i = 0; i < 4; ++i) partial[i] += static_cast<double>(row[c + i]) * w[c + i];
      }
      for (; c < columns; ++c) partial[0] += static_cast<double>(row[c]) * w[c];
      const double intercept = intercepts.empty() ? 0.0 : intercepts[static_cast<size_t>(t)];
      out[t] = intercept + ((partial[0] + partial[1]) + (partial[2] + partial[3]));
    }
  }
};

Expected<LinearModel> linear_model(const graph::Node& node, int64_t targets) {
  LinearModel model;
  TRY_ASSIGN(const std::vector<float> coefficients, node.attr_floats("coefficients", {}));
  TRY_ASSIGN(const std::vector<float> intercepts, node.attr_floats("intercepts", {}));
  TRY_ASSIGN(model.post, ml::post_transform_of(node));
  model.coefficients.assign(coefficients.begin(), coefficients.end());
  model.intercepts.assign(intercepts.begin(), intercepts.end());
  model.targets = targets;
  if (targets < 1) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": the model has ", targets, " targets");
  }
  return model;
}

class LinearRegressorKernel final : public Kernel {
 public:
  LinearRegressorKernel(std::string description, LinearModel model)
      : description_(std::move(description)), model_(std::move(model)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Matrix m, ml::matrix_of(inputs.empty() ? nullptr : inputs[0], description_));
    TRY(model_.check(m.columns, description_));
    outputs.assign(1, OutputDesc{DataType::kFloat32, Shape{m.rows, model_.targets}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Matrix m, ml::matrix_of(inputs[0], description_));
    float* y = outputs[0].data<float>();
    visit_dtype<NumericMlTypes>(inputs[0]->dtype(), [&]<class T>() {
      const T* v = inputs[0]->data<T>();
      pool.parallel_for(m.rows, 256, [&](int64_t begin, int64_t end) {
        std::vector<double> scores(static_cast<size_t>(model_.targets));
        for (int64_t r = begin; r < end; ++r) {
          model_.scores(v + r * m.columns, m.columns, scores.data());
          ml::apply_post_transform(model_.post, scores.data(), model_.targets);
          for (int64_t t = 0; t < model_.targets; ++t) y[r * model_.targets + t] = static_cast<float>(scores[t]);
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  LinearModel model_;
};

Expected<std::unique_ptr<Kernel>> create_linear_regressor(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t targets, info.node.attr_int("targets", 1));
  TRY_ASSIGN(LinearModel model, linear_model(info.node, targets));
  return std::unique_ptr<Kernel>(std::make_unique<LinearRegressorKernel>(info.node.describe(), std::move(model)));
}

// One score per coefficient row; a single row with two classes scores [-s, s]. The label is the argmax class,
// or for a single score column the first class when the score reaches 0 (0.5 after a post-transform).
class LinearClassifierKernel final : public Kernel {
 public:
  LinearClassifierKernel(std::string description, LinearModel model, std::vector<int64_t> int_labels,
                         std::vector<std::string> string_labels)
      : description_(std::move(description)), model_(std::move(model)), int_labels_(std::move(int_labels)),
        string_labels_(std::move(string_labels)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Matrix m, ml::matrix_of(inputs.empty() ? nullptr : inputs[0], description_));
    const int64_t rows_of_coefficients = m.columns == 0 ? 0 : static_cast<int64_t>(model_.coefficients.size()) / m.columns;
    LinearModel shaped = model_;
    shaped.targets = rows_of_coefficients;
    TRY(shaped.check(m.columns, description_));
    const DataType label_type = string_labels_.empty() ? DataType::kInt64 : DataType::kString;
    outputs.assign({OutputDesc{label_type, Shape{m.rows}}, OutputDesc{DataType::kFloat32, Shape{m.rows, columns(shaped)}}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Matrix m, ml::matrix_of(inputs[0], description_));
    LinearModel shaped = model_;
    shaped.targets = m.columns == 0 ? 0 : static_cast<int64_t>(model_.coefficients.size()) / m.columns;
    const int64_t width = columns(shaped);
    float* z = outputs[1].data<float>();
    visit_dtype<NumericMlTypes>(inputs[0]->dtype(), [&]<class T>() {
      const T* v = inputs[0]->data<T>();
      pool.parallel_for(m.rows, 256, [&](int64_t begin, int64_t end) {
        std::vector<double> sums(static_cast<size_t>(std::max<int64_t>(width, shaped.targets)));
        for (int64_t r = begin; r < end; ++r) {
          shaped.scores(v + r * m.columns, m.columns, sums.data());
          float* row = z + r * width;
          if (width == 2 && shaped.targets == 1) {
            row[0] = static_cast<float>(-sums[0]);
            row[1] = static_cast<float>(sums[0]);
          } else {
            for (int64_t c = 0; c < width; ++c) row[c] = static_cast<float>(sums[static_cast<size_t>(c)]);
          }
        }
        ml::apply_post_transform_rows(shaped.post, z + begin * width, end - begin, width);
        for (int64_t r = begin; r < end; ++r) {
          const float* row = z + r * width;
          int64_t label = 0;
          bool first_class = true;
          if (width > 1) {
            label = ml::argmax_nan_first(row, width);
          } else {
            const float threshold = shaped.post == ml::PostTransform::kNone ? 0.0f : 0.5f;
            first_class = width == 1 && row[0] >= threshold;
          }
          write_label(outputs[0], r, label, width > 1 || first_class, width > 1);
        }
      });
    });
    return Status::ok();
  }

 private:
  int64_t columns(const LinearModel& shaped) const {
    const size_t classes = std::max(int_labels_.size(), string_labels_.size());
    return shaped.targets == 1 && classes == 2 ? 2 : shaped.targets;
  }

  void write_label(Tensor& labels, int64_t row, int64_t index, bool positive, bool by_index) const {
    if (!string_labels_.empty()) {
      const bool valid = positive && index < static_cast<int64_t>(string_labels_.size());
      labels.data<std::string>()[row] = valid ? string_labels_[static_cast<size_t>(index)] : std::string();
      return;
    }
    int64_t value = by_index ? index : (positive ? 1 : 0);
    if (!int_labels_.empty()) {
      const bool valid = positive && index < static_cast<int64_t>(int_labels_.size());
      value = valid ? int_labels_[static_cast<size_t>(index)] : 0;
    }
    labels.data<int64_t>()[row] = value;
  }

  std::string description_;
  LinearModel model_;
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
};

Expected<std::unique_ptr<Kernel>> create_linear_classifier(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const std::vector<int64_t> int_labels, node.attr_ints("classlabels_ints", {}));
  std::vector<std::string> string_labels;
  if (const graph::Attribute* a = node.find_attribute("classlabels_strings")) string_labels = a->strings;
  if (!int_labels.empty() && !string_labels.empty()) {
    return make_error(StatusCode::kInvalidGraph, node.describe(),
                      ": only one of classlabels_ints and classlabels_strings may be set");
  }
  TRY_ASSIGN(LinearModel model, linear_model(node, 1));
  return std::unique_ptr<Kernel>(std::make_unique<LinearClassifierKernel>(node.describe(), std::move(model),
                                                                           int_labels, std::move(string_labels)));
}

constexpr DataTypeMask kNumericMask = type_mask(NumericMlTypes{});

const KernelDef kMlLinearKernels[] = {
    {"Scaler", ml::kMlDomain, 1, kLatestOpset, kNumericMask, 0, create_scaler},
    {"Normalizer", ml::kMlDomain, 1, kLatestOpset, kNumericMask, 0, create_normalizer},
    {"Imputer", ml::kMlDomain, 1, kLatestOpset, kNumericMask, 0, create_imputer},
    {"OneHotEncoder", ml::kMlDomain, 1, kLatestOpset,
     type_mask(TypeList<std::string, int64_t, int32_t, float, double>{}), 0, create_one_hot_encoder},
    {"FeatureVectorizer", ml::kMlDomain, 1, kLatestOpset, kNumericMask, 0, create_feature_vectorizer},
    {"LinearRegressor", ml::kMlDomain, 1, kLatestOpset, kNumericMask, 0, create_linear_regressor},
    {"LinearClassifier", ml::kMlDomain, 1, kLatestOpset, kNumericMask, 0, create_linear_classifier},
};

}  // namespace

std::span<const KernelDef> ml_linear_kernels() { return kMlLinearKernels; }

}  // namespace nxrt::cpu
