// The forests of ai.onnx.ml TreeEnsembleRegressor / TreeEnsembleClassifier (opsets 1 and 3) as their kernels
// (ml_tree_ensemble_legacy.cpp) use them: read from the node's attributes, and walked block by block.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/ml/ml_common.h"
#include "ep/cpu/ml/ml_tree_forest.h"

namespace nxrt::cpu::ml {

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
  // Interior nodes, then leaves, as WalkNodes (leaf l at interior + l); each tree's depth in steps.
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

// One output's score and whether a leaf (or, for classes, a base value) gave it one. onnxruntime's CPU kernel reads
// an unset score as 0 wherever it transforms or writes scores, even after a base value was added to it.
struct Score {
  double value = 0;
  bool set = false;
  double read() const { return set ? value : 0.0; }
};

// A list-of-strings attribute (empty when absent; INVALID_GRAPH when of another type).
Expected<std::vector<std::string>> strings_of(const graph::Node& node, const std::string& name);

// Builds the forest from the nodes_* attributes and the (prefix)treeids / nodeids / ids / weights entries of
// `outputs` targets or classes (INVALID_GRAPH naming the node for anything malformed).
Expected<LegacyForest> read_forest(const graph::Node& node, const std::string& prefix, const std::string& ids_name,
                                   int64_t outputs);

// scores[i * outputs + o] for the `count` rows of `rows` (each `features` doubles): the entries of the leaf every
// tree reaches, added (or their min / max taken) tree by tree, so that a tree's nodes are read once per block.
// `first_only`: only each leaf's first entry counts, and a sum does not mark the score set (onnxruntime's
// single-target path).
void aggregate_block(const LegacyForest& forest, Aggregate aggregate, bool first_only, const double* rows,
                     int64_t count, int64_t features, Score* scores);

// Writes n >= 2 scores through the post-transform (unset scores read as 0). SOFTMAX_ZERO is apply_post_transform's
// (the reference's): (near-)zero scores stay near zero but count in the sum, and a row of zeros gives 0.5 each
// (onnxruntime leaves them out of the sum and gives NaN there).
void write_score_vector(std::span<const Score> scores, PostTransform post, float* out);

}  // namespace nxrt::cpu::ml
