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
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/ml/ml_common.h"
#include "ep/cpu/ml/ml_tree_forest.h"

namespace nxrt::cpu {

namespace {

using ml::BranchMode;
using ml::PostTransform;
using ml::TreeNode;

enum class Aggregate { kAverage, kSum, kMin, kMax };

struct LeafEntry {
  int64_t target = 0;
  double weight = 0;
};

// A node as the walk reads it (24 bytes, so that a forest stays in cache across a block of rows). Interior nodes
// come first, then one node per leaf that branches to itself both ways: a walk of a tree's depth in steps ends on
// its leaf whatever the path length, with no test for leaves on the way.
struct WalkNode {
  double split = 0;
  int32_t feature = 0;
  int32_t next[2] = {0, 0};  // [false branch, true branch]: indexed by the comparison, no data-dependent jump
  BranchMode mode = BranchMode::kLeq;
  bool missing_true = false;
};

struct LegacyForest {
  std::vector<TreeNode> nodes;
  // Built last by read_forest: nodes and leaves as WalkNodes (leaf l at interior + l), each tree's depth in steps.
  std::vector<WalkNode> walk;
  std::vector<int32_t> depths;
  int64_t interior = 0;
  // Every interior node's mode when they share one (converters write BRANCH_LEQ or BRANCH_LT throughout), and
  // whether any node tracks missing values: the walk is then compiled for that mode alone.
  std::optional<BranchMode> uniform_mode;
  bool any_missing = false;
  std::vector<int64_t> roots;
  std::vector<int64_t> leaf_begin;  // entries of leaf l: [leaf_begin[l], leaf_begin[l + 1])
  std::vector<LeafEntry> entries;
  int64_t outputs = 1;  // targets or classes
  int64_t max_feature = -1;
  std::vector<double> base_values;
  PostTransform post = PostTransform::kNone;
};

// A list attribute given as floats (`name`) or, from opset 3, as a float or double tensor (`name`_as_tensor).
Expected<std::vector<double>> floats_or_tensor(const graph::Node& node, const std::string& name) {
  std::vector<double> values;
  if (const graph::Attribute* a = node.find_attribute(name + "_as_tensor")) {
    const bool ok = visit_dtype<TypeList<float, double>>(a->t.dtype(), [&]<class T>() {
      for (int64_t i = 0; i < a->t.numel(); ++i) values.push_back(static_cast<double>(a->t.data<T>()[i]));
    });
    if (!ok) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute ", name, "_as_tensor must be float or "
                        "double, not ", data_type_name(a->t.dtype()));
    }
    if (node.find_attribute(name) != nullptr) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": set only one of ", name, " and ", name,
                        "_as_tensor");
    }
    return values;
  }
  TRY_ASSIGN(const std::vector<float> floats, node.attr_floats(name, {}));
  return std::vector<double>(floats.begin(), floats.end());
}

Expected<std::vector<std::string>> strings_of(const graph::Node& node, const std::string& name) {
  const graph::Attribute* a = node.find_attribute(name);
  if (a == nullptr) return std::vector<std::string>{};
  if (a->type != graph::Attribute::Type::kStrings) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute ", name, " must be a list of strings");
  }
  return a->strings;
}

