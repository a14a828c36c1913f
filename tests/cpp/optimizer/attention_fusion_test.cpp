// Attention fusion: MatMul(Q, Kt) [* / scalar] [+ mask] -> Softmax -> MatMul(., V) -> com.nxrt:FusedAttention,
// and the kernel's own checks.
#include "optimizer_test_util.h"

namespace nxrt::optimizer_test {
namespace {

constexpr int64_t kSeq = 37;

w::Model attention_model(const std::vector<int64_t>& batch, int64_t d, int64_t dv, const char* scale_op,
                         std::vector<int64_t> mask_shape) {
  auto dims = [&](int64_t a, int64_t b) {
    std::vector<w::Dim> out(batch.begin(), batch.end());
    out.push_back(a);
    out.push_back(b);
    return out;
  };
  w::Model model;
  model.graph.inputs = {{"q", 1, dims(kSeq, d)}, {"kt", 1, dims(d, kSeq)}, {"v", 1, dims(kSeq, dv)}};
  model.graph.outputs = {{"y", 1, dims(kSeq, dv)}};
  model.graph.nodes = {{"MatMul", {"q", "kt"}, {"s"}, {}, "qk"}};
  std::string scores = "s";
  if (scale_op != nullptr) {
    model.graph.initializers.push_back(scalar("c", 0.35f));
    model.graph.nodes.push_back({scale_op, {"s", "c"}, {"scaled"}, {}, "scale"});
    scores = "scaled";
  }
  if (!mask_shape.empty()) {
    int64_t count = 1;
    for (int64_t dim : mask_shape) count *= dim;
    std::vector<float> mask(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) mask[i] = (i % kSeq) > (i / kSeq) % kSeq ? -1e4f : 0.01f * (i % 5);
    model.graph.initializers.push_back(w::float_tensor("mask", mask_shape, mask));
    model.graph.nodes.push_back({"Add", {"mask", scores}, {"masked"}, {}, "add_mask"});
    scores = "masked";
  }
  model.graph.nodes.push_back({"Softmax", {scores}, {"p"}, {w::attr_int("axis", -1)}, "softmax"});
  model.graph.nodes.push_back({"MatMul", {"p", "v"}, {"y"}, {}, "pv"});
  return model;
}

TEST(AttentionFusion, MulScaleAndCausalMaskOverBatchAndHeads) {
  // 1 thread: one block of query rows per batch entry; 3 threads: two blocks (19 + 18 rows).
  for (int threads : {1, 3}) {
    auto optimized = optimize_and_compare(attention_model({2, 3}, 8, 5, "Mul", {kSeq, kSeq}), 1e-5, 99, threads);
    ASSERT_TRUE(optimized);
    EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"com.nxrt:FusedAttention"}));
    EXPECT_EQ(optimized->graph().nodes[0].name, "qk+attention");
  }
}

TEST(AttentionFusion, DivScaleWithBatchBroadcastMask) {
  auto optimized = optimize_and_compare(attention_model({2, 2}, 16, 16, "Div", {2, 1, 1, kSeq}), 1e-5);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"com.nxrt:FusedAttention"}));
}

TEST(AttentionFusion, UnscaledThreeDimensional) {
  auto optimized = optimize_and_compare(attention_model({3}, 4, 7, nullptr, {}), 1e-5);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(op_types(*optimized), (std::vector<std::string>{"com.nxrt:FusedAttention"}));
}

TEST(AttentionFusion, ProbabilitiesReadElsewhereBlockFusion) {
  w::Model model = attention_model({2}, 4, 4, "Mul", {});
  model.graph.outputs.push_back({"p", 1, {int64_t{2}, kSeq, kSeq}});
  auto optimized = optimize_and_compare(model, 1e-5);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:FusedAttention"), 0);
  EXPECT_EQ(count_op(*optimized, "Softmax"), 1);
}

TEST(AttentionFusion, SoftmaxOverAnotherAxisIsLeftAlone) {
  w::Model model = attention_model({2}, 4, 4, "Mul", {});
  for (w::Node& node : model.graph.nodes) {
    if (node.op_type == "Softmax") node.attributes = {w::attr_int("axis", 1)};
  }
  auto optimized = optimize_and_compare(model, 1e-5);
  ASSERT_TRUE(optimized);
  EXPECT_EQ(count_op(*optimized, "com.nxrt:FusedAttention"), 0);
}

