// Decision-tree nodes shared by the ai.onnx.ml tree-ensemble kernels (TreeEnsemble in ml_tree_ensemble.cpp,
// TreeEnsembleRegressor / TreeEnsembleClassifier in ml_tree_ensemble_legacy.cpp): interior nodes in one array,
// leaves numbered apart. A branch id is an interior node index, or a leaf index when its *_leaf flag is set. A root
// whose both branches are the same leaf is a one-leaf tree.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace nxrt::cpu::ml {

enum class BranchMode : uint8_t { kLeq = 0, kLt, kGte, kGt, kEq, kNeq, kMember };

struct TreeNode {
  BranchMode mode = BranchMode::kLeq;
  int64_t feature = 0;
  double split = 0;
  std::vector<double> members;
  bool missing_true = false;
  int64_t true_id = 0;
  int64_t false_id = 0;
  bool true_leaf = false;
  bool false_leaf = false;
};

// Whether feature value x takes the node's true branch. NaN takes the branch nodes_missing_value_tracks_true names:
// true where it is 1, false where it is 0 or absent, whatever the mode (BRANCH_NEQ included).
inline bool goes_true(const TreeNode& node, double x) {
  if (std::isnan(x)) return node.missing_true;
  switch (node.mode) {
    case BranchMode::kLeq: return x <= node.split;
    case BranchMode::kLt: return x < node.split;
    case BranchMode::kGte: return x >= node.split;
    case BranchMode::kGt: return x > node.split;
    case BranchMode::kEq: return x == node.split;
    case BranchMode::kNeq: return x != node.split;
    case BranchMode::kMember: return std::find(node.members.begin(), node.members.end(), x) != node.members.end();
  }
  return false;
}

// The leaf index reached from interior node `root` for the feature row `row` (links checked by check_tree_links:
// every walk ends within nodes.size() steps).
inline int64_t walk_to_leaf(const std::vector<TreeNode>& nodes, int64_t root, const double* row) {
  const TreeNode* node = &nodes[static_cast<size_t>(root)];
  if (node->true_leaf && node->false_leaf && node->true_id == node->false_id) return node->true_id;
  while (true) {
    const bool take_true = goes_true(*node, row[node->feature]);
    const int64_t next = take_true ? node->true_id : node->false_id;
    if (take_true ? node->true_leaf : node->false_leaf) return next;
    node = &nodes[static_cast<size_t>(next)];
  }
}

// INVALID_GRAPH (naming `what`) unless every branch id is in range, features are not negative, every root is an
// interior node and no tree has a cycle.
inline Status check_tree_links(const std::vector<TreeNode>& nodes, const std::vector<int64_t>& roots, int64_t leaves,
                               const std::string& what) {
  const int64_t count = static_cast<int64_t>(nodes.size());
  for (const TreeNode& node : nodes) {
    for (int side = 0; side < 2; ++side) {
      const int64_t id = side == 0 ? node.true_id : node.false_id;
      const bool leaf = side == 0 ? node.true_leaf : node.false_leaf;
      if (id < 0 || id >= (leaf ? leaves : count)) {
        return make_error(StatusCode::kInvalidGraph, what, ": branch id ", id, " is out of range");
      }
    }
    if (node.feature < 0) return make_error(StatusCode::kInvalidGraph, what, ": negative feature id");
  }
  for (int64_t root : roots) {
    if (root < 0 || root >= count) return make_error(StatusCode::kInvalidGraph, what, ": tree root ", root);
    // A walk visits each interior node at most once unless the tree has a cycle.
    std::vector<int64_t> stack{root};
    int64_t visited = 0;
    while (!stack.empty()) {
      const TreeNode& node = nodes[static_cast<size_t>(stack.back())];
      stack.pop_back();
      if (++visited > count) return make_error(StatusCode::kInvalidGraph, what, ": tree at root ", root, " has a cycle");
      if (!node.true_leaf) stack.push_back(node.true_id);
      if (!node.false_leaf) stack.push_back(node.false_id);
    }
  }
  return Status::ok();
}

}  // namespace nxrt::cpu::ml
