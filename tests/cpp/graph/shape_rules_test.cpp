// The rules of graph/shape_rules.cpp beyond the linear-algebra core (shape_inference_test.cpp): windows, Resize,
// Slice, Concat, and the fill-only mode the optimizer uses.
#include "graph/shape_rules.h"

#include <gtest/gtest.h>

#include <limits>

#include "graph/graph_test_util.h"
#include "graph/window_geometry.h"

namespace nxrt::graph {
namespace {

namespace w = onnx::write;

using testing::shape_of;

Expected<import::ImportedModel> import_only(const w::Model& model) {
  return testing::import_only(w::encode_model(model));
}

Expected<import::ImportedModel> import_and_infer(const w::Model& model) {
  return testing::import_and_infer(w::encode_model(model));
}

TEST(ShapeRules, WindowOpsResolveWithTheKernelsGeometry) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {std::string("N"), int64_t{3}, int64_t{17}, int64_t{12}}}};
  model.graph.initializers = {w::float_tensor("W", {8, 3, 3, 3}, std::vector<float>(216, 0.1f))};
  model.graph.nodes = {
      {"Conv", {"x", "W"}, {"c"}, {w::attr_ints("strides", {2, 2}), w::attr_ints("pads", {1, 1, 1, 1})}, "conv"},
      {"MaxPool", {"c"}, {"m"}, {w::attr_ints("kernel_shape", {2, 2}), w::attr_ints("strides", {2, 2}),
                                  w::attr_int("ceil_mode", 1)}, "max"},
      {"AveragePool", {"c"}, {"a"}, {w::attr_ints("kernel_shape", {3, 3}), w::attr_ints("strides", {2, 2}),
                                      w::attr_string("auto_pad", "SAME_UPPER")}, "avg"},
      {"GlobalAveragePool", {"a"}, {"g"}, {}, "gap"},
  };
  model.graph.outputs = {{"m", 1, {}, false}, {"g", 1, {}, false}};
  auto imported = import_and_infer(model);
  ASSERT_TRUE(imported) << imported.status().to_string();
  const Graph& g = imported->graph;
  // (17 + 2 - 3) / 2 + 1 = 9, (12 + 2 - 3) / 2 + 1 = 6
  EXPECT_EQ(shape_of(g, "c"), "tensor(float)[N,8,9,6]");
  // ceil((9 - 2) / 2) + 1 = 5, ceil((6 - 2) / 2) + 1 = 3
  EXPECT_EQ(shape_of(g, "m"), "tensor(float)[N,8,5,3]");
  EXPECT_EQ(shape_of(g, "a"), "tensor(float)[N,8,5,3]");
  EXPECT_EQ(shape_of(g, "g"), "tensor(float)[N,8,1,1]");

  // The same numbers from the geometry the kernels resolve with.
  auto attrs = parse_window_attrs(g.nodes[1]);
  ASSERT_TRUE(attrs);
  const int64_t spatial[] = {9, 6};
  auto geometry = resolve_geometry(*attrs, spatial, attrs->kernel_shape, "max");
  ASSERT_TRUE(geometry);
  EXPECT_EQ(geometry->out[0], 5);
  EXPECT_EQ(geometry->out[1], 3);
}

