// Reading and walking the forests of TreeEnsembleRegressor / TreeEnsembleClassifier (contracts in
// ml_tree_legacy_forest.h).
#include "ep/cpu/ml/ml_tree_legacy_forest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace nxrt::cpu::ml {

namespace {

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

// The node one step below `node` for `row`. kMode: the forest's uniform mode, or kMember for mixed modes (read per
// node); kMissing: some node tracks missing values.
template <BranchMode kMode, bool kMissing>
inline int32_t step_from(const WalkNode& node, const double* row) {
  const double x = row[node.feature];
  bool take;
  if constexpr (kMode == BranchMode::kMember) {
    take = compares_true(node.mode, x, node.split);
  } else {
    take = compares_true<kMode>(x, node.split);
  }
  // Bitwise, not ||: a short-circuit is a branch on the comparison, which the data decides (mispredicted half the
  // time; a LightGBM forest with missing-value tracks walked 4x slower than one without).
  if constexpr (kMissing) take = static_cast<bool>(static_cast<int>(take) | (static_cast<int>(node.missing_true) &
                                                                            static_cast<int>(x != x)));
  return node.next[static_cast<int>(take)];
}

// Walks side by side stop early once every walk rests on a leaf, checked every kLeafCheckSteps steps: trees grown
// leaf-wise (LightGBM) are much deeper at their deepest leaf than along most paths.
constexpr int32_t kLeafCheckSteps = 4;

template <int N>
inline bool all_at_leaves(const int32_t (&at)[N], int64_t interior) {
  int32_t lowest = at[0];
#pragma GCC unroll 16
  for (int i = 1; i < N; ++i) lowest = std::min(lowest, at[i]);
  return lowest >= interior;  // leaves are numbered after the interior nodes
}

// leaves[i] = the leaf tree `tree` leads row i of `rows` to, for R rows walked side by side (independent chains of
// loads hide each other's latency).
template <int R, BranchMode kMode, bool kMissing>
void walk_rows(const LegacyForest& forest, size_t tree, const double* rows, int64_t features, int64_t* leaves) {
  const WalkNode* nodes = forest.walk.data();
  int32_t at[R];
  for (int r = 0; r < R; ++r) at[r] = static_cast<int32_t>(forest.roots[tree]);
  for (int32_t step = 0; step < forest.depths[tree]; ++step) {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      at[r] = step_from<kMode, kMissing>(nodes[at[r]], rows + r * features);
    }
    if (step % kLeafCheckSteps == kLeafCheckSteps - 1 && all_at_leaves<R>(at, forest.interior)) break;
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
      at[t] = step_from<kMode, kMissing>(nodes[at[t]], row);
    }
    if (step % kLeafCheckSteps == kLeafCheckSteps - 1 && all_at_leaves<T>(at, forest.interior)) break;
  }
  for (int t = 0; t < T; ++t) leaves[t] = at[t] - forest.interior;
}

// The leaf tree `tree` leads `row` to, stopping there (the remaining trees of a single row: fewer than a group).
int64_t walk_one_tree(const LegacyForest& forest, size_t tree, const double* row) {
  int64_t at = forest.roots[tree];
  while (at < forest.interior) at = step_from<BranchMode::kMember, true>(forest.walk[static_cast<size_t>(at)], row);
  return at - forest.interior;
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

}  // namespace

Expected<std::vector<std::string>> strings_of(const graph::Node& node, const std::string& name) {
  const graph::Attribute* a = node.find_attribute(name);
  if (a == nullptr) return std::vector<std::string>{};
  if (a->type != graph::Attribute::Type::kStrings) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute ", name, " must be a list of strings");
  }
  return a->strings;
}

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
  std::vector<TreeNode> nodes;  // interior nodes, read into forest.walk below
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
    nodes.push_back(std::move(t));
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
    forest.roots.push_back(static_cast<int64_t>(nodes.size()));
    nodes.push_back(one_leaf);
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
  TRY(ml::check_tree_links(nodes, forest.roots, leaves, what));
  if (static_cast<int64_t>(nodes.size()) + leaves > std::numeric_limits<int32_t>::max() ||
      forest.max_feature > std::numeric_limits<int32_t>::max()) {
    return make_error(StatusCode::kInvalidGraph, what, ": more than 2^31 nodes, leaves or features");
  }
  forest.interior = static_cast<int64_t>(nodes.size());
  const auto walk_id = [&](int64_t id, bool leaf) { return static_cast<int32_t>(leaf ? forest.interior + id : id); };
  for (const TreeNode& t : nodes) {
    forest.walk.push_back({t.split, static_cast<int32_t>(t.feature),
                           {walk_id(t.false_id, t.false_leaf), walk_id(t.true_id, t.true_leaf)}, t.mode,
                           t.missing_true});
  }
  for (const TreeNode& t : nodes) forest.any_missing = forest.any_missing || t.missing_true;
  if (!nodes.empty() &&
      std::all_of(nodes.begin(), nodes.end(), [&](const TreeNode& t) { return t.mode == nodes[0].mode; })) {
    forest.uniform_mode = nodes[0].mode;
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
      const TreeNode& t = nodes[static_cast<size_t>(at)];
      if (!t.true_leaf) stack.emplace_back(t.true_id, steps + 1);
      if (!t.false_leaf) stack.emplace_back(t.false_id, steps + 1);
    }
    forest.depths.push_back(depth);
  }
  TRY_ASSIGN(forest.base_values, floats_or_tensor(node, "base_values"));
  TRY_ASSIGN(forest.post, ml::post_transform_of(node));
  return forest;
}

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
    for (; tree < trees; ++tree) add_leaf(i, walk_one_tree(forest, tree, row));
  }
}

void write_score_vector(std::span<const Score> scores, PostTransform post, float* out) {
  std::vector<double> values(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) values[i] = scores[i].read();
  ml::apply_post_transform(post, values.data(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<float>(values[i]);
}

}  // namespace nxrt::cpu::ml
