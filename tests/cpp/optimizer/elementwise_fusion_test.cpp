// Elementwise fusion and the com.nxrt:FusedElementwise kernel: fused results must equal the unfused graph bit for
// bit, at chunk-1 / chunk / chunk+1 sizes (1024 floats, 512 doubles per chunk), with one and two threads.
#include "optimizer_test_util.h"

namespace nxrt::optimizer_test {
namespace {

// The bench's WENO reconstruction (bench/suite/models.py weno_stencil) on `points` doubles.
w::Model weno_model(int64_t points) {
  w::Model model;
  auto& g = model.graph;
  g.inputs = {{"u", 11, {points + 4}}};
  g.outputs = {{"u_face", 11, {points}}};
  int counter = 0;
  const auto fresh = [&](const std::string& stem) { return stem + std::to_string(counter++); };
  const auto constant = [&](double value) {
    const std::string name = fresh("c");
    g.initializers.push_back(w::double_tensor(name, {}, {value}));
    return name;
  };
  const auto op = [&](const char* type, std::vector<std::string> inputs) {
    const std::string out = fresh("v");
    g.nodes.push_back({type, std::move(inputs), {out}, {}, out});
    return out;
  };
  g.initializers.push_back(w::int64_tensor("axis", {1}, {0}));
  std::vector<std::string> shifted;
  for (int64_t offset = 0; offset < 5; ++offset) {
    const std::string start = fresh("start");
    const std::string end = fresh("end");
    g.initializers.push_back(w::int64_tensor(start, {1}, {offset}));
    g.initializers.push_back(w::int64_tensor(end, {1}, {offset + points}));
    shifted.push_back(op("Slice", {"u", start, end, "axis"}));
  }
  const auto add = [&](std::string a, std::string b) { return op("Add", {a, b}); };
  const auto sub = [&](std::string a, std::string b) { return op("Sub", {a, b}); };
  const auto mul = [&](std::string a, std::string b) { return op("Mul", {a, b}); };
  const auto div = [&](std::string a, std::string b) { return op("Div", {a, b}); };
  const auto smoothness = [&](std::string a, std::string b, std::string c) {
    const std::string curvature = add(sub(a, mul(constant(2.0), b)), c);
    const std::string diff = sub(a, c);
    return add(mul(constant(13.0 / 12.0), mul(curvature, curvature)), mul(constant(0.25), mul(diff, diff)));
  };
  const std::string beta[3] = {smoothness(shifted[0], shifted[1], shifted[2]),
                               smoothness(shifted[1], shifted[2], shifted[3]),
                               smoothness(shifted[2], shifted[3], shifted[4])};
  const double weights[3] = {0.1, 0.6, 0.3};
  std::string alpha[3];
  for (int i = 0; i < 3; ++i) {
    const std::string shifted_beta = add(constant(1e-6), beta[i]);
    alpha[i] = div(constant(weights[i]), mul(shifted_beta, shifted_beta));
  }
  const std::string total = add(add(alpha[0], alpha[1]), alpha[2]);
  const auto poly = [&](int first, double ca, double cb, double cc) {
    return add(add(mul(constant(ca), shifted[first]), mul(constant(cb), shifted[first + 1])),
               mul(constant(cc), shifted[first + 2]));
  };
  const std::string stencils[3] = {poly(0, 2.0 / 6, -7.0 / 6, 11.0 / 6), poly(1, -1.0 / 6, 5.0 / 6, 2.0 / 6),
                                   poly(2, 2.0 / 6, 5.0 / 6, -1.0 / 6)};
  const std::string weighted =
      add(add(mul(alpha[0], stencils[0]), mul(alpha[1], stencils[1])), mul(alpha[2], stencils[2]));
  g.nodes.push_back({"Div", {weighted, total}, {"u_face"}, {}, "final_div"});
  return model;
}

TEST(ElementwiseFusion, WenoBecomesOneFusedNodeAndMatchesExactly) {
  for (int64_t points : {1, 511, 512, 513, 5000}) {
    const w::Model model = weno_model(points);
    auto reference = create_session(model, 0);
    ASSERT_TRUE(reference);
    for (int threads : {1, 2}) {
      auto optimized = create_session(model, 99, threads);
      ASSERT_TRUE(optimized);
      // The five Slices are absorbed: the fused node reads `u` at five offsets.
      EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"com.nxrt:FusedElementwise"})) << "points " << points;
      expect_same_outputs(*reference, *optimized, 0, static_cast<uint32_t>(points));
    }
  }
}

