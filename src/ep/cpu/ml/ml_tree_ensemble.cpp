// ai.onnx.ml TreeEnsemble (opset 5): X [N, F] -> Y [N, n_targets]. Each tree walks from its root; a node's
// true/false branch is an interior node index or, when the matching *_leafs flag is set, a leaf index. A root
// whose both branches are the same leaf is a one-leaf tree. Leaves add their weight to their target, combined
// by aggregate_function; post_transform then maps each row.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/ml/ml_common.h"
#include "ep/cpu/ml/ml_tree_forest.h"

namespace nxrt::cpu {

namespace {

enum class Aggregate { kAverage = 0, kSum, kMin, kMax };
using ml::BranchMode;
using ml::PostTransform;
using ml::TreeNode;

struct Forest {
  std::vector<TreeNode> nodes;
  std::vector<int64_t> roots;
  std::vector<double> leaf_weights;
  std::vector<int64_t> leaf_targets;
  int64_t targets = 1;
  int64_t max_feature = -1;
  Aggregate aggregate = Aggregate::kSum;
  PostTransform post = PostTransform::kNone;
};

using TreeTypes = TypeList<float, double, Float16>;

class TreeEnsembleKernel final : public Kernel {
 public:
  TreeEnsembleKernel(std::string description, Forest forest)
      : description_(std::move(description)), forest_(std::move(forest)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr || !type_list_contains(TreeTypes{}, inputs[0]->dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X must be float, double or float16");
    }
    const Tensor& x = *inputs[0];
    if (x.rank() != 2 || x.shape()[1] <= forest_.max_feature) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X shape ", shape_to_string(x.shape()),
                        " must be [N, F] with F > ", forest_.max_feature);
    }
    outputs.assign(1, OutputDesc{x.dtype(), Shape{x.shape()[0], forest_.targets}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const int64_t rows = x.shape()[0];
    const int64_t features = x.shape()[1];
    visit_dtype<TreeTypes>(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      T* out = outputs[0].data<T>();
      pool.parallel_for(rows, 16, [&](int64_t begin, int64_t end) {
        std::vector<double> row(static_cast<size_t>(features));
        std::vector<double> result(static_cast<size_t>(forest_.targets));
        for (int64_t r = begin; r < end; ++r) {
          for (int64_t f = 0; f < features; ++f) row[static_cast<size_t>(f)] = static_cast<double>(in[r * features + f]);
          score(row.data(), result);
          for (int64_t t = 0; t < forest_.targets; ++t) out[r * forest_.targets + t] = static_cast<T>(result[t]);
        }
      });
    });
    return Status::ok();
  }

 private:
  void score(const double* row, std::vector<double>& result) const {
    const Aggregate aggregate = forest_.aggregate;
    const double start = aggregate == Aggregate::kMin   ? std::numeric_limits<double>::infinity()
                         : aggregate == Aggregate::kMax ? -std::numeric_limits<double>::infinity()
                                                        : 0.0;
    std::fill(result.begin(), result.end(), start);
    std::vector<bool> touched(result.size(), false);
    for (int64_t root : forest_.roots) {
      const size_t leaf = static_cast<size_t>(ml::walk_to_leaf(forest_.nodes, root, row));
      const size_t target = static_cast<size_t>(forest_.leaf_targets[leaf]);
      const double w = forest_.leaf_weights[leaf];
      touched[target] = true;
      if (aggregate == Aggregate::kMin) {
        result[target] = std::min(result[target], w);
      } else if (aggregate == Aggregate::kMax) {
        result[target] = std::max(result[target], w);
      } else {
        result[target] += w;
      }
    }
    for (size_t t = 0; t < result.size(); ++t) {
      if (!touched[t]) result[t] = 0.0;
      if (aggregate == Aggregate::kAverage && !forest_.roots.empty()) {
        result[t] /= static_cast<double>(forest_.roots.size());
      }
    }
    ml::apply_post_transform(forest_.post, result.data(), static_cast<int64_t>(result.size()));
  }

  std::string description_;
  Forest forest_;
};

Expected<std::vector<double>> tensor_values(const graph::Node& node, const std::string& name, bool required) {
  const graph::Attribute* a = node.find_attribute(name);
  if (a == nullptr) {
    if (!required) return std::vector<double>{};
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": required attribute '", name, "' is missing");
  }
  std::vector<double> values;
  const bool ok = visit_dtype<TypeList<float, double, Float16, uint8_t>>(a->t.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < a->t.numel(); ++i) values.push_back(static_cast<double>(a->t.data<T>()[i]));
  });
  if (!ok) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute ", name, " has unsupported type ",
                      data_type_name(a->t.dtype()));
  }
  return values;
}

