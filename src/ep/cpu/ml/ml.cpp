// ai.onnx.ml operators: LabelEncoder, Binarizer, ArrayFeatureExtractor. TreeEnsemble lives in
// ml_tree_ensemble.cpp; Scaler, Normalizer, Imputer, OneHotEncoder, FeatureVectorizer, LinearRegressor and
// LinearClassifier in ml_linear.cpp; ZipMap, DictVectorizer and CastMap in ml_maps.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/ml/ml_common.h"

namespace nxrt::cpu {

std::span<const KernelDef> ml_tree_ensemble_kernels();
std::span<const KernelDef> ml_tree_ensemble_legacy_kernels();
std::span<const KernelDef> ml_svm_kernels();
std::span<const KernelDef> ml_linear_kernels();
std::span<const KernelDef> ml_map_kernels();

namespace {

using ml::kMlDomain;
using ml::vector_tensor;

using LabelTypes = TypeList<std::string, int64_t, float, double, int32_t, int16_t>;

// Map key of element i: strings as themselves, integers in decimal, floats as the bytes of their double value
// (every NaN alike; -0.0 as 0.0 unless `signed_zeros_differ`), so keys and inputs of different widths of one kind
// compare by value.
std::string key_of(const Tensor& t, int64_t i, bool signed_zeros_differ) {
  std::string key;
  visit_dtype<LabelTypes>(t.dtype(), [&]<class T>() {
    const T value = t.data<T>()[i];
    if constexpr (std::is_same_v<T, std::string>) {
      key = value;
    } else if constexpr (std::is_floating_point_v<T>) {
      double d = std::isnan(value) ? std::nan("") : static_cast<double>(value);
      if (d == 0 && !signed_zeros_differ) d = 0.0;
      key.assign(reinterpret_cast<const char*>(&d), sizeof d);
    } else {
      key = std::to_string(static_cast<int64_t>(value));
    }
  });
  return key;
}

void copy_element(const Tensor& from, int64_t i, Tensor& to, int64_t j) {
  if (from.dtype() == DataType::kString) {
    to.data<std::string>()[j] = from.data<std::string>()[i];
    return;
  }
  const size_t bytes = static_cast<size_t>(data_type_bits(from.dtype()) / 8);
  std::memcpy(static_cast<char*>(to.raw_data()) + j * bytes, static_cast<const char*>(from.raw_data()) + i * bytes,
              bytes);
}

// A repeated key maps to the value of its last occurrence ("the last key takes precedence", opset 4). Float keys
// match by value with every NaN alike; `signed_zeros_differ` (opset 2's "bit-wise comparison") keeps -0.0 and 0.0
// apart, later opsets compare them equal.
class LabelEncoderKernel final : public Kernel {
 public:
  LabelEncoderKernel(std::string description, const Tensor& keys, Tensor values, Tensor fallback,
                     bool signed_zeros_differ)
      : description_(std::move(description)), key_type_(keys.dtype()), values_(std::move(values)),
        fallback_(std::move(fallback)), signed_zeros_differ_(signed_zeros_differ) {
    for (int64_t i = 0; i < keys.numel(); ++i) index_[key_of(keys, i, signed_zeros_differ_)] = i;
  }

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    }
    const DataType x = inputs[0]->dtype();
    const bool string_keys = key_type_ == DataType::kString;
    if (!type_list_contains(LabelTypes{}, x) || (x == DataType::kString) != string_keys) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 type ", data_type_name(x),
                        " does not match the key type ", data_type_name(key_type_));
    }
    outputs.assign(1, OutputDesc{values_.dtype(), inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    for (int64_t i = 0; i < x.numel(); ++i) {
      const auto found = index_.find(key_of(x, i, signed_zeros_differ_));
      if (found == index_.end()) {
        copy_element(fallback_, 0, outputs[0], i);
      } else {
        copy_element(values_, found->second, outputs[0], i);
      }
    }
    return Status::ok();
  }

 private:
  std::string description_;
  DataType key_type_;
  Tensor values_;
  Tensor fallback_;
  bool signed_zeros_differ_;
  std::unordered_map<std::string, int64_t> index_;
};