// A float group over a symbolic dim with every supported op, two outputs (one intermediate is a graph output)
// and an intermediate read by an op outside the group.
w::Model mixed_float_model() {
  w::Model model;
  auto& g = model.graph;
  const w::Dim b = std::string("B");
  g.inputs = {{"x", 1, {b}}, {"y", 1, {b}}};
  g.outputs = {{"out", 1, {b}}, {"mid", 1, {b}}, {"side", 1, {b}}};
  g.initializers = {scalar("three", 3.0f), scalar("one", 1.0f), scalar("half", 0.5f)};
  g.nodes = {
      {"Sigmoid", {"x"}, {"s"}, {}, "sigmoid"},
      {"Tanh", {"y"}, {"t"}, {}, "tanh"},
      {"Max", {"s", "t"}, {"mx"}, {}, "max"},
      {"Min", {"x", "mx"}, {"mn"}, {}, "min"},
      {"Abs", {"mn"}, {"ab"}, {}, "abs"},
      {"Add", {"ab", "one"}, {"ab1"}, {}, "add_one"},
      {"Log", {"ab1"}, {"lg"}, {}, "log"},
      {"Sqrt", {"ab1"}, {"sq"}, {}, "sqrt"},
      {"Pow", {"lg", "three"}, {"cube"}, {}, "pow"},
      {"Exp", {"cube"}, {"ex"}, {}, "exp"},
      {"Neg", {"ex"}, {"ng"}, {}, "neg"},
      {"Reciprocal", {"sq"}, {"rc"}, {}, "reciprocal"},
      {"Relu", {"ng"}, {"rl"}, {}, "relu"},
      {"Sub", {"rc", "rl"}, {"mid"}, {}, "sub"},
      {"Mul", {"half", "mid"}, {"hm"}, {}, "mul_half"},
      {"Div", {"hm", "y"}, {"out"}, {}, "div"},
      {"Softmax", {"mx"}, {"side"}, {w::attr_int("axis", 0)}, "softmax"},
  };
  return model;
}

TEST(ElementwiseFusion, MixedFloatOpsMatchExactlyAtChunkEdges) {
  const w::Model model = mixed_float_model();
  auto reference = create_session(model, 0);
  ASSERT_TRUE(reference);
  for (int threads : {1, 2}) {
    auto optimized = create_session(model, 99, threads);
    ASSERT_TRUE(optimized);
    EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"com.nxrt:FusedElementwise", "Softmax"}));
    for (int64_t size : {0, 1, 1023, 1024, 1025, 3000}) {
      expect_same_outputs(*reference, *optimized, 0, 11, size);
    }
  }
}

TEST(ElementwiseFusion, PathThroughOtherOpIsNotFusedIntoACycle) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{4}, int64_t{6}}}, {"y", 1, {int64_t{4}, int64_t{6}}}};
  model.graph.outputs = {{"z", 1, {int64_t{4}, int64_t{6}}}};
  model.graph.nodes = {{"Add", {"x", "y"}, {"a"}, {}, "add"},
                       {"Neg", {"a"}, {"n"}, {}, "neg"},
                       {"Softmax", {"a"}, {"s"}, {w::attr_int("axis", 1)}, "softmax"},
                       {"Mul", {"n", "s"}, {"m"}, {}, "mul"},
                       {"Sqrt", {"m"}, {"q"}, {}, "sqrt"},
                       {"Sub", {"q", "a"}, {"z"}, {}, "sub"}};
  auto optimized = optimize_and_compare(model, 0);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "Softmax"), 1);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:FusedElementwise"), 2);
}

// Slices of 2-D tensors: row blocks are contiguous and absorbed (also when the other axis is sliced whole), a
// column block is not.
TEST(ElementwiseFusion, AbsorbsOnlyContiguousSlices) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{6}, int64_t{5}}}, {"w", 1, {int64_t{3}, int64_t{8}}}};
  model.graph.outputs = {{"z", 1, {int64_t{3}, int64_t{5}}}};
  model.graph.initializers = {w::int64_tensor("s2", {1}, {2}), w::int64_tensor("e5", {1}, {5}),
                              w::int64_tensor("axis0", {1}, {0}), w::int64_tensor("s30", {2}, {3, 0}),
                              w::int64_tensor("e65", {2}, {6, 5}), w::int64_tensor("axes01", {2}, {0, 1}),
                              w::int64_tensor("s1", {1}, {1}), w::int64_tensor("e6", {1}, {6}),
                              w::int64_tensor("axis1", {1}, {1})};
  model.graph.nodes = {{"Slice", {"x", "s2", "e5", "axis0"}, {"rows"}, {}, "slice_rows"},
                       {"Slice", {"x", "s30", "e65", "axes01"}, {"block"}, {}, "slice_block"},
                       {"Slice", {"w", "s1", "e6", "axis1"}, {"cols"}, {}, "slice_cols"},
                       {"Add", {"rows", "block"}, {"a"}, {}, "add"},
                       {"Mul", {"a", "cols"}, {"z"}, {}, "mul"}};
  auto optimized = create_session(model, 99);
  auto reference = create_session(model, 0);
  ASSERT_TRUE(optimized && reference);
  for (uint32_t seed : {1u, 2u}) expect_same_outputs(*reference, *optimized, 0, seed);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Slice", "com.nxrt:FusedElementwise"}));
}

