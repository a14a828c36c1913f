// Writes a few small valid ONNX models used as the libFuzzer seed corpus: make_seeds <output-dir>.
#include <cstdio>
#include <fstream>
#include <string>

#include "onnx/model_writer.h"

namespace {

using namespace nxrt::onnx::write;

Model add_relu() {
  Model model;
  model.graph.name = "add_relu";
  model.graph.initializers.push_back(float_tensor("W", {2, 3}, {1, -2, 3, -4, 5, -6}));
  model.graph.inputs.push_back({"X", 1, {std::string("N"), int64_t{3}}});
  model.graph.outputs.push_back({"Y", 1, {std::string("N"), int64_t{3}}});
  model.graph.nodes.push_back({"Add", {"X", "W"}, {"S"}, {}, "add", ""});
  model.graph.nodes.push_back({"Relu", {"S"}, {"Y"}, {}, "relu", ""});
  model.metadata_props = {{"seed", "add_relu"}};
  return model;
}

Model matmul_softmax() {
  Model model;
  model.graph.name = "matmul_softmax";
  model.graph.initializers.push_back(float_tensor("B", {4, 2}, {0.5f, 1, -1, 2, 0, 0.25f, 3, -0.5f}));
  model.graph.inputs.push_back({"A", 1, {int64_t{3}, int64_t{4}}});
  model.graph.outputs.push_back({"P", 1, {int64_t{3}, int64_t{2}}});
  model.graph.nodes.push_back({"MatMul", {"A", "B"}, {"M"}, {}, "mm", ""});
  model.graph.nodes.push_back({"Softmax", {"M"}, {"P"}, {attr_int("axis", -1)}, "sm", ""});
  return model;
}

Model reshape_transpose() {
  Model model;
  model.graph.name = "reshape_transpose";
  model.graph.initializers.push_back(int64_tensor("shape", {2}, {2, 6}));
  model.graph.inputs.push_back({"X", 1, {int64_t{3}, int64_t{4}}});
  model.graph.outputs.push_back({"Y", 1, {int64_t{6}, int64_t{2}}});
  model.graph.nodes.push_back({"Reshape", {"X", "shape"}, {"R"}, {}, "reshape", ""});
  model.graph.nodes.push_back({"Transpose", {"R"}, {"Y"}, {attr_ints("perm", {1, 0})}, "transpose", ""});
  return model;
}

Model if_subgraph() {
  Graph then_branch;
  then_branch.name = "then";
  then_branch.outputs.push_back({"T", 1, {int64_t{2}}});
  then_branch.nodes.push_back({"Constant", {}, {"T"}, {attr_tensor("value", float_tensor("c", {2}, {1, 2}))}, "", ""});
  Graph else_branch = then_branch;
  else_branch.name = "else";
  else_branch.nodes[0].attributes[0] = attr_tensor("value", float_tensor("c", {2}, {3, 4}));
  Model model;
  model.graph.name = "if";
  model.graph.inputs.push_back({"cond", 9, {}});
  model.graph.outputs.push_back({"Y", 1, {int64_t{2}}});
  model.graph.nodes.push_back({"If",
                               {"cond"},
                               {"Y"},
                               {attr_graph("then_branch", then_branch), attr_graph("else_branch", else_branch)},
                               "if",
                               ""});
  return model;
}

Model gemm_attributes() {
  Model model;
  model.graph.name = "gemm";
  model.graph.initializers.push_back(float_tensor("B", {2, 2}, {1, 0, 0, 1}));
  model.graph.initializers.push_back(float_tensor("C", {2}, {0.5f, -0.5f}));
  model.graph.inputs.push_back({"A", 1, {std::string("batch"), int64_t{2}}});
  model.graph.outputs.push_back({"Y", 1, {std::string("batch"), int64_t{2}}});
  model.graph.nodes.push_back({"Gemm",
                               {"A", "B", "C"},
                               {"Y"},
                               {attr_float("alpha", 2.0f), attr_float("beta", 1.0f), attr_int("transB", 1)},
                               "gemm",
                               ""});
  return model;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output-dir>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const std::pair<const char*, Model> seeds[] = {{"add_relu.onnx", add_relu()},
                                                 {"matmul_softmax.onnx", matmul_softmax()},
                                                 {"reshape_transpose.onnx", reshape_transpose()},
                                                 {"if_subgraph.onnx", if_subgraph()},
                                                 {"gemm_attributes.onnx", gemm_attributes()}};
  for (const auto& [name, model] : seeds) {
    const std::string bytes = encode_model(model);
    std::ofstream out(dir + "/" + name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s/%s\n", dir.c_str(), name);
      return 1;
    }
  }
  return 0;
}
