// Level-2 pattern and linear-op fusions: Gelu, LayerNormalization, FusedMatMul, FusedGemm, FusedConv.
// The linear fusions expect the fused op only when its kernel is registered (other helpers add them); without
// it the graph must stay as it was and still compute the same outputs.
#include <utility>

#include "ep/cpu/kernel.h"
#include "optimizer_test_util.h"

namespace nxrt::optimizer_test {
namespace {

bool registered(const char* domain, const char* op) { return cpu::find_kernel(domain, op, 1) != nullptr; }

w::Model unary_model(int64_t rows, int64_t cols, std::vector<w::Node> nodes, std::vector<w::Tensor> initializers,
                     int64_t opset = 21) {
  w::Model model;
  model.opset_imports = {{"", opset}};
  model.graph.inputs = {{"x", 1, {rows, cols}}};
  model.graph.outputs = {{"y", 1, {rows, cols}}};
  model.graph.nodes = std::move(nodes);
  model.graph.initializers = std::move(initializers);
  return model;
}

TEST(GeluFusion, ErfFormWithDivAndHalfLast) {
  auto model = unary_model(4, 33,
                           {{"Div", {"x", "sqrt2"}, {"d"}, {}, "div"},
                            {"Erf", {"d"}, {"e"}, {}, "erf"},
                            {"Add", {"e", "one"}, {"p"}, {}, "add"},
                            {"Mul", {"x", "p"}, {"m"}, {}, "mul"},
                            {"Mul", {"m", "half"}, {"y"}, {}, "mul_half"}},
                           {scalar("sqrt2", 1.4142135f), scalar("one", 1.0f), scalar("half", 0.5f)});
  auto optimized = optimize_and_compare(model, 1e-6);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Gelu"}));
}

TEST(GeluFusion, ErfFormWithMulAndHalfFirst) {
  auto model = unary_model(3, 5,
                           {{"Mul", {"x", "half"}, {"h"}, {}, "mul_half"},
                            {"Mul", {"inv", "x"}, {"d"}, {}, "scale"},
                            {"Erf", {"d"}, {"e"}, {}, "erf"},
                            {"Add", {"one", "e"}, {"p"}, {}, "add"},
                            {"Mul", {"h", "p"}, {"y"}, {}, "mul"}},
                           {scalar("inv", 0.70710678f), scalar("one", 1.0f), scalar("half", 0.5f)});
  auto optimized = optimize_and_compare(model, 1e-6);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Gelu"}));
}

TEST(GeluFusion, OldOpsetWithoutMsGeluKernelIsLeftAlone) {
  auto model = unary_model(2, 3,
                           {{"Div", {"x", "sqrt2"}, {"d"}, {}, "div"},
                            {"Erf", {"d"}, {"e"}, {}, "erf"},
                            {"Add", {"e", "one"}, {"p"}, {}, "add"},
                            {"Mul", {"x", "p"}, {"m"}, {}, "mul"},
                            {"Mul", {"m", "half"}, {"y"}, {}, "mul_half"}},
                           {scalar("sqrt2", 1.4142135f), scalar("one", 1.0f), scalar("half", 0.5f)}, 17);
  auto optimized = optimize_and_compare(model, 1e-6);
  ASSERT_TRUE(optimized);
  const bool ms_gelu = cpu::find_kernel("com.microsoft", "Gelu", 1) != nullptr;
  EXPECT_EQ(count_op(*optimized, "Erf"), ms_gelu ? 0 : 1);
}

TEST(GeluFusion, TanhFormWithPowAndCube) {
  for (bool use_pow : {true, false}) {
    std::vector<w::Node> nodes;
    if (use_pow) {
      nodes.push_back({"Pow", {"x", "three"}, {"cube"}, {}, "pow"});
    } else {
      nodes.push_back({"Mul", {"x", "x"}, {"sq"}, {}, "square"});
      nodes.push_back({"Mul", {"sq", "x"}, {"cube"}, {}, "cube"});
    }
    for (const w::Node& node : std::vector<w::Node>{{"Mul", {"c0", "cube"}, {"t"}, {}, "coef"},
                                                     {"Add", {"x", "t"}, {"s"}, {}, "sum"},
                                                     {"Mul", {"s", "c1"}, {"u"}, {}, "scale"},
                                                     {"Tanh", {"u"}, {"th"}, {}, "tanh"},
                                                     {"Add", {"th", "one"}, {"p"}, {}, "add"},
                                                     {"Mul", {"half", "x"}, {"h"}, {}, "half_x"},
                                                     {"Mul", {"h", "p"}, {"y"}, {}, "mul"}}) {
      nodes.push_back(node);
    }
    auto model = unary_model(3, 17, nodes,
                             {scalar("three", 3.0f), scalar("c0", 0.044715f), scalar("c1", 0.7978845608f),
                              scalar("one", 1.0f), scalar("half", 0.5f)});
    auto optimized = optimize_and_compare(model, 1e-6);
    ASSERT_TRUE(optimized);
    EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Gelu"})) << "pow form " << use_pow;
  }
}

TEST(GeluFusion, IntermediateReadElsewhereBlocksFusion) {
  auto model = unary_model(2, 3,
                           {{"Div", {"x", "sqrt2"}, {"d"}, {}, "div"},
                            {"Erf", {"d"}, {"e"}, {}, "erf"},
                            {"Add", {"e", "one"}, {"p"}, {}, "add"},
                            {"Mul", {"x", "p"}, {"m"}, {}, "mul"},
                            {"Mul", {"m", "half"}, {"y"}, {}, "mul_half"}},
                           {scalar("sqrt2", 1.4142135f), scalar("one", 1.0f), scalar("half", 0.5f)});
  model.graph.outputs.push_back({"e", 1, {int64_t{2}, int64_t{3}}});
  auto optimized = optimize_and_compare(model, 0);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "Erf"), 1);
  EXPECT_EQ(count_op(*optimized, "Gelu"), 0);
}

