#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

std::vector<double> random_doubles(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-3.0, 3.0);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

graph::Node loss_node(const char* op, const char* reduction, std::optional<int64_t> ignore_index, int outputs = 1,
                      int opset = 13) {
  NodeBuilder builder(op, opset);
  builder.attr_string("reduction", reduction);
  if (ignore_index) builder.attr_int("ignore_index", *ignore_index);
  graph::Node node = builder.node();
  node.outputs.clear();
  for (int i = 0; i < outputs; ++i) node.outputs.push_back(100 + i);
  return node;
}

struct Expected3 {
  std::vector<double> log_prob;
  std::vector<double> losses;
  double sum = 0;
  double weight = 0;
};

// scores [n, c, inner]; labels [n, inner].
Expected3 reference(const std::vector<double>& scores, const std::vector<int64_t>& labels, int64_t n, int64_t c,
                    int64_t inner, const std::vector<double>& weights, std::optional<int64_t> ignore, bool softmax) {
  Expected3 e;
  e.log_prob = scores;
  if (softmax) {
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t i = 0; i < inner; ++i) {
        double sum = 0;
        for (int64_t k = 0; k < c; ++k) sum += std::exp(scores[(b * c + k) * inner + i]);
        for (int64_t k = 0; k < c; ++k) e.log_prob[(b * c + k) * inner + i] -= std::log(sum);
      }
    }
  }
  e.losses.assign(labels.size(), 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t label = labels[b * inner + i];
      if (ignore && label == *ignore) continue;
      const double w = weights.empty() ? 1.0 : weights[label];
      e.losses[b * inner + i] = -w * e.log_prob[(b * c + label) * inner + i];
      e.sum += e.losses[b * inner + i];
      e.weight += w;
    }
  }
  return e;
}

TEST(SoftmaxCrossEntropyLoss, AllReductionsWithWeightsAndNegativeIgnoreIndex) {
  const int64_t n = 3, c = 4, inner = 2;
  const auto scores = random_doubles(n * c * inner, 1);
  const std::vector<int64_t> labels{0, -1, 3, 2, -1, 1};
  const std::vector<double> weights{0.5, 1.0, 2.0, 1.5};
  const auto e = reference(scores, labels, n, c, inner, weights, -1, true);
  for (const char* reduction : {"none", "sum", "mean"}) {
    auto out = run_kernel(loss_node("SoftmaxCrossEntropyLoss", reduction, -1, 2),
                          {make_tensor<double>({n, c, inner}, scores), make_tensor<int64_t>({n, inner}, labels),
                           make_tensor<double>({c}, weights)});
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    const auto got = to_vector<double>((*out)[0]);
    const auto log_prob = to_vector<double>((*out)[1]);
    for (size_t i = 0; i < log_prob.size(); ++i) EXPECT_NEAR(log_prob[i], e.log_prob[i], 1e-12);
    if (std::string(reduction) == "none") {
      EXPECT_EQ((*out)[0].shape(), (Shape{n, inner}));
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], e.losses[i], 1e-12);
    } else {
      EXPECT_EQ((*out)[0].shape(), Shape{});
      EXPECT_NEAR(got[0], std::string(reduction) == "sum" ? e.sum : e.sum / e.weight, 1e-12);
    }
  }
}

TEST(SoftmaxCrossEntropyLoss, Float16Int32LabelsAndNoWeights) {
  const auto scores = random_doubles(2 * 3, 2);
  const std::vector<float> fscores(scores.begin(), scores.end());
  std::vector<double> rounded;
  for (float v : fscores) rounded.push_back(static_cast<float>(Float16(v)));
  const auto e = reference(rounded, {2, 0}, 2, 3, 1, {}, std::nullopt, true);
  Tensor y = run_one(loss_node("SoftmaxCrossEntropyLoss", "mean", std::nullopt),
                     {make_half_tensor<Float16>({2, 3}, fscores), make_tensor<int32_t>({2}, {2, 0})});
  ASSERT_EQ(y.dtype(), DataType::kFloat16);
  EXPECT_NEAR(static_cast<float>(y.data<Float16>()[0]), e.sum / 2, 2e-3);
}