// A kernel whose dims each fit int64 but whose volume does not (MaxPool kernel_shape near 2^61 with SAME_UPPER,
// found by fuzz_kernel): INVALID_ARGUMENT, not an overflow in kernel_size().
TEST(ShapeRules, WindowWhoseKernelVolumeOverflowsIsRefused) {
  WindowAttrs attrs;
  attrs.auto_pad = AutoPad::kSameUpper;
  const int64_t spatial[] = {4, 4};
  const int64_t huge = int64_t{1} << 61;
  const int64_t kernel[] = {huge, huge};
  auto geometry = resolve_geometry(attrs, spatial, kernel, "pool");
  ASSERT_FALSE(geometry);
  EXPECT_EQ(geometry.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(geometry.status().message().find("kernel window dims"), std::string::npos) << geometry.status().message();
  // 4 x 4 output positions of 2^58 kernel positions each: 2^62 taps fit int64.
  const int64_t fits[] = {int64_t{1} << 57, 2};
  EXPECT_TRUE(resolve_geometry(attrs, spatial, fits, "pool"));
  // 2^61 kernel positions fit, but not 16 times as many taps (the pool sizes its work by them).
  const int64_t too_many_taps[] = {huge, 1};
  auto taps = resolve_geometry(attrs, spatial, too_many_taps, "pool");
  ASSERT_FALSE(taps);
  EXPECT_NE(taps.status().message().find("taps"), std::string::npos) << taps.status().message();
}

TEST(ShapeRules, WindowOpsThatDoNotResolveStayUnknownForTheKernel) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{1}, int64_t{3}, int64_t{2}, std::string("W")}}};
  model.graph.initializers = {w::float_tensor("K", {4, 3, 5, 5}, std::vector<float>(300, 0.1f))};
  model.graph.nodes = {
      {"Conv", {"x", "K"}, {"too_small"}, {}, "conv"},  // 2 < 5 rows: the kernel's error when it runs
      {"MaxPool", {"x"}, {"unknown_width"}, {w::attr_ints("kernel_shape", {1, 1})}, "pool"},
  };
  model.graph.outputs = {{"too_small", 1, {}, false}, {"unknown_width", 1, {}, false}};
  auto imported = import_and_infer(model);
  ASSERT_TRUE(imported) << imported.status().to_string();
  EXPECT_EQ(shape_of(imported->graph, "too_small"), "tensor(float)[?rank]");
  // Each spatial axis resolves on its own: an unknown input width leaves only the output width unknown.
  EXPECT_EQ(shape_of(imported->graph, "unknown_width"), "tensor(float)[1,3,2,?]");
}

// Exported detectors and OCR models take images of any size: their convs must keep rank and channels.
TEST(ShapeRules, WindowOpsOverSymbolicImagesKeepRankAndChannels) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {std::string("N"), int64_t{3}, std::string("H"), int64_t{31}}}};
  model.graph.initializers = {w::float_tensor("W", {16, 3, 3, 3}, std::vector<float>(432, 0.1f))};
  model.graph.nodes = {
      {"Conv", {"x", "W"}, {"c"}, {w::attr_ints("strides", {2, 2}), w::attr_ints("pads", {1, 1, 1, 1})}, "conv"},
      {"MaxPool", {"c"}, {"m"}, {w::attr_ints("kernel_shape", {3, 3}), w::attr_string("auto_pad", "SAME_UPPER")},
       "pool"},
  };
  model.graph.outputs = {{"m", 1, {}, false}};
  auto imported = import_and_infer(model);
  ASSERT_TRUE(imported) << imported.status().to_string();
  EXPECT_EQ(shape_of(imported->graph, "c"), "tensor(float)[N,16,?,16]");
  EXPECT_EQ(shape_of(imported->graph, "m"), "tensor(float)[N,16,?,16]");
}

// Every spatial axis symbolic (a detector taking any image size): the stand-in sizes of the unknown axes must not
// make the window volume overflow, or the whole shape would be lost.
TEST(ShapeRules, WindowOpsWithEverySpatialAxisSymbolicKeepRankAndChannels) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {std::string("N"), int64_t{3}, std::string("H"), std::string("W")}},
                        {"v", 1, {int64_t{1}, int64_t{2}, std::string("D"), std::string("H"), std::string("W")}}};
  model.graph.initializers = {w::float_tensor("W", {16, 3, 3, 3}, std::vector<float>(432, 0.1f)),
                              w::float_tensor("V", {4, 2, 5, 5, 5}, std::vector<float>(1000, 0.1f))};
  model.graph.nodes = {
      {"Conv", {"x", "W"}, {"c"}, {w::attr_ints("strides", {2, 2}), w::attr_ints("pads", {1, 1, 1, 1})}, "conv"},
      {"MaxPool", {"c"}, {"m"}, {w::attr_ints("kernel_shape", {3, 3}), w::attr_ints("dilations", {4, 4})}, "pool"},
      {"Conv", {"v", "V"}, {"c3"}, {w::attr_ints("dilations", {3, 3, 3})}, "conv3"},
      // A stride at int64's limit: the stand-in for the unknown axis would overflow, so the shape stays unknown.
      {"MaxPool", {"x"}, {"far"},
       {w::attr_ints("kernel_shape", {2, 2}), w::attr_ints("strides", {int64_t{9223372036854775807}, 1})}, "far"},
  };
  model.graph.outputs = {{"m", 1, {}, false}, {"c3", 1, {}, false}, {"far", 1, {}, false}};
  auto imported = import_and_infer(model);
  ASSERT_TRUE(imported) << imported.status().to_string();
  EXPECT_EQ(shape_of(imported->graph, "c"), "tensor(float)[N,16,?,?]");
  EXPECT_EQ(shape_of(imported->graph, "m"), "tensor(float)[N,16,?,?]");
  EXPECT_EQ(shape_of(imported->graph, "c3"), "tensor(float)[1,4,?,?,?]");
  EXPECT_EQ(shape_of(imported->graph, "far"), "tensor(float)[?rank]");
}

