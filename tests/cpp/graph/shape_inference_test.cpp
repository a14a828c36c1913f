#include "graph/shape_inference.h"

#include <gtest/gtest.h>

#include "graph/graph_test_util.h"

namespace nxrt::graph {
namespace {

namespace w = onnx::write;

using testing::shape_of;

Expected<import::ImportedModel> import_bytes(const std::string& bytes) { return testing::import_and_infer(bytes); }

TEST(ShapeInference, PropagatesSymbolicDims) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {std::string("B"), int64_t{4}}}, {"bias", 1, {int64_t{8}}}};
  model.graph.initializers = {w::float_tensor("W", {4, 8}, std::vector<float>(32, 0.5f)),
                              w::int64_tensor("shape", {2}, {0, -1}),
                              w::float_tensor("G", {8, 3}, std::vector<float>(24, 1.0f))};
  model.graph.nodes = {
      {"MatMul", {"x", "W"}, {"h"}, {}, "mm"},
      {"Add", {"h", "bias"}, {"h2"}, {}, "add"},
      {"Relu", {"h2"}, {"r"}, {}, "relu"},
      {"Transpose", {"r"}, {"t"}, {w::attr_ints("perm", {1, 0})}, "tr"},
      {"Transpose", {"t"}, {"t2"}, {}, "tr_default"},
      {"Reshape", {"t2", "shape"}, {"flat"}, {}, "reshape"},
      {"Gemm", {"flat", "G"}, {"g"}, {}, "gemm"},
      {"Cast", {"g"}, {"y"}, {w::attr_int("to", 11)}, "cast"},
  };
  model.graph.outputs = {{"y", 11, {}, false}};
  auto imported = import_bytes(w::encode_model(model));
  ASSERT_TRUE(imported) << imported.status().to_string();
  const Graph& g = imported->graph;
  EXPECT_EQ(shape_of(g, "h"), "tensor(float)[B,8]");
  EXPECT_EQ(shape_of(g, "h2"), "tensor(float)[B,8]");
  EXPECT_EQ(shape_of(g, "r"), "tensor(float)[B,8]");
  EXPECT_EQ(shape_of(g, "t"), "tensor(float)[8,B]");
  EXPECT_EQ(shape_of(g, "t2"), "tensor(float)[B,8]");
  EXPECT_EQ(shape_of(g, "flat"), "tensor(float)[B,?]");
  EXPECT_EQ(shape_of(g, "g"), "tensor(float)[B,3]");
  EXPECT_EQ(shape_of(g, "y"), "tensor(double)[B,3]");
}

TEST(ShapeInference, ReshapeResolvesMinusOneForKnownShapes) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{2}, int64_t{3}, int64_t{4}}}};
  model.graph.initializers = {w::int64_tensor("shape", {2}, {-1, 4})};
  model.graph.nodes = {{"Reshape", {"x", "shape"}, {"y"}, {}, "r"}};
  model.graph.outputs = {{"y", 1, {}, false}};
  auto imported = import_bytes(w::encode_model(model));
  ASSERT_TRUE(imported) << imported.status().to_string();
  EXPECT_EQ(shape_of(imported->graph, "y"), "tensor(float)[6,4]");
}

TEST(ShapeInference, ReshapeLeavesMinusOneUnknownWhenTheProductOverflows) {
  // Found by fuzz_kernel: the known dims' product overflowed int64 (UBSan) while inferring -1. Such a dim stays
  // unknown (the kernel rejects the shape when the node runs), as does one that does not divide the element count.
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{4}}}};
  model.graph.initializers = {w::int64_tensor("huge", {3}, {-1, int64_t{1} << 40, int64_t{1} << 40}),
                              w::int64_tensor("odd", {2}, {-1, 3})};
  model.graph.nodes = {{"Reshape", {"x", "huge"}, {"y"}, {}, "r1"}, {"Reshape", {"x", "odd"}, {"z"}, {}, "r2"}};
  model.graph.outputs = {{"y", 1, {}, false}, {"z", 1, {}, false}};
  auto imported = import_bytes(w::encode_model(model));
  ASSERT_TRUE(imported) << imported.status().to_string();
  EXPECT_EQ(shape_of(imported->graph, "y"), "tensor(float)[?,1099511627776,1099511627776]");
  EXPECT_EQ(shape_of(imported->graph, "z"), "tensor(float)[?,3]");
}