TEST(LayerNormFusion, DecomposedLayerNorm) {
  for (bool pow_form : {true, false}) {
    std::vector<w::Node> nodes = {
        {"ReduceMean", {"x"}, {"mean"}, {w::attr_ints("axes", {-1})}, "mean"},
        {"Sub", {"x", "mean"}, {"d"}, {}, "sub"},
        pow_form ? w::Node{"Pow", {"d", "two"}, {"sq"}, {}, "pow"} : w::Node{"Mul", {"d", "d"}, {"sq"}, {}, "square"},
        {"ReduceMean", {"sq"}, {"var"}, {w::attr_ints("axes", {-1})}, "var"},
        {"Add", {"var", "eps"}, {"ve"}, {}, "add_eps"},
        {"Sqrt", {"ve"}, {"std"}, {}, "sqrt"},
        {"Div", {"d", "std"}, {"n"}, {}, "div"},
        {"Mul", {"n", "gamma"}, {"g"}, {}, "gamma"},
        {"Add", {"beta", "g"}, {"y"}, {}, "beta"}};
    auto model = unary_model(5, 24, nodes,
                             {scalar("two", 2.0f), scalar("eps", 1e-5f), w::float_tensor("gamma", {24}, ramp(24, 0.3f)),
                              w::float_tensor("beta", {1, 24}, ramp(24, 0.05f))},
                             17);
    auto optimized = optimize_and_compare(model, 1e-5);
    ASSERT_TRUE(optimized);
    EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"LayerNormalization"})) << "pow form " << pow_form;
  }
}

TEST(LinearFusion, MatMulAddRelu) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {std::string("B"), int64_t{7}, int64_t{16}}}};
  model.graph.outputs = {{"y", 1, {std::string("B"), int64_t{7}, int64_t{9}}}};
  model.graph.initializers = {w::float_tensor("W", {16, 9}, ramp(144)), w::float_tensor("bias", {9}, ramp(9, 0.2f))};
  model.graph.nodes = {{"MatMul", {"x", "W"}, {"m"}, {}, "matmul"},
                       {"Add", {"m", "bias"}, {"a"}, {}, "add"},
                       {"Relu", {"a"}, {"y"}, {}, "relu"}};
  auto optimized = optimize_and_compare(model, 1e-5);
  ASSERT_TRUE(optimized);
  if (registered("com.nxrt", "FusedMatMul")) {
    EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"com.nxrt:FusedMatMul"}));
    EXPECT_EQ(optimized->graph().nodes[0].name, "matmul+add+relu");
  } else {
    EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"MatMul", "Add", "Relu"}));
  }
}