TEST(ShapeRules, ResizeFromConstantScalesOrSizes) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {std::string("N"), int64_t{8}, std::string("H"), int64_t{5}}}};
  model.graph.initializers = {
      w::float_tensor("scales", {4}, {1.0f, 1.0f, 2.0f, 1.5f}), w::int64_tensor("sizes", {4}, {1, 8, 10, 12}),
      w::float_tensor("spatial_scales", {2}, {0.5f, 0.5f}),     w::float_tensor("bad_scales", {4}, {1, 1, 0, 1}),
      w::int64_tensor("spatial_sizes", {2}, {7, 9})};
  model.graph.nodes = {
      {"Resize", {"x", "", "scales"}, {"by_scales"}, {}, "by_scales"},  // 5 * 1.5 = 7.5 -> 7
      {"Resize", {"x", "", "", "sizes"}, {"by_sizes"}, {}, "by_sizes"},
      {"Resize", {"x", "", "spatial_scales"}, {"by_axes"}, {w::attr_ints("axes", {-2, 3})}, "by_axes"},
      {"Resize", {"x", "", "", "spatial_sizes"}, {"not_larger"},
       {w::attr_ints("axes", {2, 3}), w::attr_string("keep_aspect_ratio_policy", "not_larger")}, "not_larger"},
      {"Resize", {"x", "", "bad_scales"}, {"bad"}, {}, "bad"},  // the kernel rejects a zero scale
  };
  model.graph.outputs = {{"by_scales", 1, {}, false}, {"by_sizes", 1, {}, false}, {"by_axes", 1, {}, false},
                         {"not_larger", 1, {}, false}, {"bad", 1, {}, false}};
  auto imported = import_and_infer(model);
  ASSERT_TRUE(imported) << imported.status().to_string();
  const Graph& g = imported->graph;
  EXPECT_EQ(shape_of(g, "by_scales"), "tensor(float)[N,8,?,7]");
  EXPECT_EQ(shape_of(g, "by_sizes"), "tensor(float)[1,8,10,12]");
  EXPECT_EQ(shape_of(g, "by_axes"), "tensor(float)[N,8,?,2]");
  EXPECT_EQ(shape_of(g, "not_larger"), "tensor(float)[N,8,?,?]");
  EXPECT_EQ(shape_of(g, "bad"), "tensor(float)[?rank]");
}

TEST(ShapeRules, SliceWithConstantBounds) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  w::Model model;
  model.graph.inputs = {{"x", 1, {std::string("B"), int64_t{10}, int64_t{7}}}};
  model.graph.initializers = {
      w::int64_tensor("starts", {2}, {1, kMax}),  w::int64_tensor("ends", {2}, {-1, kMin}),
      w::int64_tensor("axes", {2}, {1, -1}),      w::int64_tensor("steps", {2}, {3, -2}),
      w::int64_tensor("zero", {1}, {0}),          w::int64_tensor("all", {1}, {kMax}),
      w::int64_tensor("axis0", {1}, {0}),         w::int64_tensor("huge_step", {1}, {kMax}),
      w::int64_tensor("min_step", {1}, {kMin}),   w::int64_tensor("axis1", {1}, {1})};
  model.graph.nodes = {
      {"Slice", {"x", "starts", "ends", "axes", "steps"}, {"s"}, {}, "slice"},
      {"Slice", {"x", "zero", "all", "axis0"}, {"whole"}, {}, "whole_batch"},
      {"Slice", {"x", "zero", "all", "axis1", "huge_step"}, {"first"}, {}, "huge_step"},
      {"Slice", {"x", "all", "min_step", "axis1", "min_step"}, {"last"}, {}, "min_step"},
  };
  model.graph.outputs = {{"s", 1, {}, false}, {"whole", 1, {}, false}, {"first", 1, {}, false},
                         {"last", 1, {}, false}};
  auto imported = import_and_infer(model);
  ASSERT_TRUE(imported) << imported.status().to_string();
  const Graph& g = imported->graph;
  // axis 1: 1, 4, 7 (end 9); axis 2 backwards from 6 by 2: 6, 4, 2, 0
  EXPECT_EQ(shape_of(g, "s"), "tensor(float)[B,3,4]");
  EXPECT_EQ(shape_of(g, "whole"), "tensor(float)[B,10,7]");
  EXPECT_EQ(shape_of(g, "first"), "tensor(float)[B,1,7]");
  EXPECT_EQ(shape_of(g, "last"), "tensor(float)[B,1,7]");
}

