// The type and shape rules of shape inference: one rule per default-domain op, in one table (shape_rules.cpp).
// A rule reads its node's input types (and constant inputs) and writes what it can say about the outputs; what it
// cannot say (an unknown input rank, a non-constant shape input, a malformed attribute the kernel reports) it
// leaves unknown. A rule returns INVALID_GRAPH only for known dims that contradict each other.
#pragma once

#include <string_view>
#include <vector>

#include "core/status.h"
#include "graph/graph.h"

namespace nxrt::graph {

struct ShapeRuleContext {
  const Graph& graph;
  const Node& node;
  std::vector<const TypeInfo*> inputs;  // nullptr for omitted inputs
  std::vector<TypeInfo> outputs;        // one per node output, kUnknown until the rule writes it

  const TypeInfo* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  bool input_is_tensor(size_t i) const { return input(i) && input(i)->is_tensor(); }
  // Input i's shape when it is a tensor of known rank, else nullptr.
  const SymbolicShape* input_shape(size_t i) const;
  // Input i's constant value (initializer or Constant node), else nullptr.
  const Tensor* constant_input(size_t i) const;
};

using ShapeRule = Status (*)(ShapeRuleContext&);

// The rule for a default-domain op type; nullptr when the op has none.
ShapeRule find_shape_rule(std::string_view op_type);
// The rule for an op of `domain` (the default domain, or com.microsoft: shape_rules_contrib.cpp); nullptr when none.
ShapeRule find_shape_rule(std::string_view domain, std::string_view op_type);
// The com.microsoft rules; nullptr when the op has none.
ShapeRule find_contrib_shape_rule(std::string_view op_type);

}  // namespace nxrt::graph