// A residual connection: MatMul + bias, then Add of the block's input (which another node also reads) and of a
// second branch; the Add's operand becomes FusedMatMul's Z. After an activation the Add stays.
TEST(LinearFusion, MatMulBiasResidualAdd) {
  for (bool with_activation : {false, true}) {
    w::Model model;
    model.graph.inputs = {{"x", 1, {std::string("B"), int64_t{7}, int64_t{16}}}};
    model.graph.outputs = {{"y", 1, {std::string("B"), int64_t{7}, int64_t{16}}}};
    model.graph.initializers = {w::float_tensor("W", {16, 16}, ramp(256)),
                                w::float_tensor("bias", {16}, ramp(16, 0.2f))};
    model.graph.nodes = {{"Relu", {"x"}, {"r"}, {}, "pre"},
                         {"MatMul", {"r", "W"}, {"m"}, {}, "matmul"},
                         {"Add", {"m", "bias"}, {"a"}, {}, "bias_add"}};
    std::string branch = "a";
    if (with_activation) {
      model.graph.nodes.push_back({"Sigmoid", {"a"}, {"s"}, {}, "act"});
      branch = "s";
    }
    model.graph.nodes.push_back({"Add", {"r", branch}, {"y"}, {}, "residual"});
    auto optimized = optimize_and_compare(model, 1e-5);
    ASSERT_TRUE(optimized);
    if (!registered("com.nxrt", "FusedMatMul")) continue;
    if (with_activation) {
      EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Relu", "com.nxrt:FusedMatMul", "Add"}));
    } else {
      EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Relu", "com.nxrt:FusedMatMul"}));
      EXPECT_EQ(optimized->graph().nodes[1].name, "matmul+bias_add+residual");
      EXPECT_EQ(optimized->graph().nodes[1].inputs.size(), 4u);
    }
  }
}

// Shapes reach the MatMul only through type completion: Softmax and Concat have no shape-inference rule, and the
// Transpose/Reshape after them must be re-inferred from the completed types.
TEST(LinearFusion, ShapesFlowThroughSoftmaxConcatTransposeReshape) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{1}, int64_t{3}, int64_t{8}}}};
  model.graph.outputs = {{"y", 1, {int64_t{1}, int64_t{4}, int64_t{5}}}};
  model.graph.initializers = {w::float_tensor("cls", {1, 1, 8}, ramp(8)),
                              w::int64_tensor("shape", {3}, {1, 4, 8}),
                              w::float_tensor("W", {8, 5}, ramp(40)), w::float_tensor("bias", {5}, ramp(5, 0.3f))};
  model.graph.nodes = {{"Softmax", {"x"}, {"s"}, {w::attr_int("axis", -1)}, "softmax"},
                       {"Concat", {"cls", "s"}, {"c"}, {w::attr_int("axis", 1)}, "concat"},
                       {"Transpose", {"c"}, {"t"}, {w::attr_ints("perm", {0, 2, 1})}, "transpose"},
                       {"Reshape", {"t", "shape"}, {"r"}, {}, "reshape"},
                       {"MatMul", {"r", "W"}, {"m"}, {}, "matmul"},
                       {"Add", {"m", "bias"}, {"y"}, {}, "add"}};
  auto optimized = optimize_and_compare(model, 1e-5);
  ASSERT_TRUE(optimized);
  if (registered("com.nxrt", "FusedMatMul")) {
    EXPECT_EQ(count_op(*optimized, "com.nxrt:FusedMatMul"), 1);
  }
}

TEST(LinearFusion, MatMulWithNonConstantWeightStays) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{3}, int64_t{4}}}, {"w", 1, {int64_t{4}, int64_t{5}}}};
  model.graph.outputs = {{"y", 1, {int64_t{3}, int64_t{5}}}};
  model.graph.nodes = {{"MatMul", {"x", "w"}, {"m"}, {}, "matmul"}, {"Relu", {"m"}, {"y"}, {}, "relu"}};
  auto optimized = optimize_and_compare(model, 0);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"MatMul", "Relu"}));
}