// Q and V split into heads by Transpose [0, 2, 1, 3] of [B, S, H, D] projections, Y merged back the same way:
// the Transposes fold into the fused node (heads_last). With Y also read elsewhere they stay.
w::Model heads_model(bool y_read_elsewhere) {
  const int64_t b = 2, h = 3, d = 8, dv = 5;
  w::Model model;
  model.graph.inputs = {{"q4", 1, {b, kSeq, h, d}}, {"kt", 1, {b, h, d, kSeq}}, {"v4", 1, {b, kSeq, h, dv}}};
  model.graph.outputs = {{"y", 1, {b, kSeq, h, dv}}};
  std::vector<float> mask(static_cast<size_t>(kSeq * kSeq));
  for (int64_t i = 0; i < kSeq * kSeq; ++i) mask[i] = (i % kSeq) > (i / kSeq) ? -1e4f : 0.0f;
  model.graph.initializers = {scalar("c", 0.35f), w::float_tensor("mask", {kSeq, kSeq}, mask)};
  const auto swap = [](const char* in, const char* out, const char* name) {
    return w::Node{"Transpose", {in}, {out}, {w::attr_ints("perm", {0, 2, 1, 3})}, name};
  };
  model.graph.nodes = {swap("q4", "q", "q_heads"),
                       swap("v4", "v", "v_heads"),
                       {"MatMul", {"q", "kt"}, {"s"}, {}, "qk"},
                       {"Mul", {"s", "c"}, {"scaled"}, {}, "scale"},
                       {"Add", {"scaled", "mask"}, {"masked"}, {}, "add_mask"},
                       {"Softmax", {"masked"}, {"p"}, {w::attr_int("axis", -1)}, "softmax"},
                       {"MatMul", {"p", "v"}, {"o"}, {}, "pv"},
                       swap("o", "y", "merge_heads")};
  if (y_read_elsewhere) model.graph.outputs.push_back({"o", 1, {b, h, kSeq, dv}});
  return model;
}

TEST(AttentionFusion, HeadTransposesFoldIntoTheFusedNode) {
  for (int threads : {1, 3}) {
    auto optimized = optimize_and_compare(heads_model(false), 1e-5, 99, threads);
    ASSERT_TRUE(optimized);
    ASSERT_EQ(op_types(*optimized), (std::vector<std::string>{"com.nxrt:FusedAttention"}));
    const auto heads_last = optimized->graph().nodes[0].attr_int("heads_last", 0);
    ASSERT_TRUE(heads_last);
    EXPECT_EQ(*heads_last, 1);
  }
  auto kept = optimize_and_compare(heads_model(true), 1e-5);
  ASSERT_TRUE(kept);
  EXPECT_EQ(count_op(*kept, "com.nxrt:FusedAttention"), 1);
  EXPECT_EQ(count_op(*kept, "Transpose"), 3);
}

TEST(FusedAttentionKernel, RejectsMismatchedShapesAndMasks) {
  w::Model model;
  model.opset_imports = {{"", 21}, {"com.nxrt", 1}};
  model.graph.inputs = {{"q", 1, {int64_t{2}, int64_t{3}, int64_t{4}}},
                        {"kt", 1, {int64_t{2}, int64_t{4}, int64_t{5}}},
                        {"v", 1, {int64_t{2}, int64_t{5}, int64_t{6}}},
                        {"mask", 1, {int64_t{3}, int64_t{4}}}};
  model.graph.outputs = {{"y", 1, {int64_t{2}, int64_t{3}, int64_t{6}}}};
  w::Node node{"FusedAttention", {"q", "kt", "v", "mask"}, {"y"}, {}, "attention"};
  node.domain = "com.nxrt";
  model.graph.nodes = {node};
  auto session = create_session(model, 0);
  ASSERT_TRUE(session);
  auto inputs = random_inputs(*session, 1);
  std::vector<std::string> names;
  for (const ValueDesc& desc : session->inputs()) names.push_back(desc.name);
  auto outputs = session->run(names, inputs, {});
  ASSERT_FALSE(outputs);
  EXPECT_NE(outputs.status().to_string().find("does not broadcast to the scores [2,3,5]"), std::string::npos)
      << outputs.status().to_string();
  // heads_last wants Q [B, S, H, D], Kt [B, H, D, T], V [B, T, H, Dv]; these rank-3 inputs are not.
  node.attributes = {w::attr_int("heads_last", 1)};
  node.inputs = {"q", "kt", "v"};
  model.graph.nodes = {node};
  model.graph.inputs.pop_back();
  auto heads_session = create_session(model, 0);
  ASSERT_TRUE(heads_session);
  auto heads_inputs = random_inputs(*heads_session, 1);
  names.pop_back();
  auto heads_outputs = heads_session->run(names, heads_inputs, {});
  ASSERT_FALSE(heads_outputs);
  EXPECT_NE(heads_outputs.status().to_string().find("(heads_last)"), std::string::npos)
      << heads_outputs.status().to_string();
}

}  // namespace
}  // namespace nxrt::optimizer_test