// Builds the forest from the nodes_* attributes and the (prefix)treeids / nodeids / ids / weights entries.
Expected<LegacyForest> read_forest(const graph::Node& node, const std::string& prefix, const std::string& ids_name,
                                   int64_t outputs) {
  const std::string what = node.describe();
  TRY_ASSIGN(const std::vector<int64_t> tree_ids, node.attr_ints("nodes_treeids", {}));
  TRY_ASSIGN(const std::vector<int64_t> node_ids, node.attr_ints("nodes_nodeids", {}));
  TRY_ASSIGN(const std::vector<int64_t> features, node.attr_ints("nodes_featureids", {}));
  TRY_ASSIGN(const std::vector<int64_t> true_ids, node.attr_ints("nodes_truenodeids", {}));
  TRY_ASSIGN(const std::vector<int64_t> false_ids, node.attr_ints("nodes_falsenodeids", {}));
  TRY_ASSIGN(const std::vector<int64_t> missing, node.attr_ints("nodes_missing_value_tracks_true", {}));
  TRY_ASSIGN(const std::vector<std::string> modes, strings_of(node, "nodes_modes"));
  TRY_ASSIGN(const std::vector<double> values, floats_or_tensor(node, "nodes_values"));
  TRY_ASSIGN(const std::vector<int64_t> entry_trees, node.attr_ints(prefix + "treeids", {}));
  TRY_ASSIGN(const std::vector<int64_t> entry_nodes, node.attr_ints(prefix + "nodeids", {}));
  TRY_ASSIGN(const std::vector<int64_t> entry_ids, node.attr_ints(ids_name, {}));
  TRY_ASSIGN(const std::vector<double> entry_weights, floats_or_tensor(node, prefix + "weights"));
  const size_t n = tree_ids.size();
  if (n == 0 || node_ids.size() != n || features.size() != n || true_ids.size() != n || false_ids.size() != n ||
      modes.size() != n || values.size() != n || missing.size() > n || entry_nodes.size() != entry_trees.size() ||
      entry_ids.size() != entry_trees.size() || entry_weights.size() != entry_trees.size()) {
    return make_error(StatusCode::kInvalidGraph, what, ": the nodes_* attributes (", n, " nodes) or the ", prefix,
                      "* attributes differ in length");
  }
  LegacyForest forest;
  forest.outputs = outputs;
  std::map<std::pair<int64_t, int64_t>, size_t> position;
  std::vector<int64_t> index(n);  // interior node index or leaf index of each listed node
  std::vector<bool> is_leaf(n);
  int64_t interior = 0, leaves = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!position.emplace(std::make_pair(tree_ids[i], node_ids[i]), i).second) {
      return make_error(StatusCode::kInvalidGraph, what, ": node ", node_ids[i], " of tree ", tree_ids[i],
                        " is listed twice");
    }
    is_leaf[i] = modes[i] == "LEAF";
    index[i] = is_leaf[i] ? leaves++ : interior++;
  }
  const auto find = [&](int64_t tree, int64_t id) -> Expected<size_t> {
    const auto at = position.find({tree, id});
    if (at == position.end()) {
      return make_error(StatusCode::kInvalidGraph, what, ": tree ", tree, " has no node ", id);
    }
    return at->second;
  };
  static const std::map<std::string, BranchMode> kModes = {
      {"BRANCH_LEQ", BranchMode::kLeq}, {"BRANCH_LT", BranchMode::kLt}, {"BRANCH_GTE", BranchMode::kGte},
      {"BRANCH_GT", BranchMode::kGt},   {"BRANCH_EQ", BranchMode::kEq}, {"BRANCH_NEQ", BranchMode::kNeq}};
  for (size_t i = 0; i < n; ++i) {
    if (is_leaf[i]) continue;
    const auto mode = kModes.find(modes[i]);
    if (mode == kModes.end()) {
      return make_error(StatusCode::kInvalidGraph, what, ": node mode '", modes[i], "' is not LEAF or BRANCH_*");
    }
    TreeNode t;
    t.mode = mode->second;
    t.feature = features[i];
    t.split = values[i];
    t.missing_true = i < missing.size() && missing[i] == 1;
    TRY_ASSIGN(const size_t on_true, find(tree_ids[i], true_ids[i]));
    TRY_ASSIGN(const size_t on_false, find(tree_ids[i], false_ids[i]));
    if (on_true == i || on_false == i) {
      return make_error(StatusCode::kInvalidGraph, what, ": node ", node_ids[i], " of tree ", tree_ids[i],
                        " branches to itself");
    }
    t.true_id = index[on_true];
    t.true_leaf = is_leaf[on_true];
    t.false_id = index[on_false];
    t.false_leaf = is_leaf[on_false];
    forest.max_feature = std::max(forest.max_feature, t.feature);
    forest.nodes.push_back(std::move(t));
  }
  // Roots: the first node listed for each run of one tree id; a leaf root becomes a one-leaf tree.
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && tree_ids[i] == tree_ids[i - 1]) continue;
    if (!is_leaf[i]) {
      forest.roots.push_back(index[i]);
      continue;
    }
    TreeNode one_leaf;
    one_leaf.true_id = one_leaf.false_id = index[i];
    one_leaf.true_leaf = one_leaf.false_leaf = true;
    forest.roots.push_back(static_cast<int64_t>(forest.nodes.size()));
    forest.nodes.push_back(one_leaf);
  }
  // Entries in (tree, node) order, as onnxruntime sorts them; those of interior nodes are ignored.
  std::vector<std::vector<LeafEntry>> per_leaf(static_cast<size_t>(leaves));
  std::vector<size_t> order(entry_trees.size());
  for (size_t e = 0; e < order.size(); ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(entry_trees[a], entry_nodes[a]) < std::make_pair(entry_trees[b], entry_nodes[b]);
  });
  for (size_t e : order) {
    TRY_ASSIGN(const size_t at, find(entry_trees[e], entry_nodes[e]));
    if (!is_leaf[at]) continue;
    if (entry_ids[e] < 0 || entry_ids[e] >= outputs) {
      return make_error(StatusCode::kInvalidGraph, what, ": ", ids_name, " value ", entry_ids[e], " is outside [0, ",
                        outputs, ")");
    }
    per_leaf[static_cast<size_t>(index[at])].push_back({entry_ids[e], entry_weights[e]});
  }
  forest.leaf_begin.push_back(0);
  for (size_t l = 0; l < per_leaf.size(); ++l) {  // a leaf without entries adds nothing
    forest.entries.insert(forest.entries.end(), per_leaf[l].begin(), per_leaf[l].end());
    forest.leaf_begin.push_back(static_cast<int64_t>(forest.entries.size()));
  }
  TRY(ml::check_tree_links(forest.nodes, forest.roots, leaves, what));
  if (static_cast<int64_t>(forest.nodes.size()) + leaves > std::numeric_limits<int32_t>::max() ||
      forest.max_feature > std::numeric_limits<int32_t>::max()) {
    return make_error(StatusCode::kInvalidGraph, what, ": more than 2^31 nodes, leaves or features");
  }
  forest.interior = static_cast<int64_t>(forest.nodes.size());
  const auto walk_id = [&](int64_t id, bool leaf) { return static_cast<int32_t>(leaf ? forest.interior + id : id); };
  for (const TreeNode& t : forest.nodes) {
    forest.walk.push_back({t.split, static_cast<int32_t>(t.feature),
                           {walk_id(t.false_id, t.false_leaf), walk_id(t.true_id, t.true_leaf)}, t.mode,
                           t.missing_true});
  }
  for (const TreeNode& t : forest.nodes) forest.any_missing = forest.any_missing || t.missing_true;
  if (!forest.nodes.empty() &&
      std::all_of(forest.nodes.begin(), forest.nodes.end(), [&](const TreeNode& t) { return t.mode == forest.nodes[0].mode; })) {
    forest.uniform_mode = forest.nodes[0].mode;
  }
  for (int64_t l = 0; l < leaves; ++l) {  // a leaf's mode is the uniform one: any comparison stays on the leaf
    const int32_t self = walk_id(l, true);
    forest.walk.push_back({0.0, 0, {self, self}, forest.uniform_mode.value_or(BranchMode::kLeq), false});
  }
  for (int64_t root : forest.roots) {  // the longest path in steps (acyclic: checked above)
    int32_t depth = 0;
    std::vector<std::pair<int64_t, int32_t>> stack{{root, 1}};
    while (!stack.empty()) {
      const auto [at, steps] = stack.back();
      stack.pop_back();
      depth = std::max(depth, steps);
      const TreeNode& t = forest.nodes[static_cast<size_t>(at)];
      if (!t.true_leaf) stack.emplace_back(t.true_id, steps + 1);
      if (!t.false_leaf) stack.emplace_back(t.false_id, steps + 1);
    }
    forest.depths.push_back(depth);
  }
  TRY_ASSIGN(forest.base_values, floats_or_tensor(node, "base_values"));
  TRY_ASSIGN(forest.post, ml::post_transform_of(node));
  return forest;
}