TEST(LinearFusion, GemmLeakyRelu) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{5}, int64_t{8}}}};
  model.graph.outputs = {{"y", 1, {int64_t{5}, int64_t{6}}}};
  model.graph.initializers = {w::float_tensor("W", {6, 8}, ramp(48)), w::float_tensor("C", {6}, ramp(6))};
  model.graph.nodes = {{"Gemm", {"x", "W", "C"}, {"g"}, {w::attr_int("transB", 1), w::attr_float("alpha", 0.5f)}, "gemm"},
                       {"LeakyRelu", {"g"}, {"y"}, {w::attr_float("alpha", 0.2f)}, "leaky"}};
  auto optimized = optimize_and_compare(model, 1e-5);
  ASSERT_TRUE(optimized);
  const std::vector<std::string> expected = registered("com.microsoft", "FusedGemm")
                                               ? std::vector<std::string>{"com.microsoft:FusedGemm"}
                                               : std::vector<std::string>{"Gemm", "LeakyRelu"};
  EXPECT_EQ(op_types(*optimized), expected);
}

TEST(LinearFusion, ConvAddRelu) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{1}, int64_t{2}, int64_t{6}, int64_t{6}}},
                        {"z", 1, {int64_t{1}, int64_t{3}, int64_t{6}, int64_t{6}}}};
  model.graph.outputs = {{"y", 1, {int64_t{1}, int64_t{3}, int64_t{6}, int64_t{6}}}};
  model.graph.initializers = {w::float_tensor("W", {3, 2, 3, 3}, ramp(54)), w::float_tensor("B", {3}, {0.1f, -0.2f, 0.3f})};
  model.graph.nodes = {{"Conv", {"x", "W", "B"}, {"c"}, {w::attr_ints("pads", {1, 1, 1, 1})}, "conv"},
                       {"Add", {"z", "c"}, {"a"}, {}, "add"},
                       {"Relu", {"a"}, {"y"}, {}, "relu"}};
  // Level 2: level 3 goes on to convert the FusedConv to the blocked layout (nchwc_layout_test.cpp).
  auto optimized = optimize_and_compare(model, 1e-5, 2);
  ASSERT_TRUE(optimized);
  if (registered("com.microsoft", "FusedConv")) {
    EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"com.microsoft:FusedConv"}));
  } else {
    EXPECT_EQ(count_op(*optimized, "Conv"), 1);
    EXPECT_EQ(count_op(*optimized, "com.microsoft:FusedConv"), 0);
  }
}

// A residual Add with no activation after it (a linear bottleneck's skip connection) fuses as Z too; an Add whose
// other operand broadcasts does not.
TEST(LinearFusion, ConvResidualAddWithoutActivation) {
  for (bool broadcast : {false, true}) {
    w::Model model;
    const std::vector<w::Dim> z_shape = broadcast ? std::vector<w::Dim>{int64_t{1}, int64_t{3}, int64_t{1}, int64_t{1}}
                                                  : std::vector<w::Dim>{int64_t{1}, int64_t{3}, int64_t{6}, int64_t{6}};
    model.graph.inputs = {{"x", 1, {int64_t{1}, int64_t{2}, int64_t{6}, int64_t{6}}}, {"z", 1, z_shape}};
    model.graph.outputs = {{"y", 1, {int64_t{1}, int64_t{3}, int64_t{6}, int64_t{6}}}};
    model.graph.initializers = {w::float_tensor("W", {3, 2, 3, 3}, ramp(54)),
                                w::float_tensor("B", {3}, {0.1f, -0.2f, 0.3f})};
    model.graph.nodes = {{"Conv", {"x", "W", "B"}, {"c"}, {w::attr_ints("pads", {1, 1, 1, 1})}, "conv"},
                         {"Add", {"c", "z"}, {"y"}, {}, "add"}};
    auto optimized = optimize_and_compare(model, 1e-5, 2);
    ASSERT_TRUE(optimized);
    const bool fuses = registered("com.microsoft", "FusedConv") && !broadcast;
    EXPECT_EQ(count_op(*optimized, "com.microsoft:FusedConv"), fuses ? 1 : 0) << "broadcast " << broadcast;
    EXPECT_EQ(count_op(*optimized, "Add"), fuses ? 0 : 1) << "broadcast " << broadcast;
  }
}