Status check_forest(const Forest& forest, const std::string& what) {
  TRY(ml::check_tree_links(forest.nodes, forest.roots, static_cast<int64_t>(forest.leaf_weights.size()), what));
  for (int64_t target : forest.leaf_targets) {
    if (target < 0 || target >= forest.targets) {
      return make_error(StatusCode::kInvalidGraph, what, ": leaf target id ", target, " is outside [0, ",
                        forest.targets, ")");
    }
  }
  return Status::ok();
}

Expected<std::unique_ptr<Kernel>> create_tree_ensemble(const KernelInfo& info) {
  const graph::Node& node = info.node;
  const std::string what = node.describe();
  TRY_ASSIGN(const std::vector<int64_t> features, node.attr_ints("nodes_featureids", {}));
  TRY_ASSIGN(const std::vector<int64_t> true_ids, node.attr_ints("nodes_truenodeids", {}));
  TRY_ASSIGN(const std::vector<int64_t> false_ids, node.attr_ints("nodes_falsenodeids", {}));
  TRY_ASSIGN(const std::vector<int64_t> true_leafs, node.attr_ints("nodes_trueleafs", {}));
  TRY_ASSIGN(const std::vector<int64_t> false_leafs, node.attr_ints("nodes_falseleafs", {}));
  TRY_ASSIGN(const std::vector<int64_t> missing, node.attr_ints("nodes_missing_value_tracks_true", {}));
  TRY_ASSIGN(const std::vector<double> splits, tensor_values(node, "nodes_splits", true));
  TRY_ASSIGN(const std::vector<double> modes, tensor_values(node, "nodes_modes", true));
  TRY_ASSIGN(const std::vector<double> members, tensor_values(node, "membership_values", false));
  Forest forest;
  TRY_ASSIGN(forest.leaf_weights, tensor_values(node, "leaf_weights", true));
  TRY_ASSIGN(forest.leaf_targets, node.attr_ints("leaf_targetids", {}));
  TRY_ASSIGN(forest.roots, node.attr_ints("tree_roots", {}));
  TRY_ASSIGN(forest.targets, node.attr_int("n_targets", 1));
  TRY_ASSIGN(const int64_t aggregate, node.attr_int("aggregate_function", 1));
  TRY_ASSIGN(const int64_t post, node.attr_int("post_transform", 0));
  const size_t n = features.size();
  if (true_ids.size() != n || false_ids.size() != n || true_leafs.size() != n || false_leafs.size() != n ||
      splits.size() != n || modes.size() != n || (!missing.empty() && missing.size() != n) ||
      forest.leaf_targets.size() != forest.leaf_weights.size() || forest.targets < 1 || aggregate < 0 ||
      aggregate > 3 || post < 0 || post > 4) {
    return make_error(StatusCode::kInvalidGraph, what,
                      ": nodes_* / leaf_* attributes differ in length or n_targets, aggregate_function or "
                      "post_transform is invalid");
  }
  forest.aggregate = static_cast<Aggregate>(aggregate);
  forest.post = static_cast<PostTransform>(post);
  size_t member_at = 0;
  for (size_t i = 0; i < n; ++i) {
    TreeNode t;
    // Written as a comparison that NaN fails too (a float tensor can carry the modes).
    if (!(modes[i] >= 0 && modes[i] <= 6) || modes[i] != std::floor(modes[i])) {
      return make_error(StatusCode::kInvalidGraph, what, ": node mode ", modes[i], " is not one of 0..6");
    }
    t.mode = static_cast<BranchMode>(static_cast<int>(modes[i]));
    t.feature = features[i];
    t.split = splits[i];
    t.missing_true = !missing.empty() && missing[i] != 0;
    t.true_id = true_ids[i];
    t.false_id = false_ids[i];
    t.true_leaf = true_leafs[i] != 0;
    t.false_leaf = false_leafs[i] != 0;
    if (t.mode == BranchMode::kMember) {
      while (member_at < members.size() && !std::isnan(members[member_at])) t.members.push_back(members[member_at++]);
      ++member_at;  // the NaN delimiter (the last set may end the list instead)
    }
    forest.max_feature = std::max(forest.max_feature, t.feature);
    forest.nodes.push_back(std::move(t));
  }
  TRY(check_forest(forest, what));
  return std::unique_ptr<Kernel>(std::make_unique<TreeEnsembleKernel>(what, std::move(forest)));
}

const KernelDef kTreeKernels[] = {
    {"TreeEnsemble", "ai.onnx.ml", 5, kLatestOpset, type_mask(TreeTypes{}), 0, create_tree_ensemble},
};

}  // namespace

std::span<const KernelDef> ml_tree_ensemble_kernels() { return kTreeKernels; }

}  // namespace nxrt::cpu
