// ai.onnx.ml TreeEnsembleRegressor and TreeEnsembleClassifier (opsets 1 and 3: what skl2onnx, onnxmltools and
// hummingbird write for forests and boosting). X [N, F] or [F] (float, double, int64, int32) -> regressor Y [N,
// n_targets] float; classifier Y [N] labels (int64 or string) and Z [N, classes] float.
//
// Nodes are named by (tree id, node id); each tree's root is the first node listed for it, and LEAF nodes carry
// (target or class, weight) entries from the target_* / class_* attributes (entries naming an interior node are
// ignored, as onnxruntime ignores those of old onnxmltools models). A row's scores aggregate the entries of the
// leaf each tree reaches, then base values and the post-transform apply. The finishing rules follow onnxruntime's
// CPU kernels where the specification leaves them open (noted at finish_regression / finish_binary).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/ml/ml_common.h"
#include "ep/cpu/ml/ml_tree_legacy_forest.h"

namespace nxrt::cpu {

namespace {

using ml::Aggregate;
using ml::LeafEntry;
using ml::aggregate_block;
using ml::read_forest;
using ml::strings_of;
using ml::write_score_vector;
using ml::LegacyForest;
using ml::PostTransform;
using ml::Score;

constexpr int64_t kBlockRows = 64;

// Runs `per_block(first_row, count, rows)` over blocks of at most kBlockRows rows of X converted to double (row i
// of the block at rows + i * features), blocks in parallel.
template <class PerBlock>
void for_each_block(const Tensor& x, int64_t rows, int64_t features, ThreadPool& pool, const PerBlock& per_block) {
  visit_dtype<ml::NumericMlTypes>(x.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    pool.parallel_for((rows + kBlockRows - 1) / kBlockRows, 1, [&](int64_t begin, int64_t end) {
      // At least one element: a one-leaf tree's root compares (and ignores) feature 0 even when X has no columns.
      std::vector<double> block(static_cast<size_t>(std::max<int64_t>(1, kBlockRows * features)));
      for (int64_t b = begin; b < end; ++b) {
        const int64_t first = b * kBlockRows, count = std::min(kBlockRows, rows - first);
        for (int64_t i = 0; i < count * features; ++i) block[static_cast<size_t>(i)] = static_cast<double>(in[first * features + i]);
        per_block(first, count, block.data());
      }
    });
  });
}

// X as rows x features, with F above the largest feature id the trees read.
Expected<ml::Matrix> checked_matrix(const Tensor* x, const LegacyForest& forest, const std::string& what) {
  TRY_ASSIGN(const ml::Matrix m, ml::matrix_of(x, what));
  if (m.columns <= forest.max_feature) {
    return make_error(StatusCode::kInvalidArgument, what, ": input X has ", m.columns,
                      " features but the trees read feature ", forest.max_feature);
  }
  return m;
}

// Regression, as onnxruntime's CPU kernel finishes it: a target's aggregate (sum, sum / tree count, min or max of
// the weights of the leaves that reached it) plus its base value when there is one per target, written through the
// post-transform with targets no leaf reached read as 0. One target: only each leaf's first weight counts, a single
// base value adds (an unreached MIN / MAX target scores it) and only PROBIT applies.
class TreeEnsembleRegressorKernel final : public Kernel {
 public:
  TreeEnsembleRegressorKernel(std::string description, LegacyForest forest, Aggregate aggregate)
      : description_(std::move(description)), forest_(std::move(forest)), aggregate_(aggregate) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const ml::Matrix m, checked_matrix(inputs.empty() ? nullptr : inputs[0], forest_, description_));
    outputs.assign(1, OutputDesc{DataType::kFloat32, Shape{m.rows, forest_.outputs}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const ml::Matrix m, checked_matrix(inputs[0], forest_, description_));
    float* y = outputs[0].data<float>();
    const int64_t targets = forest_.outputs;
    for_each_block(*inputs[0], m.rows, m.columns, pool, [&](int64_t first, int64_t count, const double* rows) {
      std::vector<Score> block(static_cast<size_t>(count * targets));
      aggregate_block(forest_, aggregate_, targets == 1, rows, count, m.columns, block.data());
      for (int64_t i = 0; i < count; ++i) {
        finish_regression(std::span<Score>(block).subspan(static_cast<size_t>(i * targets), static_cast<size_t>(targets)),
                          y + (first + i) * targets);
      }
    });
    return Status::ok();
  }

 private:
  void finish_regression(std::span<Score> scores, float* out) const {
    const std::vector<double>& base = forest_.base_values;
    const double trees = static_cast<double>(forest_.roots.size());
    if (scores.size() == 1) {
      Score& score = scores[0];
      const double origin = base.size() == 1 ? base[0] : 0.0;
      const bool extreme = aggregate_ == Aggregate::kMin || aggregate_ == Aggregate::kMax;
      double value = aggregate_ == Aggregate::kAverage ? score.value / trees : score.value;
      value = extreme && !score.set ? origin : value + origin;
      if (forest_.post == PostTransform::kProbit) ml::apply_post_transform(forest_.post, &value, 1);
      out[0] = static_cast<float>(value);
      return;
    }
    const bool per_target = base.size() == scores.size();
    for (size_t t = 0; t < scores.size(); ++t) {
      const double offset = per_target ? base[t] : 0.0;
      Score& score = scores[t];
      if (aggregate_ == Aggregate::kAverage) {
        score.value = score.value / trees + offset;
      } else if (aggregate_ == Aggregate::kSum) {
        score.value += offset;
      } else {
        score.value = offset + score.read();
      }
    }
    write_score_vector(scores, forest_.post, out);
  }