// One output's score and whether a leaf (or, for classes, a base value) gave it one. onnxruntime's CPU kernel reads
// an unset score as 0 wherever it transforms or writes scores, even after a base value was added to it.
struct Score {
  double value = 0;
  bool set = false;
  double read() const { return set ? value : 0.0; }
};

// Whether x takes the node's true branch under `mode` (the rules of ml::goes_true).
template <BranchMode kMode>
inline bool compares_true(double x, double split) {
  if constexpr (kMode == BranchMode::kLeq) return x <= split;
  if constexpr (kMode == BranchMode::kLt) return x < split;
  if constexpr (kMode == BranchMode::kGte) return x >= split;
  if constexpr (kMode == BranchMode::kGt) return x > split;
  if constexpr (kMode == BranchMode::kEq) return x == split;
  return x != split;
}

inline bool compares_true(BranchMode mode, double x, double split) {
  switch (mode) {
    case BranchMode::kLeq: return compares_true<BranchMode::kLeq>(x, split);
    case BranchMode::kLt: return compares_true<BranchMode::kLt>(x, split);
    case BranchMode::kGte: return compares_true<BranchMode::kGte>(x, split);
    case BranchMode::kGt: return compares_true<BranchMode::kGt>(x, split);
    case BranchMode::kEq: return compares_true<BranchMode::kEq>(x, split);
    default: return compares_true<BranchMode::kNeq>(x, split);
  }
}