TEST(ShapeInference, MismatchedKnownDimsAreInvalidGraph) {
  w::Model model;
  model.graph.inputs = {{"a", 1, {int64_t{3}, int64_t{4}}}, {"b", 1, {int64_t{5}, int64_t{6}}}};
  model.graph.nodes = {{"MatMul", {"a", "b"}, {"c"}, {}, "mm"}};
  model.graph.outputs = {{"c", 1, {}, false}};
  auto matmul = import_bytes(w::encode_model(model));
  ASSERT_FALSE(matmul);
  EXPECT_EQ(matmul.status().code(), StatusCode::kInvalidGraph);
  EXPECT_NE(matmul.status().message().find("MatMul node 'mm'"), std::string::npos);

  model.graph.nodes = {{"Add", {"a", "b"}, {"c"}, {}, "add"}};
  auto add = import_bytes(w::encode_model(model));
  ASSERT_FALSE(add);
  EXPECT_NE(add.status().message().find("cannot broadcast"), std::string::npos);

  model.graph.nodes = {{"Transpose", {"a"}, {"c"}, {w::attr_ints("perm", {0, 0})}, "tr"}};
  EXPECT_FALSE(import_bytes(w::encode_model(model)));
}

TEST(ShapeInference, VectorMatMulDropsPromotedDims) {
  w::Model model;
  model.graph.inputs = {{"v", 1, {int64_t{4}}}, {"m", 1, {std::string("N"), int64_t{4}, int64_t{5}}}};
  model.graph.nodes = {{"MatMul", {"v", "m"}, {"c"}, {}, "mm"}};
  model.graph.outputs = {{"c", 1, {}, false}};
  auto imported = import_bytes(w::encode_model(model));
  ASSERT_TRUE(imported) << imported.status().to_string();
  EXPECT_EQ(shape_of(imported->graph, "c"), "tensor(float)[N,5]");
}

TEST(TopologicalSort, OrdersUnsortedNodes) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{2}}}};
  model.graph.nodes = {{"Relu", {"b"}, {"c"}, {}, "third"}, {"Relu", {"x"}, {"a"}, {}, "first"},
                       {"Relu", {"a"}, {"b"}, {}, "second"}};
  model.graph.outputs = {{"c", 1, {int64_t{2}}}};
  auto imported = import_bytes(w::encode_model(model));
  ASSERT_TRUE(imported) << imported.status().to_string();
  const Graph& g = imported->graph;
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].name, "first");
  EXPECT_EQ(g.nodes[1].name, "second");
  EXPECT_EQ(g.nodes[2].name, "third");
  EXPECT_EQ(g.values[g.find_value("a")].producer, 0);
  EXPECT_EQ(g.values[g.find_value("a")].consumers, std::vector<int>{1});
}

TEST(Import, SubgraphsSeeOuterScopeValues) {
  w::Graph then_branch;
  then_branch.name = "then";
  then_branch.nodes = {{"Add", {"x", "x"}, {"t"}, {}, "inner"}};
  then_branch.outputs = {{"t", 1, {int64_t{2}}}};
  w::Graph else_branch = then_branch;
  else_branch.name = "else";
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{2}}}, {"cond", 9, {}}};
  model.graph.nodes = {{"If", {"cond"}, {"y"}, {w::attr_graph("then_branch", then_branch),
                                                 w::attr_graph("else_branch", else_branch)}, "if"}};
  model.graph.outputs = {{"y", 1, {int64_t{2}}}};
  auto imported = import_bytes(w::encode_model(model));
  ASSERT_TRUE(imported) << imported.status().to_string();
  const Node& node = imported->graph.nodes[0];
  const Attribute* then_attr = node.find_attribute("then_branch");
  ASSERT_TRUE(then_attr && then_attr->g);
  const Graph& body = *then_attr->g;
  ASSERT_EQ(body.outer_scope_inputs.size(), 1u);
  EXPECT_EQ(body.values[body.outer_scope_inputs[0]].name, "x");
  EXPECT_TRUE(body.values[body.outer_scope_inputs[0]].is_outer_scope);
}

TEST(Import, RejectsUnsupportedOpsetAndUnknownDomain) {
  w::Model model;
  model.opset_imports = {{"", 99}};
  model.graph.inputs = {{"x", 1, {int64_t{2}}}};
  model.graph.nodes = {{"Relu", {"x"}, {"y"}, {}, "r"}};
  model.graph.outputs = {{"y", 1, {int64_t{2}}}};
  auto too_new = import_bytes(w::encode_model(model));
  ASSERT_FALSE(too_new);
  EXPECT_NE(too_new.status().message().find("opset 99"), std::string::npos);

  model.opset_imports = {{"", 21}};
  model.graph.nodes[0].domain = "com.example";
  auto unknown = import_bytes(w::encode_model(model));
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.status().message().find("com.example"), std::string::npos);
}

}  // namespace
}  // namespace nxrt::graph