// LabelEncoder opset 1 maps both ways; the input's type picks the direction.
class LabelEncoderV1Kernel final : public Kernel {
 public:
  LabelEncoderV1Kernel(LabelEncoderKernel from_strings, LabelEncoderKernel from_ints)
      : from_strings_(std::move(from_strings)), from_ints_(std::move(from_ints)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    return pick(inputs).reshape(inputs, outputs);
  }
  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    return pick(inputs).run(inputs, outputs, pool);
  }

 private:
  const LabelEncoderKernel& pick(KernelInputs inputs) const {
    const bool ints = !inputs.empty() && inputs[0] != nullptr && inputs[0]->dtype() == DataType::kInt64;
    return ints ? from_ints_ : from_strings_;
  }

  LabelEncoderKernel from_strings_;
  LabelEncoderKernel from_ints_;
};

// The keys or values of a LabelEncoder from `<prefix>_tensor`, `<prefix>_strings`, `_int64s` or `_floats`.
Expected<Tensor> label_list(const graph::Node& node, const std::string& prefix) {
  const graph::Attribute* tensor = node.find_attribute(prefix + "_tensor");
  const graph::Attribute* strings = node.find_attribute(prefix + "_strings");
  const graph::Attribute* ints = node.find_attribute(prefix + "_int64s");
  const graph::Attribute* floats = node.find_attribute(prefix + "_floats");
  const int present = (tensor != nullptr) + (strings != nullptr) + (ints != nullptr) + (floats != nullptr);
  if (present != 1) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": exactly one ", prefix,
                      "_* attribute must be set, found ", present);
  }
  if (tensor != nullptr) {
    if (!type_list_contains(LabelTypes{}, tensor->t.dtype())) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute ", prefix, "_tensor has type ",
                        data_type_name(tensor->t.dtype()));
    }
    return tensor->t.reshaped({tensor->t.numel()});
  }
  if (strings != nullptr) return vector_tensor(strings->strings);
  if (ints != nullptr) return vector_tensor(ints->ints);
  return vector_tensor(floats->floats);
}

Expected<Tensor> label_default(const graph::Node& node, DataType value_type) {
  if (const graph::Attribute* a = node.find_attribute("default_tensor")) {
    if (a->t.dtype() != value_type || a->t.numel() < 1) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute default_tensor must hold one ",
                        data_type_name(value_type));
    }
    return a->t;
  }
  if (value_type == DataType::kString) {
    TRY_ASSIGN(const std::string s, node.attr_string("default_string", "_Unused"));
    return vector_tensor(std::vector<std::string>{s});
  }
  if (value_type == DataType::kFloat32 || value_type == DataType::kFloat64) {
    TRY_ASSIGN(const float f, node.attr_float("default_float", -0.0f));
    TRY_ASSIGN(Tensor t, Tensor::allocate(value_type, {1}));
    if (value_type == DataType::kFloat32) {
      t.data<float>()[0] = f;
    } else {
      t.data<double>()[0] = f;
    }
    return t;
  }
  TRY_ASSIGN(const int64_t i, node.attr_int("default_int64", -1));
  TRY_ASSIGN(Tensor t, Tensor::allocate(value_type, {1}));
  visit_dtype<TypeList<int64_t, int32_t, int16_t>>(value_type, [&]<class T>() { t.data<T>()[0] = static_cast<T>(i); });
  return t;
}

