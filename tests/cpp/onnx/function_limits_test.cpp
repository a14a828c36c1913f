// Bounds on inlining model-local functions (onnx/function_expansion.h, graph/model_limits.h): call chains at
// the depth limit load and run, one call deeper fails; a function calling itself (directly, through others or
// through a subgraph) is an error naming the cycle; exponential fan-out fails at the inlined-node limit in
// milliseconds instead of exhausting memory; subgraphs that inlining nests past the graph limit fail.
#include <gtest/gtest.h>

#include <chrono>

#include "graph/model_limits.h"
#include "onnx/function_expansion.h"
#include "onnx/model_proto.h"
#include "onnx/nesting_models.h"
#include "session/session.h"

namespace nxrt::onnx {
namespace {

using testing::kFloatElem;

constexpr const char* kLocal = "local";

std::string function_name(int index) { return "f" + std::to_string(index); }

write::Node call(const std::string& function, std::string input, std::string output) {
  return {function, {std::move(input)}, {std::move(output)}, {}, "call_" + function, kLocal};
}

write::Function function(const std::string& name, std::vector<write::Node> body) {
  write::Function f;
  f.name = name;
  f.domain = kLocal;
  f.inputs = {"a"};
  f.outputs = {"b"};
  f.nodes = std::move(body);
  f.opset_imports = {{"", 21}, {kLocal, 1}};
  return f;
}

// Main graph: Y = f1(X) for X float[3].
write::Model model_calling(const std::string& first, std::vector<write::Function> functions) {
  write::Model model;
  model.opset_imports = {{"", 21}, {kLocal, 1}};
  model.graph.name = "main";
  model.graph.inputs = {{"X", kFloatElem, {int64_t{3}}}};
  model.graph.outputs = {{"Y", kFloatElem, {int64_t{3}}}};
  model.graph.nodes = {call(first, "X", "Y")};
  model.functions = std::move(functions);
  return model;
}

// f1 calls f2 ... calls f<depth>, which computes b = a + a.
write::Model call_chain(int depth) {
  std::vector<write::Function> functions;
  for (int i = 1; i < depth; ++i) {
    functions.push_back(function(function_name(i), {call(function_name(i + 1), "a", "b")}));
  }
  functions.push_back(function(function_name(depth), {{"Add", {"a", "a"}, {"b"}, {}, "double", ""}}));
  return model_calling(function_name(1), std::move(functions));
}

Status expansion_status(const std::string& bytes) {
  auto parsed = parse_model(bytes);
  if (!parsed) return parsed.status();
  return check_function_expansion(*parsed);
}

void expect_limit_error(const Status& status, const std::vector<std::string>& needles) {
  ASSERT_FALSE(status.is_ok()) << "accepted a model past a function limit";
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  for (const std::string& needle : needles) {
    EXPECT_NE(status.message().find(needle), std::string::npos)
        << "missing '" << needle << "' in: " << status.message();
  }
}

Status session_status(const write::Model& model) {
  auto session = Session::create_from_bytes(write::encode_model(model));
  return session ? Status::ok() : session.status();
}

TEST(FunctionCallDepth, ChainAtTheLimitLoadsAndRuns) {
  auto session = Session::create_from_bytes(write::encode_model(call_chain(graph::kMaxFunctionCallDepth)));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  Tensor x = Tensor::allocate(DataType::kFloat32, {3}).value();
  for (int i = 0; i < 3; ++i) x.data<float>()[i] = static_cast<float>(i + 1);
  auto outputs = (*session)->run({{"X"}}, {{x}}, {});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
  const float* y = (*outputs)[0].data<float>();
  EXPECT_EQ(std::vector<float>(y, y + 3), (std::vector<float>{2, 4, 6}));
}

TEST(FunctionCallDepth, OneCallPastTheLimitFailsAtSessionCreation) {
  expect_limit_error(session_status(call_chain(graph::kMaxFunctionCallDepth + 1)),
                     {"nest deeper than the limit of 64", "'f65' called from 'f64'", "call_f1", "graph 'main'"});
}

TEST(FunctionCycles, DirectRecursionNamesTheCycle) {
  write::Model model = model_calling("f", {function("f", {call("f", "a", "b")})});
  expect_limit_error(session_status(model), {"model-local function 'f' calls itself: f -> f", "graph 'main'"});
}

TEST(FunctionCycles, IndirectRecursionNamesEveryFunctionOnTheCycle) {
  write::Model model = model_calling("entry", {function("entry", {call("f", "a", "b")}),
                                               function("f", {call("g", "a", "b")}),
                                               function("g", {call("h", "a", "b")}),
                                               function("h", {call("f", "a", "b")})});
  expect_limit_error(session_status(model), {"'f' calls itself: f -> g -> h -> f", "call_entry"});
}

TEST(FunctionCycles, RecursionThroughASubgraphIsFound) {
  write::Graph then_branch;
  then_branch.name = "then";
  then_branch.nodes = {call("f", "a", "r")};
  then_branch.outputs = {{"r", kFloatElem, {int64_t{3}}}};
  write::Graph else_branch;
  else_branch.name = "else";
  else_branch.nodes = {{"Identity", {"a"}, {"s"}, {}, "", ""}};
  else_branch.outputs = {{"s", kFloatElem, {int64_t{3}}}};
  write::Node branch{"If", {"a"}, {"b"}, {write::attr_graph("then_branch", then_branch),
                                          write::attr_graph("else_branch", else_branch)}, "branch", ""};
  write::Model model = model_calling("f", {function("f", {branch})});
  expect_limit_error(session_status(model), {"'f' calls itself: f -> f"});
}

TEST(InlinedNodes, ExponentialFanOutFailsFastAtTheLimit) {
  std::vector<write::Function> functions;
  for (int i = 1; i < graph::kMaxFunctionCallDepth; ++i) {
    const std::string callee = function_name(i + 1);
    functions.push_back(function(function_name(i), {call(callee, "a", "t"), call(callee, "t", "b")}));
  }
  functions.push_back(function(function_name(graph::kMaxFunctionCallDepth), {{"Identity", {"a"}, {"b"}, {}, "", ""}}));
  const auto start = std::chrono::steady_clock::now();
  expect_limit_error(session_status(model_calling(function_name(1), std::move(functions))),
                     {"more than 1048576 nodes", "call_f1"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

// `calls` main-graph calls of g, whose body is a chain of `body_nodes` Identity nodes, plus `extra` calls of a
// one-node function h: calls * body_nodes + extra nodes are inlined.
write::Model fan_in(int calls, int body_nodes, int extra) {
  std::vector<write::Node> body;
  for (int i = 0; i < body_nodes; ++i) {
    body.push_back({"Identity", {i == 0 ? "a" : "t" + std::to_string(i)},
                    {i + 1 == body_nodes ? "b" : "t" + std::to_string(i + 1)}, {}, "", ""});
  }
  write::Model model = model_calling("g", {function("g", std::move(body)),
                                           function("h", {{"Identity", {"a"}, {"b"}, {}, "", ""}})});
  model.graph.nodes.clear();
  for (int i = 0; i < calls; ++i) model.graph.nodes.push_back(call("g", "X", "Y" + std::to_string(i)));
  for (int i = 0; i < extra; ++i) model.graph.nodes.push_back(call("h", "X", "Z" + std::to_string(i)));
  return model;
}

TEST(InlinedNodes, ExactlyTheLimitPassesAndOneMoreFails) {
  static_assert(graph::kMaxInlinedNodes == 1024 * 1024);
  EXPECT_TRUE(expansion_status(write::encode_model(fan_in(1024, 1024, 0))).is_ok());
  expect_limit_error(expansion_status(write::encode_model(fan_in(1024, 1024, 1))),
                     {"more than 1048576 nodes", "expanding function 'h'"});
}

// Main graph: `outer` nested Ifs whose innermost graph calls f; f's body holds `inner` nested Ifs.
std::string nesting_through_function(int outer, int inner) {
  const auto nest = [](int levels, write::Node innermost) {
    write::Graph graph;
    graph.nodes = {std::move(innermost)};
    for (int level = 0; level < levels; ++level) {
      write::Graph wrapper;
      wrapper.nodes = {{"If", {"c"}, {"y"}, {write::attr_graph("then_branch", std::move(graph))}, "if", ""}};
      graph = std::move(wrapper);
    }
    return graph;
  };
  write::Function f = function("f", nest(inner, {"Identity", {"a"}, {"b"}, {}, "", ""}).nodes);
  write::Model model = model_calling("f", {f});
  model.graph.nodes = nest(outer, call("f", "X", "Y")).nodes;
  return write::encode_model(model);
}

TEST(FunctionSubgraphNesting, InliningCountsTheCallersLevels) {
  EXPECT_TRUE(expansion_status(nesting_through_function(32, 32)).is_ok());
  expect_limit_error(expansion_status(nesting_through_function(32, 33)),
                     {"subgraph nesting level 65 exceeds the limit of 64 once model-local functions are inlined"});
}

TEST(FunctionExpansion, ModelsWithoutFunctionsAreNotWalked) {
  EXPECT_TRUE(expansion_status(write::encode_model(testing::nested_if_model(graph::kMaxGraphNesting))).is_ok());
}

}  // namespace
}  // namespace nxrt::onnx