TEST(ShapeRules, ConcatSumsTheAxisAndChecksTheOtherDims) {
  w::Model model;
  model.graph.inputs = {{"a", 1, {std::string("B"), int64_t{2}}}, {"b", 1, {std::string("B"), int64_t{5}}},
                        {"c", 1, {int64_t{4}, std::string("T")}}};
  model.graph.nodes = {{"Concat", {"a", "b"}, {"ab"}, {w::attr_int("axis", -1)}, "cat"},
                       {"Concat", {"a", "c"}, {"ac"}, {w::attr_int("axis", 1)}, "cat_symbolic"}};
  model.graph.outputs = {{"ab", 1, {}, false}, {"ac", 1, {}, false}};
  auto imported = import_and_infer(model);
  ASSERT_TRUE(imported) << imported.status().to_string();
  EXPECT_EQ(shape_of(imported->graph, "ab"), "tensor(float)[B,7]");
  EXPECT_EQ(shape_of(imported->graph, "ac"), "tensor(float)[4,?]");

  w::Model overflow = model;
  overflow.graph.inputs = {{"a", 1, {int64_t{1}, std::numeric_limits<int64_t>::max()}},
                           {"b", 1, {int64_t{1}, int64_t{5}}}, {"c", 1, {int64_t{1}, int64_t{1}}}};
  auto big = import_and_infer(overflow);
  ASSERT_TRUE(big) << big.status().to_string();
  EXPECT_EQ(shape_of(big->graph, "ab"), "tensor(float)[1,?]");

  w::Model conflicting = model;
  conflicting.graph.inputs[1] = {"b", 1, {int64_t{3}, int64_t{5}}};
  conflicting.graph.inputs[0] = {"a", 1, {int64_t{2}, int64_t{2}}};
  auto rejected = import_and_infer(conflicting);
  ASSERT_FALSE(rejected);
  EXPECT_EQ(rejected.status().code(), StatusCode::kInvalidGraph);
  EXPECT_NE(rejected.status().message().find("Concat node 'cat'"), std::string::npos) << rejected.status().to_string();
}

TEST(ShapeRules, FillOnlyModeKeepsTypesWhereTheRuleObjects) {
  w::Model model;
  model.graph.inputs = {{"a", 1, {int64_t{2}, int64_t{2}}}, {"b", 1, {int64_t{3}, int64_t{5}}}};
  model.graph.nodes = {{"Concat", {"a", "b"}, {"ab"}, {w::attr_int("axis", 1)}, "cat"},
                       {"Relu", {"a"}, {"r"}, {}, "relu"}};
  model.graph.outputs = {{"ab", 1, {}, false}, {"r", 11, {}, false}};
  auto imported = import_only(model);
  ASSERT_TRUE(imported) << imported.status().to_string();
  Graph& g = imported->graph;
  EXPECT_FALSE(infer_node_types(g, g.nodes[0], InferenceMode::kStrict).is_ok());
  EXPECT_TRUE(infer_node_types(g, g.nodes[0], InferenceMode::kFillOnly).is_ok());
  EXPECT_EQ(shape_of(g, "ab"), "tensor(float)[?rank]");
  // The output is declared double: fill-only mode leaves it for the kernel check; strict mode takes the rule's.
  ASSERT_TRUE(infer_node_types(g, g.nodes[1], InferenceMode::kFillOnly).is_ok());
  EXPECT_EQ(shape_of(g, "r"), "tensor(double)[?rank]");
  ASSERT_TRUE(infer_node_types(g, g.nodes[1], InferenceMode::kStrict).is_ok());
  EXPECT_EQ(shape_of(g, "r"), "tensor(float)[2,2]");
}