// leaves[i] = the leaf tree `tree` leads row i of `rows` to, for R rows walked side by side (independent chains of
// loads hide each other's latency). kMode: the forest's uniform mode, or kMember for mixed modes (read per node);
// kMissing: some node tracks missing values.
template <int R, BranchMode kMode, bool kMissing>
void walk_rows(const LegacyForest& forest, size_t tree, const double* rows, int64_t features, int64_t* leaves) {
  const WalkNode* nodes = forest.walk.data();
  int32_t at[R];
  for (int r = 0; r < R; ++r) at[r] = static_cast<int32_t>(forest.roots[tree]);
  for (int32_t step = 0; step < forest.depths[tree]; ++step) {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const WalkNode& node = nodes[at[r]];
      const double x = rows[r * features + node.feature];
      bool take;
      if constexpr (kMode == BranchMode::kMember) {
        take = compares_true(node.mode, x, node.split);
      } else {
        take = compares_true<kMode>(x, node.split);
      }
      if constexpr (kMissing) take = take || (node.missing_true && std::isnan(x));
      at[r] = node.next[take ? 1 : 0];
    }
  }
  for (int r = 0; r < R; ++r) leaves[r] = at[r] - forest.interior;
}

// leaves[t] = the leaf tree first_tree + t leads `row` to, for T trees walked side by side (a single row's walk:
// the trees' chains of loads overlap). Walks the deepest tree's depth; shallower trees rest on their leaf.
template <int T, BranchMode kMode, bool kMissing>
void walk_trees(const LegacyForest& forest, size_t first_tree, const double* row, int64_t* leaves) {
  const WalkNode* nodes = forest.walk.data();
  int32_t at[T];
  int32_t depth = 0;
  for (int t = 0; t < T; ++t) {
    at[t] = static_cast<int32_t>(forest.roots[first_tree + t]);
    depth = std::max(depth, forest.depths[first_tree + t]);
  }
  for (int32_t step = 0; step < depth; ++step) {
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const WalkNode& node = nodes[at[t]];
      const double x = row[node.feature];
      bool take;
      if constexpr (kMode == BranchMode::kMember) {
        take = compares_true(node.mode, x, node.split);
      } else {
        take = compares_true<kMode>(x, node.split);
      }
      if constexpr (kMissing) take = take || (node.missing_true && std::isnan(x));
      at[t] = node.next[take ? 1 : 0];
    }
  }
  for (int t = 0; t < T; ++t) leaves[t] = at[t] - forest.interior;
}

using WalkFn = void (*)(const LegacyForest&, size_t, const double*, int64_t, int64_t*);
using TreesFn = void (*)(const LegacyForest&, size_t, const double*, int64_t*);

// The walks of groups of kSide rows through one tree, and of one row through kSide trees, for the forest's mode
// and missing-value tracks.
constexpr int kSide = 8;
struct Walks {
  WalkFn rows;
  TreesFn trees;
};
template <BranchMode kMode>
Walks walks_for(bool missing) {
  return missing ? Walks{walk_rows<kSide, kMode, true>, walk_trees<kSide, kMode, true>}
                 : Walks{walk_rows<kSide, kMode, false>, walk_trees<kSide, kMode, false>};
}

Walks walks_of(const LegacyForest& forest) {
  switch (forest.uniform_mode.value_or(BranchMode::kMember)) {
    case BranchMode::kLeq: return walks_for<BranchMode::kLeq>(forest.any_missing);
    case BranchMode::kLt: return walks_for<BranchMode::kLt>(forest.any_missing);
    case BranchMode::kGte: return walks_for<BranchMode::kGte>(forest.any_missing);
    case BranchMode::kGt: return walks_for<BranchMode::kGt>(forest.any_missing);
    case BranchMode::kEq: return walks_for<BranchMode::kEq>(forest.any_missing);
    case BranchMode::kNeq: return walks_for<BranchMode::kNeq>(forest.any_missing);
    default: return walks_for<BranchMode::kMember>(forest.any_missing);
  }
}

