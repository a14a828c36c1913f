// Embedded default models: lookup, file export and the plain C++ MLP reference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "capi/capi_test_util.h"
#include "onnx/model_proto.h"
#include "session/default_models.h"

namespace {

TEST(DefaultModels, LookupByName) {
  EXPECT_EQ(nxrt::default_model_names(), (std::vector<std::string_view>{"simple_add", "mlp"}));
  nxrt::Expected<std::string> add = nxrt::default_model("simple_add");
  ASSERT_TRUE(add);
  EXPECT_EQ(*add, nxrt::simple_add_model());
  nxrt::Expected<std::string> mlp = nxrt::default_model("mlp");
  ASSERT_TRUE(mlp);
  EXPECT_EQ(*mlp, nxrt::mlp_model());
  nxrt::Expected<std::string> missing = nxrt::default_model("resnet");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), nxrt::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("known: simple_add, mlp"), std::string::npos);
}

TEST(DefaultModels, ModelsParseWithExpectedStructure) {
  // The parsed model points into its bytes, which must outlive it.
  const std::string add_bytes = nxrt::simple_add_model();
  nxrt::Expected<nxrt::onnx::ModelProto> add = nxrt::onnx::parse_model(add_bytes);
  ASSERT_TRUE(add) << add.status().to_string();
  ASSERT_EQ(add->opset_import.size(), 1u);
  EXPECT_EQ(add->opset_import[0].version, 21);
  ASSERT_EQ(add->graph->node.size(), 2u);
  EXPECT_EQ(add->graph->node[0].op_type, "Mul");
  EXPECT_EQ(add->graph->node[1].op_type, "Add");
  ASSERT_EQ(add->graph->input.size(), 2u);
  EXPECT_EQ(add->graph->input[0].type.shape.at(0).dim_param, "B");

  const std::string mlp_bytes = nxrt::mlp_model();
  nxrt::Expected<nxrt::onnx::ModelProto> mlp = nxrt::onnx::parse_model(mlp_bytes);
  ASSERT_TRUE(mlp) << mlp.status().to_string();
  EXPECT_EQ(mlp->graph->node.size(), 6u);
  EXPECT_EQ(mlp->graph->initializer.size(), 4u);
  EXPECT_EQ(mlp->graph->output[0].type.shape.at(1).dim_value, 3);
}

TEST(DefaultModels, MlpReferenceByHand) {
  // x = 0: hidden = relu(b1) = [0, 0, 0.05, 0, 0, 0.05, 0, 0]; y_pre[j] = 0.05 * (W2[2][j] + W2[5][j]) + b2[j].
  const std::vector<float> y = nxrt::mlp_reference(std::vector<float>(4, 0.0f));
  ASSERT_EQ(y.size(), 3u);
  auto w2 = [](int i, int j) { return static_cast<float>((i * 3 + j) % 5 - 2) / 8.0f; };
  for (int j = 0; j < 3; ++j) {
    const float pre = 0.05f * (w2(2, j) + w2(5, j)) + static_cast<float>(j - 1) / 10.0f;
    EXPECT_NEAR(y[j], 1.0f / (1.0f + std::exp(-pre)), 1e-6f) << j;
  }
  EXPECT_EQ(nxrt::mlp_reference(std::vector<float>(12, 0.5f)).size(), 9u);
}

TEST(DefaultModels, WriteToFile) {
  const std::string path = nxrt::capi_test::temp_path("written_mlp.onnx");
  ASSERT_TRUE(nxrt::write_default_model("mlp", path).is_ok());
  EXPECT_EQ(nxrt::capi_test::read_file(path), nxrt::mlp_model());
  std::remove(path.c_str());
  nxrt::Status bad_dir = nxrt::write_default_model("mlp", "/nonexistent/dir/x.onnx");
  EXPECT_EQ(bad_dir.code(), nxrt::StatusCode::kNoSuchFile);
  EXPECT_EQ(nxrt::write_default_model("nope", path).code(), nxrt::StatusCode::kInvalidArgument);
}

}  // namespace
