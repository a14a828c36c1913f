// Editing helpers shared by the optimizer passes. A Rewriter keeps Value::producer / consumers current while a
// pass removes nodes, appends nodes and rewires values, so a pass may keep matching after a rewrite; finish()
// drops the removed nodes and re-sorts the graph.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "graph/graph.h"

namespace nxrt::optimizer {

inline constexpr const char* kNxrtDomain = "com.nxrt";

class Rewriter {
 public:
  // `owner`: the provider whose nodes a provider pass may rewrite; nodes assigned to another provider are foreign
  // (never matched: producer() and sole_consumer() do not return them). Empty: every node is the pass's.
  explicit Rewriter(graph::Graph& graph, std::string_view owner = {});

  graph::Graph& graph() { return graph_; }
  graph::Node& node(int index) { return graph_.nodes[index]; }
  graph::Value& value(int index) { return graph_.values[index]; }
  int node_count() const { return static_cast<int>(graph_.nodes.size()); }
  bool is_removed(int node) const { return removed_[node]; }
  // Assigned to a provider other than the owner (see the constructor).
  bool is_foreign(int node) const;
  // Neither removed nor foreign: a node the pass may match.
  bool is_matchable(int node) const { return !is_removed(node) && !is_foreign(node); }
  bool changed() const { return changed_; }

  // A value that only nodes of this graph read: not a graph output and not read by any subgraph.
  bool is_private(int value) const;
  // The node reading a private value when exactly one input slot of one node reads it; -1 otherwise.
  int sole_consumer(int value) const;
  // The live node of the owner producing `value`, or -1 (graph input, initializer, outer scope, omitted, foreign).
  int producer(int value) const;
  // The live node producing `value` whichever provider runs it, or -1 (for reachability, never for matching).
  int any_producer(int value) const;
  // Initializer (non-overridable) or Constant output; nullptr otherwise.
  const Tensor* constant(int value) const;
  // The constant as one double when it holds exactly one float/double/int element.
  std::optional<double> scalar_constant(int value) const;
  // {min, max} of a Clip node: inputs 1 and 2 (opset 11+, scalar constants; omitted: -inf / +inf) or attributes min
  // and max (before); nullopt when a bound is not constant or an attribute is malformed.
  std::optional<std::pair<float, float>> clip_bounds(const graph::Node& clip) const;

  // Marks a node removed and unlinks its inputs; its outputs lose their producer.
  void remove(int node);
  // Appends a node (names of fused nodes should combine the originals) and links it; it is the owner's. Returns
  // its index.
  int add(graph::Node node);
  // Replaces input slot `slot` of `node` by `value`, keeping links.
  void set_input(int node, size_t slot, int value);
  // Makes every reader of `from` read `to`. When `from` is a graph output or read by a subgraph, instead renames:
  // the producer of `to` must then be a live node, `to` private, and that node outputs `from` in its place.
  // Returns false (nothing changed) when neither is possible.
  bool replace_value(int from, int to);
  // A new value of `type`, named after `stem` and unique in the graph.
  int new_value(const std::string& stem, const graph::TypeInfo& type);
  // A new initializer value holding `tensor`.
  int new_initializer(const std::string& stem, Tensor tensor);

  // Drops removed nodes, releases initializers nothing reads any more, re-sorts, rebuilds links.
  Status finish();

 private:
  void unlink_input(int value, int node);

  graph::Graph& graph_;
  std::string owner_;
  std::vector<bool> removed_;
  std::vector<bool> read_by_subgraph_;
  bool changed_ = false;
};

// Shape equality for fusion checks: same rank, every dim known-and-equal or the same symbol.
bool same_static_or_symbolic_shape(const graph::TypeInfo& a, const graph::TypeInfo& b);
// Attribute builders (graph/graph.h).
using graph::make_float_attribute;
using graph::make_floats_attribute;
using graph::make_int_attribute;
using graph::make_ints_attribute;
using graph::make_string_attribute;
using graph::make_tensor_attribute;
// Sets or replaces attribute `attribute.name` on `node`.
void set_attribute(graph::Node& node, graph::Attribute attribute);
// The opset the graph imports for `domain`, 0 when absent.
int imported_opset(const graph::Graph& graph, const std::string& domain);

}  // namespace nxrt::optimizer