  std::string description_;
  LegacyForest forest_;
  Aggregate aggregate_;
};

// Classification: class scores are sums of the reached leaves' class weights. With more than two classes the
// base values add to (or stand in for) the classes' sums and the label is the first class of highest score among
// those with a score. Two classes follow onnxruntime's binary rules (finish_binary).
class TreeEnsembleClassifierKernel final : public Kernel {
 public:
  TreeEnsembleClassifierKernel(std::string description, LegacyForest forest, std::vector<int64_t> int_labels,
                               std::vector<std::string> string_labels, bool binary, bool all_positive)
      : description_(std::move(description)), forest_(std::move(forest)), int_labels_(std::move(int_labels)),
        string_labels_(std::move(string_labels)), binary_(binary), all_positive_(all_positive) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const ml::Matrix m, checked_matrix(inputs.empty() ? nullptr : inputs[0], forest_, description_));
    const DataType label_type = string_labels_.empty() ? DataType::kInt64 : DataType::kString;
    outputs.assign({OutputDesc{label_type, Shape{m.rows}}, OutputDesc{DataType::kFloat32, Shape{m.rows, forest_.outputs}}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const ml::Matrix m, checked_matrix(inputs[0], forest_, description_));
    const int64_t classes = forest_.outputs;
    float* z = outputs[1].data<float>();
    std::vector<int64_t> labels(static_cast<size_t>(m.rows));
    for_each_block(*inputs[0], m.rows, m.columns, pool, [&](int64_t first, int64_t count, const double* rows) {
      std::vector<Score> block(static_cast<size_t>(count * classes));
      aggregate_block(forest_, Aggregate::kSum, false, rows, count, m.columns, block.data());
      for (int64_t i = 0; i < count; ++i) {
        const std::span<Score> scores =
            std::span<Score>(block).subspan(static_cast<size_t>(i * classes), static_cast<size_t>(classes));
        const int64_t r = first + i;
        labels[static_cast<size_t>(r)] =
            classes > 2 ? finish_multiclass(scores, z + r * classes) : finish_binary(scores, z + r * classes);
      }
    });
    for (int64_t r = 0; r < m.rows; ++r) {
      const int64_t label = labels[static_cast<size_t>(r)];
      if (string_labels_.empty()) {
        outputs[0].data<int64_t>()[r] = label;
      } else {
        outputs[0].data<std::string>()[r] = string_labels_[static_cast<size_t>(label)];
      }
    }
    return Status::ok();
  }

 private:
  // The label value (int labels) or label index (string labels) of class index c.
  int64_t label_of(int64_t c) const { return string_labels_.empty() ? int_labels_[static_cast<size_t>(c)] : c; }

  // More than two classes: a base value sets its class's score (or adds to it); the label is the first class of
  // highest score among the set ones (the first class when none is set).
  int64_t finish_multiclass(std::span<Score> scores, float* out) const {
    const std::vector<double>& base = forest_.base_values;
    for (size_t c = 0; c < std::min(base.size(), scores.size()); ++c) {
      scores[c].value = scores[c].set ? scores[c].value + base[c] : base[c];
      scores[c].set = true;
    }
    int64_t best = -1;
    for (size_t c = 0; c < scores.size(); ++c) {
      if (scores[c].set && (best < 0 || scores[c].value > scores[static_cast<size_t>(best)].value)) {
        best = static_cast<int64_t>(c);
      }
    }
    write_score_vector(scores, forest_.post, out);
    return label_of(std::max<int64_t>(best, 0));
  }

  // Two classes, as onnxruntime's CPU kernel finishes them. Base values: two -> when class 1 has a score it becomes
  // base[1] + class 0's score and class 0 its negation, else each class adds its base; one -> class 0 adds it; none
  // -> as summed. Without a class-1 score (and fewer than two base values) a single score v = class 0's is written
  // as a pair: [logistic(-v), logistic(v)] under LOGISTIC, else [1 - v, v] for a binary model (weights on one class
  // id) with only positive weights and [-v, v] otherwise; [probit(v), 0] under PROBIT, [v, 0] for a two-class model
  // with one base value. The label of a binary model is class 1 when the positive score (class 1's, else class 0's)
  // exceeds 0.5 (positive weights) or 0 (mixed); of a model with weights on both classes, the label value 1 when it
  // is positive, else 0 (onnxruntime writes these two values, or the labels at those indices, whatever the labels).
  int64_t finish_binary(std::span<Score> scores, float* out) const {
    const std::vector<double>& base = forest_.base_values;
    Score& zero = scores[0];
    Score& one = scores[1];
    enum class Pair { kUnset, kComplement, kNegation } pair = Pair::kUnset;
    bool single = false;
    if (base.size() == 2) {
      if (one.set) {
        one.value = base[1] + zero.value;
        zero.value = -one.value;
      } else {
        one.value += base[1];
        zero.value += base[0];
      }
    } else if (base.size() == 1) {
      zero.value += base[0];
      single = !one.set;
    } else if (base.empty()) {
      pair = Pair::kNegation;
      single = !one.set;
    }
    const double positive = !single && one.set ? one.value : zero.read();
    int64_t label;
    if (binary_) {
      const bool is_one = all_positive_ ? positive > 0.5 : positive > 0;
      pair = all_positive_ ? Pair::kComplement : Pair::kNegation;
      label = label_of(is_one ? 1 : 0);
    } else {
      label = positive > 0 ? 1 : 0;  // the value 1 or 0, or the label at index 1 or 0
    }
    if (!single) {
      write_score_vector(scores, forest_.post, out);
      return label;
    }
    double v = zero.read();
    if (forest_.post == PostTransform::kProbit) {
      ml::apply_post_transform(forest_.post, &v, 1);
      out[0] = static_cast<float>(v);
      out[1] = 0.0f;
    } else if (pair != Pair::kUnset && forest_.post == PostTransform::kLogistic) {
      out[0] = static_cast<float>(1.0 / (1.0 + std::exp(v)));
      out[1] = static_cast<float>(1.0 / (1.0 + std::exp(-v)));
    } else if (pair == Pair::kComplement) {
      out[0] = static_cast<float>(1.0 - v);
      out[1] = static_cast<float>(v);
    } else if (pair == Pair::kNegation) {
      out[0] = static_cast<float>(-v);
      out[1] = static_cast<float>(v);
    } else {
      out[0] = static_cast<float>(v);
      out[1] = 0.0f;
    }
    return label;
  }

  std::string description_;
  LegacyForest forest_;
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  bool binary_;
  bool all_positive_;
};