Expected<std::unique_ptr<Kernel>> create_label_encoder(const KernelInfo& info) {
  const graph::Node& node = info.node;
  if (info.opset() < 2) {
    // Opset 1: classes_strings maps a string to its index (a repeated string: its last, as onnxruntime), or an int64
    // to the string at that index.
    std::vector<std::string> classes;
    if (const graph::Attribute* a = node.find_attribute("classes_strings")) classes = a->strings;
    std::vector<int64_t> indices(classes.size());
    for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<int64_t>(i);
    TRY_ASSIGN(Tensor strings, vector_tensor(classes));
    TRY_ASSIGN(Tensor ints, vector_tensor(indices));
    TRY_ASSIGN(Tensor int_default, label_default(node, DataType::kInt64));
    TRY_ASSIGN(Tensor string_default, label_default(node, DataType::kString));
    return std::unique_ptr<Kernel>(std::make_unique<LabelEncoderV1Kernel>(
        LabelEncoderKernel(node.describe(), strings, ints, int_default, false),
        LabelEncoderKernel(node.describe(), ints, strings, string_default, false)));
  }
  TRY_ASSIGN(const Tensor keys, label_list(node, "keys"));
  TRY_ASSIGN(const Tensor values, label_list(node, "values"));
  if (keys.numel() != values.numel()) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": ", keys.numel(), " keys but ", values.numel(),
                      " values");
  }
  TRY_ASSIGN(const Tensor fallback, label_default(node, values.dtype()));
  return std::unique_ptr<Kernel>(
      std::make_unique<LabelEncoderKernel>(node.describe(), keys, values, fallback, info.opset() < 4));
}

using BinarizerTypes = TypeList<float, double, int64_t, int32_t>;

class BinarizerKernel final : public Kernel {
 public:
  BinarizerKernel(std::string description, float threshold)
      : description_(std::move(description)), threshold_(threshold) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr || !type_list_contains(BinarizerTypes{}, inputs[0]->dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 must be float, double, int64 or int32");
    }
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    visit_dtype<BinarizerTypes>(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      T* out = outputs[0].data<T>();
      const double threshold = threshold_;
      pool.parallel_for(x.numel(), 16384, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = static_cast<double>(in[i]) > threshold ? T(1) : T(0);
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  float threshold_;
};

Expected<std::unique_ptr<Kernel>> create_binarizer(const KernelInfo& info) {
  TRY_ASSIGN(const float threshold, info.node.attr_float("threshold", 0.0f));
  return std::unique_ptr<Kernel>(std::make_unique<BinarizerKernel>(info.node.describe(), threshold));
}

// CategoryMapper: strings -> int64 through cats_strings[i] -> cats_int64s[i] (default_int64 for others), or int64
// -> strings the other way (default_string). A repeated key maps as its last pair, as in onnxruntime.
class CategoryMapperKernel final : public Kernel {
 public:
  CategoryMapperKernel(std::string description, std::vector<std::string> strings, std::vector<int64_t> ints,
                       std::string default_string, int64_t default_int)
      : description_(std::move(description)), default_string_(std::move(default_string)), default_int_(default_int) {
    for (size_t i = 0; i < strings.size(); ++i) {
      to_int_[strings[i]] = ints[i];
      to_string_[ints[i]] = strings[i];
    }
  }

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr ||
        (inputs[0]->dtype() != DataType::kString && inputs[0]->dtype() != DataType::kInt64)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X must be a string or int64 tensor");
    }
    const DataType out = inputs[0]->dtype() == DataType::kString ? DataType::kInt64 : DataType::kString;
    outputs.assign(1, OutputDesc{out, inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    if (x.dtype() == DataType::kString) {
      for (int64_t i = 0; i < x.numel(); ++i) {
        const auto at = to_int_.find(x.data<std::string>()[i]);
        outputs[0].data<int64_t>()[i] = at == to_int_.end() ? default_int_ : at->second;
      }
    } else {
      for (int64_t i = 0; i < x.numel(); ++i) {
        const auto at = to_string_.find(x.data<int64_t>()[i]);
        outputs[0].data<std::string>()[i] = at == to_string_.end() ? default_string_ : at->second;
      }
    }
    return Status::ok();
  }

 private:
  std::string description_;
  std::unordered_map<std::string, int64_t> to_int_;
  std::unordered_map<int64_t, std::string> to_string_;
  std::string default_string_;
  int64_t default_int_;
};

Expected<std::unique_ptr<Kernel>> create_category_mapper(const KernelInfo& info) {
  const graph::Node& node = info.node;
  std::vector<std::string> strings;
  if (const graph::Attribute* a = node.find_attribute("cats_strings")) strings = a->strings;
  TRY_ASSIGN(std::vector<int64_t> ints, node.attr_ints("cats_int64s", {}));
  if (strings.size() != ints.size()) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": cats_strings (", strings.size(),
                      ") and cats_int64s (", ints.size(), ") differ in length");
  }
  TRY_ASSIGN(std::string default_string, node.attr_string("default_string", "_Unused"));
  TRY_ASSIGN(const int64_t default_int, node.attr_int("default_int64", -1));
  return std::unique_ptr<Kernel>(std::make_unique<CategoryMapperKernel>(
      node.describe(), std::move(strings), std::move(ints), std::move(default_string), default_int));
}

