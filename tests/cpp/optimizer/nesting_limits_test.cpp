// The optimizer's walk over subgraphs (optimizer::optimize) checks graph/model_limits.h's nesting bound
// before it recurses: a hand-built graph at the limit optimizes, one level deeper is INVALID_ARGUMENT naming
// the node; a model at the limit loads at every optimization level.
#include <gtest/gtest.h>

#include <memory>

#include "graph/model_limits.h"
#include "onnx/nesting_models.h"
#include "optimizer/optimizer.h"
#include "session/session.h"

namespace nxrt::optimizer {
namespace {

// `levels` Ifs inside each other, built directly as graph::Graph (as a pass or a kernel could).
std::shared_ptr<graph::Graph> hand_built_nesting(int levels) {
  auto graph = std::make_shared<graph::Graph>();
  graph->name = "level_" + std::to_string(levels);
  for (int level = levels - 1; level >= 0; --level) {
    auto outer = std::make_shared<graph::Graph>();
    outer->name = "level_" + std::to_string(level);
    graph::Node node;
    node.op_type = "If";
    node.name = "if_" + std::to_string(level + 1);
    graph::Attribute branch;
    branch.name = "then_branch";
    branch.type = graph::Attribute::Type::kGraph;
    branch.g = std::move(graph);
    node.attributes.push_back(std::move(branch));
    outer->nodes.push_back(std::move(node));
    graph = std::move(outer);
  }
  return graph;
}

TEST(OptimizerNestingLimit, ChecksBeforeRecursing) {
  for (int level : {kLevelBasic, kLevelExtended, kLevelLayout}) {
    EXPECT_TRUE(optimize(*hand_built_nesting(graph::kMaxGraphNesting), level).is_ok());
    const Status status = optimize(*hand_built_nesting(graph::kMaxGraphNesting + 1), level);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
    EXPECT_NE(status.message().find("optimizer: If node 'if_65' of graph 'level_64': subgraph nesting level 65"),
              std::string::npos)
        << status.message();
  }
}

TEST(OptimizerNestingLimit, DisabledOptimizationDoesNotWalk) {
  EXPECT_TRUE(optimize(*hand_built_nesting(graph::kMaxGraphNesting + 1), kLevelDisabled).is_ok());
}

TEST(OptimizerNestingLimit, ModelAtTheLimitLoadsAtEveryLevel) {
  const std::string bytes = onnx::write::encode_model(onnx::testing::nested_if_model(graph::kMaxGraphNesting));
  for (int level : {kLevelDisabled, kLevelBasic, kLevelExtended, kLevelLayout}) {
    SessionOptions options;
    options.graph_optimization_level = level;
    auto session = Session::create_from_bytes(bytes, options);
    EXPECT_TRUE(session.has_value()) << "level " << level << ": " << session.status().to_string();
  }
}

}  // namespace
}  // namespace nxrt::optimizer