// Gated activations that read the conv output twice fuse too: y * Sigmoid(y) (SiLU, as YOLO-style exports write it)
// into Swish, y * Clip(y + 3, 0, 6) / 6 (Paddle's hard-swish) and the HardSwish op into HardSwish. When y has
// another reader, or a constant differs, the ops stay.
TEST(LinearFusion, ConvGatedActivations) {
  const auto model_with = [](std::vector<w::Node> tail, bool y_is_output) {
    w::Model model;
    model.graph.inputs = {{"x", 1, {int64_t{1}, int64_t{2}, int64_t{7}, int64_t{5}}}};
    model.graph.outputs = {{"y", 1, {}, false}};
    if (y_is_output) model.graph.outputs.push_back({"c", 1, {}, false});
    model.graph.initializers = {w::float_tensor("W", {3, 2, 3, 3}, ramp(54, 0.2f)),
                                w::float_tensor("B", {3}, {0.4f, -0.9f, 0.3f}), scalar("three", 3.0f),
                                scalar("zero", 0.0f), scalar("six", 6.0f), scalar("five", 5.0f)};
    model.graph.nodes = {{"Conv", {"x", "W", "B"}, {"c"}, {w::attr_ints("pads", {1, 1, 1, 1})}, "conv"}};
    for (w::Node& node : tail) model.graph.nodes.push_back(std::move(node));
    return model;
  };
  const std::vector<w::Node> silu = {{"Sigmoid", {"c"}, {"gate"}, {}, "sigmoid"},
                                     {"Mul", {"gate", "c"}, {"y"}, {}, "mul"}};
  const std::vector<w::Node> hard_swish = {{"Add", {"c", "three"}, {"shifted"}, {}, "add"},
                                           {"Clip", {"shifted", "zero", "six"}, {"clipped"}, {}, "clip"},
                                           {"Mul", {"c", "clipped"}, {"scaled"}, {}, "mul"},
                                           {"Div", {"scaled", "six"}, {"y"}, {}, "div"}};
  const std::vector<w::Node> hard_swish_op = {{"HardSwish", {"c"}, {"y"}, {}, "hard_swish"}};
  std::vector<w::Node> other_divisor = hard_swish;
  other_divisor.back().inputs[1] = "five";
  const bool fused_conv = registered("com.microsoft", "FusedConv");
  for (int level : {2, 99}) {
    SCOPED_TRACE(level);
    for (const auto& tail : {silu, hard_swish, hard_swish_op}) {
      auto optimized = optimize_and_compare(model_with(tail, false), 1e-5, level);
      ASSERT_TRUE(optimized);
      if (fused_conv && level == 2) {
        EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"com.microsoft:FusedConv"}));
      }
      EXPECT_EQ(count_op(*optimized, "Mul") + count_op(*optimized, "HardSwish"), 0);
    }
    for (const auto& [tail, y_is_output] : {std::pair{silu, true}, std::pair{other_divisor, false}}) {
      auto optimized = optimize_and_compare(model_with(tail, y_is_output), 1e-5, level);
      ASSERT_TRUE(optimized);
      EXPECT_EQ(count_op(*optimized, "com.microsoft:FusedConv"), 0);
    }
  }
}

// A Conv whose input type inference cannot follow (here an input declared without a type; in silero-vad's
// sequence model a chain through its padding ops) has no inferred output type: the fusion takes it from W.
TEST(LinearFusion, ConvReluFuseWithoutInferredTypes) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {}, false, false}};
  model.graph.outputs = {{"y", 1, {}, false, false}};
  model.graph.initializers = {w::float_tensor("W", {4, 3, 3}, ramp(36)), w::float_tensor("B", {4}, ramp(4))};
  model.graph.nodes = {{"Conv", {"x", "W", "B"}, {"c"}, {w::attr_ints("pads", {1, 1})}, "conv"},
                       {"Relu", {"c"}, {"y"}, {}, "relu"}};
  auto plain = create_session(model, 0);
  auto optimized = create_session(model, 2);
  ASSERT_TRUE(plain && optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"com.microsoft:FusedConv"}));
  auto x = Tensor::allocate(DataType::kFloat32, {2, 3, 5});
  ASSERT_TRUE(x);
  const std::vector<float> values = ramp(30, 0.3f);
  std::copy(values.begin(), values.end(), x->data<float>());
  const std::vector<std::string> names = {"x"};
  const std::vector<Tensor> inputs = {*x};
  auto expected = plain->run(names, inputs, {});
  auto actual = optimized->run(names, inputs, {});
  ASSERT_TRUE(expected && actual);
  ASSERT_EQ((*actual)[0].shape(), (Shape{2, 4, 5}));
  expect_identical_floats((*expected)[0], (*actual)[0]);
}

}  // namespace
}  // namespace nxrt::optimizer_test
