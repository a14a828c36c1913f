#include <cmath>
#include <cstdint>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

graph::Node training_node(NodeBuilder& builder, int outputs) {
  graph::Node node = builder.node();
  node.domain = "ai.onnx.preview.training";
  node.opset = 1;
  node.outputs.clear();
  for (int i = 0; i < outputs; ++i) node.outputs.push_back(100 + i);
  return node;
}

TEST(Adagrad, UpdatesTwoTensorsInDouble) {
  NodeBuilder builder("Adagrad", 1);
  builder.attr_float("decay_factor", 0.1f).attr_float("epsilon", 1e-6f).attr_float("norm_coefficient", 0.01f);
  const std::vector<double> x1{1.0, -2.0}, g1{0.5, 0.25}, h1{0.1, 0.2};
  const std::vector<double> x2{3.0}, g2{-1.0}, h2{0.0};
  auto out = run_kernel(training_node(builder, 4),
                        {make_tensor<float>({}, {0.1f}), make_tensor<int64_t>({}, {3}), make_tensor<double>({2}, x1),
                         make_tensor<double>({1}, x2), make_tensor<double>({2}, g1), make_tensor<double>({1}, g2),
                         make_tensor<double>({2}, h1), make_tensor<double>({1}, h2)});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  ASSERT_EQ(out->size(), 4u);
  const double r = static_cast<double>(0.1f) / (1 + 3 * static_cast<double>(0.1f));
  const auto check = [&](const std::vector<double>& x, const std::vector<double>& g, const std::vector<double>& h,
                         const Tensor& x_new, const Tensor& h_new) {
    for (size_t i = 0; i < x.size(); ++i) {
      const double gr = 0.01f * x[i] + g[i];
      const double hn = h[i] + gr * gr;
      EXPECT_NEAR(to_vector<double>(h_new)[i], hn, 1e-12);
      EXPECT_NEAR(to_vector<double>(x_new)[i], x[i] - r * gr / (std::sqrt(hn) + 1e-6f), 1e-9);
    }
  };
  check(x1, g1, h1, (*out)[0], (*out)[2]);
  check(x2, g2, h2, (*out)[1], (*out)[3]);
}

TEST(Momentum, StandardAndNesterov) {
  for (const char* mode : {"standard", "nesterov"}) {
    for (int64_t t : {0, 5}) {
      NodeBuilder builder("Momentum", 1);
      builder.attr_float("alpha", 0.9f).attr_float("beta", 0.5f).attr_float("norm_coefficient", 0.0f)
          .attr_string("mode", mode);
      auto out = run_kernel(training_node(builder, 2),
                            {make_tensor<float>({}, {0.1f}), make_tensor<int64_t>({}, {t}),
                             make_tensor<float>({2}, {1, 2}), make_tensor<float>({2}, {0.5f, -1}),
                             make_tensor<float>({2}, {0.2f, 0.4f})});
      ASSERT_TRUE(out.has_value()) << out.status().to_string();
      const float beta = t > 0 ? 0.5f : 1.0f;
      const std::vector<float> x{1, 2}, g{0.5f, -1}, v{0.2f, 0.4f};
      for (size_t i = 0; i < 2; ++i) {
        const float vn = 0.9f * v[i] + beta * g[i];
        const float xn = std::string(mode) == "standard" ? x[i] - 0.1f * vn : x[i] - 0.1f * (g[i] + 0.9f * vn);
        EXPECT_NEAR(to_vector<float>((*out)[1])[i], vn, 1e-6);
        EXPECT_NEAR(to_vector<float>((*out)[0])[i], xn, 1e-6);
      }
    }
  }
  NodeBuilder missing("Momentum", 1);
  missing.attr_float("alpha", 0.9f);
  auto bad = run_kernel(training_node(missing, 2),
                        {make_tensor<float>({}, {0.1f}), make_tensor<int64_t>({}, {0}), make_tensor<float>({1}, {1}),
                         make_tensor<float>({1}, {1}), make_tensor<float>({1}, {1})});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidGraph);
}

TEST(Adam, MatchesFormulaWithBiasCorrection) {
  NodeBuilder builder("Adam", 1);
  builder.attr_float("alpha", 0.9f).attr_float("beta", 0.99f).attr_float("epsilon", 1e-8f)
      .attr_float("norm_coefficient", 0.001f).attr_float("norm_coefficient_post", 0.01f);
  const std::vector<double> x{1.5, -0.5}, g{0.1, 0.3}, v{0.01, 0.02}, h{0.001, 0.002};
  auto out = run_kernel(training_node(builder, 3),
                        {make_tensor<double>({}, {0.05}), make_tensor<int64_t>({}, {4}), make_tensor<double>({2}, x),
                         make_tensor<double>({2}, g), make_tensor<double>({2}, v), make_tensor<double>({2}, h)});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  const double alpha = 0.9f, beta = 0.99f;
  const double r = 0.05 * std::sqrt(1 - std::pow(beta, 4)) / (1 - std::pow(alpha, 4));
  for (size_t i = 0; i < 2; ++i) {
    const double gr = 0.001f * x[i] + g[i];
    const double vn = alpha * v[i] + (1 - alpha) * gr;
    const double hn = beta * h[i] + (1 - beta) * gr * gr;
    const double xn = (1 - static_cast<double>(0.01f)) * (x[i] - r * vn / (std::sqrt(hn) + 1e-8f));
    EXPECT_NEAR(to_vector<double>((*out)[0])[i], xn, 1e-12);
    EXPECT_NEAR(to_vector<double>((*out)[1])[i], vn, 1e-12);
    EXPECT_NEAR(to_vector<double>((*out)[2])[i], hn, 1e-12);
  }
}

TEST(Adam, RejectsMismatchedStateAndInputCount) {
  NodeBuilder builder("Adam", 1);
  auto mismatched = run_kernel(training_node(builder, 3),
                               {make_tensor<float>({}, {0.1f}), make_tensor<int64_t>({}, {1}),
                                make_tensor<float>({2}, {1, 2}), make_tensor<float>({2}, {1, 2}),
                                make_tensor<float>({1}, {1}), make_tensor<float>({2}, {1, 2})});
  EXPECT_EQ(mismatched.status().code(), StatusCode::kInvalidArgument);
  auto count = run_kernel(training_node(builder, 3),
                          {make_tensor<float>({}, {0.1f}), make_tensor<int64_t>({}, {1}),
                           make_tensor<float>({2}, {1, 2}), make_tensor<float>({2}, {1, 2}),
                           make_tensor<float>({2}, {1, 2})});
  EXPECT_EQ(count.status().code(), StatusCode::kInvalidArgument);
  auto too_few_outputs = run_kernel(training_node(builder, 2),
                                    {make_tensor<float>({}, {0.1f}), make_tensor<int64_t>({}, {1}),
                                     make_tensor<float>({1}, {1}), make_tensor<float>({1}, {1}),
                                     make_tensor<float>({1}, {1}), make_tensor<float>({1}, {1})});
  EXPECT_EQ(too_few_outputs.status().code(), StatusCode::kInvalidArgument);
  auto empty = run_kernel(training_node(builder, 3),
                          {make_tensor<float>({}, {0.1f}), make_tensor<int64_t>({}, {1}), make_tensor<float>({0}, {}),
                           make_tensor<float>({0}, {}), make_tensor<float>({0}, {}), make_tensor<float>({0}, {})});
  ASSERT_TRUE(empty.has_value()) << empty.status().to_string();
  EXPECT_EQ((*empty)[0].shape(), Shape{0});
}

}  // namespace
}  // namespace nxrt::cpu::testing