// scores[i * outputs + o] for the `count` rows of `rows` (each `features` doubles): the entries of the leaf every
// tree reaches, added (or their min / max taken) tree by tree, so that a tree's nodes are read once per block.
// `first_only`: only each leaf's first entry counts, and a sum does not mark the score set (onnxruntime's
// single-target path).
void aggregate_block(const LegacyForest& forest, Aggregate aggregate, bool first_only, const double* rows,
                     int64_t count, int64_t features, Score* scores) {
  std::fill(scores, scores + count * forest.outputs, Score{});
  const Walks walks = walks_of(forest);
  const auto add_leaf = [&](int64_t row, int64_t leaf_index) {
    const size_t leaf = static_cast<size_t>(leaf_index);
    const int64_t end = first_only ? std::min(forest.leaf_begin[leaf] + 1, forest.leaf_begin[leaf + 1])
                                   : forest.leaf_begin[leaf + 1];
    for (int64_t e = forest.leaf_begin[leaf]; e < end; ++e) {
      const LeafEntry& entry = forest.entries[static_cast<size_t>(e)];
      Score& score = scores[row * forest.outputs + entry.target];
      if (aggregate == Aggregate::kMin) {
        score.value = score.set ? std::min(score.value, entry.weight) : entry.weight;
      } else if (aggregate == Aggregate::kMax) {
        score.value = score.set ? std::max(score.value, entry.weight) : entry.weight;
      } else {
        score.value += entry.weight;
        if (first_only) continue;
      }
      score.set = true;
    }
  };
  int64_t leaves[kSide];
  const int64_t grouped = count / kSide * kSide;
  const size_t trees = forest.roots.size();
  // Trees in order for every row, so that each row's scores add up in the same order in both loops.
  for (size_t tree = 0; tree < trees; ++tree) {
    for (int64_t i0 = 0; i0 < grouped; i0 += kSide) {
      walks.rows(forest, tree, rows + i0 * features, features, leaves);
      for (int64_t r = 0; r < kSide; ++r) add_leaf(i0 + r, leaves[r]);
    }
  }
  for (int64_t i = grouped; i < count; ++i) {
    const double* row = rows + i * features;
    size_t tree = 0;
    for (; tree + kSide <= trees; tree += kSide) {
      walks.trees(forest, tree, row, leaves);
      for (int t = 0; t < kSide; ++t) add_leaf(i, leaves[t]);
    }
    for (; tree < trees; ++tree) add_leaf(i, ml::walk_to_leaf(forest.nodes, forest.roots[tree], row));
  }
}

// Writes n >= 2 scores through the post-transform (unset scores read as 0). SOFTMAX_ZERO keeps (near-)zero scores
// near zero and, as onnxruntime, normalizes by the other scores' sum only (NaN when every score is zero).
void write_score_vector(const std::vector<Score>& scores, PostTransform post, float* out) {
  std::vector<double> values(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) values[i] = scores[i].read();
  if (post == PostTransform::kSoftmaxZero) {
    const double top = *std::max_element(values.begin(), values.end());
    double sum = 0;
    for (double& v : values) {
      if (std::abs(v) > 1e-7) {
        v = std::exp(v - top);
        sum += v;
      } else {
        v *= std::exp(-top);
      }
    }
    for (double& v : values) v /= sum;
  } else {
    ml::apply_post_transform(post, values.data(), static_cast<int64_t>(values.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<float>(values[i]);
}

constexpr int64_t kBlockRows = 64;

// Runs `per_block(first_row, count, rows)` over blocks of at most kBlockRows rows of X converted to double (row i
// of the block at rows + i * features), blocks in parallel.
template <class PerBlock>
void for_each_block(const Tensor& x, int64_t rows, int64_t features, ThreadPool& pool, const PerBlock& per_block) {
  visit_dtype<ml::NumericMlTypes>(x.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    pool.parallel_for((rows + kBlockRows - 1) / kBlockRows, 1, [&](int64_t begin, int64_t end) {
      std::vector<double> block(static_cast<size_t>(kBlockRows * features));
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
      std::vector<Score> scores(static_cast<size_t>(targets));
      for (int64_t i = 0; i < count; ++i) {
        std::copy_n(block.begin() + i * targets, targets, scores.begin());
        finish_regression(scores, y + (first + i) * targets);
      }
    });
    return Status::ok();
  }

 private:
  void finish_regression(std::vector<Score>& scores, float* out) const {
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
      std::vector<Score> scores(static_cast<size_t>(classes));
      for (int64_t i = 0; i < count; ++i) {
        std::copy_n(block.begin() + i * classes, classes, scores.begin());
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
  int64_t finish_multiclass(std::vector<Score>& scores, float* out) const {
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
  int64_t finish_binary(std::vector<Score>& scores, float* out) const {
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

const KernelDef kLegacyTreeKernels[] = {
    {"TreeEnsembleRegressor", ml::kMlDomain, 1, kLatestOpset, type_mask(ForestInputs{}), 0,
     create_tree_ensemble_regressor},
    {"TreeEnsembleClassifier", ml::kMlDomain, 1, kLatestOpset, type_mask(ForestInputs{}), 0,
     create_tree_ensemble_classifier},
};

}  // namespace

std::span<const KernelDef> ml_tree_ensemble_legacy_kernels() { return kLegacyTreeKernels; }

}  // namespace nxrt::cpu