TEST(ShapeRules, EveryRuleIsInOneTable) {
  for (const char* op : {"Add", "Pow", "Max", "Relu", "Softmax", "LayerNormalization", "MatMul", "Gemm", "Transpose",
                         "Reshape", "Cast", "Constant", "Slice", "Concat", "Conv", "MaxPool", "AveragePool",
                         "GlobalAveragePool"}) {
    EXPECT_NE(find_shape_rule(op), nullptr) << op;
  }
  EXPECT_EQ(find_shape_rule("NoSuchOp"), nullptr);
}

TEST(ShapeRules, ContribRulesFollowTheSchemas) {
  w::Model model;
  model.opset_imports = {{"", 17}, {"com.microsoft", 1}};
  model.graph.inputs = {{"x", 1, {std::string("B"), std::string("S"), int64_t{16}}},
                        {"past", 1, {int64_t{2}, std::string("B"), int64_t{2}, int64_t{3}, int64_t{8}}},
                        {"ids", 6, {std::string("B"), std::string("S")}}};
  model.graph.initializers = {w::float_tensor("w", {16, 48}, std::vector<float>(768, 0.0f)),
                              w::float_tensor("g", {16}, std::vector<float>(16, 1.0f)),
                              w::float_tensor("word", {10, 16}, std::vector<float>(160, 0.0f)),
                              w::float_tensor("pos", {4, 16}, std::vector<float>(64, 0.0f))};
  model.graph.nodes = {
      {"FastGelu", {"x"}, {"f"}, {}, "fast_gelu", "com.microsoft"},
      {"SkipLayerNormalization", {"f", "x", "g"}, {"n", "mean", "inv", "sum"}, {}, "skip", "com.microsoft"},
      {"Attention", {"n", "w", "", "", ""}, {"a", "present"}, {w::attr_int("num_heads", 2)}, "attn", "com.microsoft"},
      {"EmbedLayerNormalization", {"ids", "", "word", "pos", "", "g", "g"}, {"e", "mask_index"}, {}, "embed",
       "com.microsoft"},
      {"Attention", {"x", "w", "", "", "past"}, {"a2", "present2"},
       {w::attr_int("num_heads", 2), w::attr_ints("qkv_hidden_sizes", {16, 16, 16})}, "attn_past",
       "com.microsoft"},
  };
  model.graph.outputs = {{"a", 1, {}, false}, {"present", 1, {}, false}, {"mean", 1, {}, false},
                         {"sum", 1, {}, false}, {"e", 1, {}, false}, {"mask_index", 6, {}, false},
                         {"a2", 1, {}, false}, {"present2", 1, {}, false}};
  auto imported = import_and_infer(model);
  ASSERT_TRUE(imported) << imported.status().to_string();
  const Graph& g = imported->graph;
  EXPECT_EQ(shape_of(g, "f"), "tensor(float)[B,S,16]");
  EXPECT_EQ(shape_of(g, "mean"), "tensor(float)[B,S,1]");
  EXPECT_EQ(shape_of(g, "sum"), "tensor(float)[B,S,16]");
  EXPECT_EQ(shape_of(g, "a"), "tensor(float)[B,S,16]");
  EXPECT_EQ(shape_of(g, "present"), "tensor(float)[2,B,2,S,8]");
  EXPECT_EQ(shape_of(g, "e"), "tensor(float)[B,S,16]");
  EXPECT_EQ(shape_of(g, "mask_index"), "tensor(int32)[B]");
  // The total length P + S is known only when both are.
  EXPECT_EQ(shape_of(g, "present2"), "tensor(float)[2,B,2,?,8]");
  EXPECT_NE(find_shape_rule("com.microsoft", "Attention"), nullptr);
  EXPECT_EQ(find_shape_rule("com.microsoft", "Relu"), nullptr);
  EXPECT_EQ(find_shape_rule("com.example", "Attention"), nullptr);
}

}  // namespace
}  // namespace nxrt::graph