Expected<std::unique_ptr<Kernel>> create_tree_ensemble_regressor(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const int64_t targets, node.attr_int("n_targets", 0));
  if (targets < 1) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": n_targets must be at least 1, not ", targets);
  }
  TRY_ASSIGN(const std::string aggregate_name, node.attr_string("aggregate_function", "SUM"));
  static const std::map<std::string, Aggregate> kAggregates = {
      {"AVERAGE", Aggregate::kAverage}, {"SUM", Aggregate::kSum}, {"MIN", Aggregate::kMin}, {"MAX", Aggregate::kMax}};
  const auto aggregate = kAggregates.find(aggregate_name);
  if (aggregate == kAggregates.end()) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": aggregate_function '", aggregate_name,
                      "' is not AVERAGE, SUM, MIN or MAX");
  }
  TRY_ASSIGN(LegacyForest forest, read_forest(node, "target_", "target_ids", targets));
  return std::unique_ptr<Kernel>(
      std::make_unique<TreeEnsembleRegressorKernel>(node.describe(), std::move(forest), aggregate->second));
}

Expected<std::unique_ptr<Kernel>> create_tree_ensemble_classifier(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(std::vector<int64_t> int_labels, node.attr_ints("classlabels_int64s", {}));
  TRY_ASSIGN(std::vector<std::string> string_labels, strings_of(node, "classlabels_strings"));
  if (int_labels.empty() == string_labels.empty()) {
    return make_error(StatusCode::kInvalidGraph, node.describe(),
                      ": exactly one of classlabels_int64s and classlabels_strings must be set");
  }
  const int64_t classes = static_cast<int64_t>(std::max(int_labels.size(), string_labels.size()));
  if (classes < 2) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": a classifier needs at least two class labels");
  }
  TRY_ASSIGN(LegacyForest forest, read_forest(node, "class_", "class_ids", classes));
  // A binary model: two labels and weights on a single class id.
  std::set<int64_t> weighted;
  bool all_positive = true;
  for (const LeafEntry& entry : forest.entries) {
    weighted.insert(entry.target);
    all_positive = all_positive && entry.weight >= 0;
  }
  const bool binary = classes == 2 && weighted.size() == 1;
  return std::unique_ptr<Kernel>(std::make_unique<TreeEnsembleClassifierKernel>(
      node.describe(), std::move(forest), std::move(int_labels), std::move(string_labels), binary, all_positive));
}

using ForestInputs = TypeList<float, double, int64_t, int32_t>;

// Opsets 1 to 4: ai.onnx.ml opset 5 deprecates both ops (TreeEnsemble replaces them; onnxruntime refuses them there).
const KernelDef kLegacyTreeKernels[] = {
    {"TreeEnsembleRegressor", ml::kMlDomain, 1, 4, type_mask(ForestInputs{}), 0, create_tree_ensemble_regressor},
    {"TreeEnsembleClassifier", ml::kMlDomain, 1, 4, type_mask(ForestInputs{}), 0, create_tree_ensemble_classifier},
};

}  // namespace

std::span<const KernelDef> ml_tree_ensemble_legacy_kernels() { return kLegacyTreeKernels; }

}  // namespace nxrt::cpu