TEST(ElementwiseFusion, BroadcastingOpsStayUnfused) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{4}, int64_t{5}}}, {"y", 1, {int64_t{5}}}};
  model.graph.outputs = {{"z", 1, {int64_t{4}, int64_t{5}}}};
  model.graph.nodes = {{"Add", {"x", "y"}, {"a"}, {}, "add"}, {"Relu", {"a"}, {"z"}, {}, "relu"}};
  auto optimized = optimize_and_compare(model, 0);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"Add", "Relu"}));
}

TEST(ElementwiseFusion, LevelOneDoesNotFuse) {
  auto optimized = create_session(weno_model(16), 1);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:FusedElementwise"), 0);
}

w::Model hand_written_fused(std::vector<int64_t> operands, std::vector<std::string> ops, std::vector<int64_t> results,
                            std::vector<w::Attribute> extra = {}) {
  w::Model model;
  model.opset_imports = {{"", 21}, {"com.nxrt", 1}};
  model.graph.inputs = {{"x", 1, {int64_t{3}}}, {"y", 1, {int64_t{3}}}};
  model.graph.outputs = {{"z", 1, {int64_t{3}}}};
  w::Attribute names;
  names.name = "ops";
  names.type = 8;  // STRINGS
  names.strings = std::move(ops);
  model.graph.nodes = {{"FusedElementwise", {"x", "y"}, {"z"},
                        {names, w::attr_ints("operands", std::move(operands)), w::attr_ints("results", std::move(results)),
                         w::attr_tensor("constants", w::float_tensor("", {1}, {2.0f}))},
                        "fused", "com.nxrt"}};
  for (w::Attribute& attribute : extra) model.graph.nodes[0].attributes.push_back(std::move(attribute));
  return model;
}

TEST(FusedElementwiseKernel, RunsAHandWrittenProgram) {
  // z = (x + y) * 2 - x
  auto session = create_session(hand_written_fused({0, 1, 3, 2, 4, 0}, {"Add", "Mul", "Sub"}, {5}), 0);
  ASSERT_TRUE(session);
  std::vector<float> x = {1, 2, 3}, y = {4, 5, 6};
  auto out = session->run({{"x", "y"}}, {{Tensor::wrap(DataType::kFloat32, {3}, x.data()),
                                          Tensor::wrap(DataType::kFloat32, {3}, y.data())}}, {});
  ASSERT_TRUE(out) << out.status().to_string();
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*out)[0].data<float>()[i], (x[i] + y[i]) * 2 - x[i]);
}

TEST(FusedElementwiseKernel, RejectsMalformedPrograms) {
  std::vector<w::Model> bad = {
      hand_written_fused({0, 1, 9, 2}, {"Add", "Mul"}, {4}),    // operand names a later instruction
      hand_written_fused({0, 1}, {"Frobnicate"}, {3}),          // unknown op
      hand_written_fused({0, 1, 3, 2}, {"Add", "Mul"}, {7}),    // result names no instruction
      hand_written_fused({0, 1, 3}, {"Add", "Mul"}, {4}),       // operand count
  };
  bad.push_back(hand_written_fused({0, 1}, {"Add"}, {3}, {w::attr_ints("input_offsets", {1, -1})}));  // no shape
  for (const w::Model& model : bad) {
    auto session = Session::create_from_bytes(w::encode_model(model), {});
    ASSERT_FALSE(session.has_value());
    EXPECT_NE(session.status().message().find("fused"), std::string::npos) << session.status().to_string();
  }
}

TEST(FusedElementwiseKernel, InputOffsetsAreBoundsChecked) {
  // z[i] = x[i + offset] + y[i] over an output of shape [2]; offset 1 fits in x's 3 elements, offset 2 does not.
  for (int64_t offset : {1, 2}) {
    auto session = create_session(hand_written_fused({0, 1}, {"Add"}, {3},
                                                     {w::attr_ints("input_offsets", {offset, 0}),
                                                      w::attr_ints("output_shape", {2})}),
                                  0);
    ASSERT_TRUE(session);
    std::vector<float> x = {1, 2, 3}, y = {10, 20, 30};
    auto out = session->run({{"x", "y"}}, {{Tensor::wrap(DataType::kFloat32, {3}, x.data()),
                                            Tensor::wrap(DataType::kFloat32, {3}, y.data())}}, {});
    if (offset == 1) {
      ASSERT_TRUE(out) << out.status().to_string();
      ASSERT_EQ((*out)[0].shape(), Shape{2});
      EXPECT_EQ((*out)[0].data<float>()[0], 12.0f);
      EXPECT_EQ((*out)[0].data<float>()[1], 23.0f);
    } else {
      ASSERT_FALSE(out);
      EXPECT_NE(out.status().message().find("fewer than offset"), std::string::npos) << out.status().to_string();
    }
  }
}

}  // namespace
}  // namespace nxrt::optimizer_test