// Selects columns of the last axis. A 1-D X yields [1, count]; the indices may have any shape (flattened).
class ArrayFeatureExtractorKernel final : public Kernel {
 public:
  explicit ArrayFeatureExtractorKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input X or Y");
    }
    const Tensor& x = *inputs[0];
    const Tensor& indices = *inputs[1];
    if (x.rank() == 0 || indices.dtype() != DataType::kInt64) {
      return make_error(StatusCode::kInvalidArgument, description_, ": X must have rank >= 1 and Y must be int64");
    }
    const int64_t columns = x.shape().back();
    for (int64_t i = 0; i < indices.numel(); ++i) {
      const int64_t index = indices.data<int64_t>()[i];
      if (index < 0 || index >= columns) {
        return make_error(StatusCode::kInvalidArgument, description_, ": index ", index,
                          " is out of range for the last dimension ", columns, " of X");
      }
    }
    Shape out = x.rank() == 1 ? Shape{1} : Shape(x.shape().begin(), x.shape().end() - 1);
    out.push_back(indices.numel());
    outputs.assign(1, OutputDesc{x.dtype(), out});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    const Tensor& x = *inputs[0];
    const int64_t* indices = inputs[1]->data<int64_t>();
    const int64_t count = inputs[1]->numel();
    const int64_t columns = x.shape().back();
    const int64_t rows = columns == 0 ? 0 : x.numel() / columns;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < count; ++j) copy_element(x, r * columns + indices[j], outputs[0], r * count + j);
    }
    return Status::ok();
  }

 private:
  std::string description_;
};

Expected<std::unique_ptr<Kernel>> create_array_feature_extractor(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<ArrayFeatureExtractorKernel>(info.node.describe()));
}

constexpr DataTypeMask kLabelMask = type_mask(LabelTypes{});

const KernelDef kMlKernels[] = {
    {"LabelEncoder", kMlDomain, 1, 1, type_mask(TypeList<std::string, int64_t>{}), 0, create_label_encoder},
    {"LabelEncoder", kMlDomain, 2, kLatestOpset, kLabelMask, 0, create_label_encoder},
    {"Binarizer", kMlDomain, 1, kLatestOpset, type_mask(BinarizerTypes{}), 0, create_binarizer},
    {"CategoryMapper", kMlDomain, 1, kLatestOpset, type_mask(TypeList<std::string, int64_t>{}), 0,
     create_category_mapper},
    {"ArrayFeatureExtractor", kMlDomain, 1, kLatestOpset,
     type_mask(TypeList<float, double, int64_t, int32_t, std::string>{}), 0, create_array_feature_extractor},
};

std::vector<KernelDef> all_ml_kernels() {
  std::vector<KernelDef> rows(std::begin(kMlKernels), std::end(kMlKernels));
  for (const KernelDef& row : ml_tree_ensemble_kernels()) rows.push_back(row);
  for (const KernelDef& row : ml_tree_ensemble_legacy_kernels()) rows.push_back(row);
  for (const KernelDef& row : ml_svm_kernels()) rows.push_back(row);
  for (const KernelDef& row : ml_linear_kernels()) rows.push_back(row);
  for (const KernelDef& row : ml_map_kernels()) rows.push_back(row);
  return rows;
}

}  // namespace

std::span<const KernelDef> ml_kernels() {
  static const std::vector<KernelDef> rows = all_ml_kernels();
  return rows;
}

}  // namespace nxrt::cpu