TEST(NegativeLogLikelihoodLoss, MeanIgnoresLabelsAndNdInput) {
  const int64_t n = 2, c = 3, inner = 4;
  const auto input = random_doubles(n * c * inner, 3);
  const std::vector<int64_t> labels{0, 1, 2, 7, 7, 2, 1, 0};
  const auto e = reference(input, labels, n, c, inner, {}, 7, false);
  Tensor mean = run_one(loss_node("NegativeLogLikelihoodLoss", "mean", 7),
                        {make_tensor<double>({n, c, 2, 2}, input), make_tensor<int64_t>({n, 2, 2}, labels)});
  EXPECT_NEAR(to_vector<double>(mean)[0], e.sum / e.weight, 1e-12);
  Tensor none = run_one(loss_node("NegativeLogLikelihoodLoss", "none", 7),
                        {make_tensor<double>({n, c, 2, 2}, input), make_tensor<int64_t>({n, 2, 2}, labels)});
  EXPECT_EQ(none.shape(), (Shape{n, 2, 2}));
  const auto got = to_vector<double>(none);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], e.losses[i], 1e-12);
}

TEST(NegativeLogLikelihoodLoss, RejectsBadLabelsAndShapes) {
  const std::vector<float> input(6, -1.0f);
  auto out_of_range = run_kernel(loss_node("NegativeLogLikelihoodLoss", "sum", std::nullopt),
                                 {make_tensor<float>({2, 3}, input), make_tensor<int64_t>({2}, {0, 3})});
  EXPECT_EQ(out_of_range.status().code(), StatusCode::kInvalidArgument);
  auto negative = run_kernel(loss_node("NegativeLogLikelihoodLoss", "sum", std::nullopt),
                             {make_tensor<float>({2, 3}, input), make_tensor<int64_t>({2}, {-1, 0})});
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  auto bad_shape = run_kernel(loss_node("NegativeLogLikelihoodLoss", "sum", std::nullopt),
                              {make_tensor<float>({2, 3}, input), make_tensor<int64_t>({3}, {0, 0, 0})});
  EXPECT_EQ(bad_shape.status().code(), StatusCode::kInvalidArgument);
  auto bad_weights = run_kernel(loss_node("NegativeLogLikelihoodLoss", "sum", std::nullopt),
                                {make_tensor<float>({2, 3}, input), make_tensor<int64_t>({2}, {0, 1}),
                                 make_tensor<float>({2}, {1, 1})});
  EXPECT_EQ(bad_weights.status().code(), StatusCode::kInvalidArgument);
  auto bad_reduction = run_kernel(loss_node("NegativeLogLikelihoodLoss", "max", std::nullopt),
                                  {make_tensor<float>({2, 3}, input), make_tensor<int64_t>({2}, {0, 1})});
  EXPECT_EQ(bad_reduction.status().code(), StatusCode::kInvalidGraph);
}

TEST(NegativeLogLikelihoodLoss, ZeroBatch) {
  Tensor none = run_one(loss_node("NegativeLogLikelihoodLoss", "none", std::nullopt),
                        {make_tensor<float>({0, 3}, {}), make_tensor<int64_t>({0}, {})});
  EXPECT_EQ(none.shape(), (Shape{0}));
  Tensor sum = run_one(loss_node("NegativeLogLikelihoodLoss", "sum", std::nullopt),
                       {make_tensor<float>({0, 3}, {}), make_tensor<int64_t>({0}, {})});
  EXPECT_EQ(to_vector<float>(sum)[0], 0.0f);
}

}  // namespace
}  // namespace nxrt::cpu::testing
