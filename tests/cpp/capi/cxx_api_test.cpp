// Header-only C++ wrapper (nxrt.hpp) over the C API.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capi/capi_test_util.h"
#include "nxrt/nxrt.hpp"
#include "session/default_models.h"

namespace {

using nxrt::cxx::Error;
using nxrt::cxx::Session;
using nxrt::cxx::SessionOptions;
using nxrt::cxx::Tensor;

TEST(CxxApi, SessionSignature) {
  Session session = Session::from_bytes(nxrt::mlp_model());
  EXPECT_EQ(session.input_names(), (std::vector<std::string>{"x"}));
  EXPECT_EQ(session.output_names(), (std::vector<std::string>{"y"}));
  nxrt::cxx::ValueInfo input = session.input_info(0);
  EXPECT_EQ(input.element_type, NXRT_TYPE_FLOAT);
  EXPECT_TRUE(input.rank_known);
  EXPECT_EQ(input.dims, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(input.dim_names, (std::vector<std::string>{"B", ""}));
  nxrt::cxx::ValueInfo output = session.output_info(0);
  EXPECT_EQ(output.dims, (std::vector<int64_t>{-1, 3}));
  EXPECT_THROW(session.input_info(1), Error);
}

TEST(CxxApi, RunsZeroCopyAndReturnsOwnedOutputs) {
  SessionOptions options;
  options.set_intra_op_threads(1).set_graph_optimization_level(NXRT_ENABLE_ALL);
  const std::string path = nxrt::capi_test::write_file("cxx_simple_add.onnx", nxrt::simple_add_model());
  Session session(path, &options);
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> y = {10, 20, 30, 40};
  Tensor tx = Tensor::wrap(x, {4});
  Tensor ty = Tensor::wrap(y, {4});
  EXPECT_EQ(tx.raw_data(), x.data());
  std::vector<Tensor> outputs = session.run({"x", "y"}, {tx, ty});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].shape(), (std::vector<int64_t>{4}));
  EXPECT_EQ(outputs[0].element_type(), NXRT_TYPE_FLOAT);
  EXPECT_EQ(outputs[0].to_vector<float>(), (std::vector<float>{12, 24, 36, 48}));
  std::vector<Tensor> named = session.run({"x", "y"}, {tx, ty}, {"z"});
  EXPECT_EQ(named.at(0).element_count(), 4);
  std::remove(path.c_str());
}

TEST(CxxApi, MlpMatchesReference) {
  Session session = Session::from_bytes(nxrt::mlp_model());
  Tensor x = Tensor::allocate<float>({2, 4});
  float* values = x.data<float>();
  for (int i = 0; i < 8; ++i) values[i] = 0.3f * static_cast<float>(i) - 1.0f;
  std::vector<Tensor> outputs = session.run({"x"}, {x});
  const std::vector<float> expected = nxrt::mlp_reference(std::vector<float>(values, values + 8));
  const std::vector<float> actual = outputs.at(0).to_vector<float>();
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5f);
}

TEST(CxxApi, ErrorsCarryCodeAndMessage) {
  try {
    Session session("/definitely/missing.onnx");
    FAIL() << "expected an exception";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), NXRT_NO_SUCHFILE);
    EXPECT_EQ(std::string(error.what()).rfind("[ONNXRuntimeError] : 3 : NO_SUCHFILE : ", 0), 0u) << error.what();
    EXPECT_NE(error.message().find("/definitely/missing.onnx"), std::string::npos);
  }

  Session session = Session::from_bytes(nxrt::simple_add_model());
  std::vector<float> x = {1, 2};
  Tensor tx = Tensor::wrap(x, {2});
  try {
    session.run({"x"}, {tx});
    FAIL() << "expected an exception";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), NXRT_INVALID_ARGUMENT);
  }
  EXPECT_THROW(session.run({"x", "y"}, {tx}), Error);
  EXPECT_THROW(tx.data<int32_t>(), Error);
  EXPECT_THROW(SessionOptions().set_intra_op_threads(-2), Error);
  EXPECT_THROW(Session::from_bytes(std::string("junk")), Error);
}

TEST(CxxApi, TensorOwnershipTransfers) {
  Tensor tensor = Tensor::allocate(NXRT_TYPE_INT32, {3});
  ASSERT_TRUE(tensor);
  Tensor moved = std::move(tensor);
  EXPECT_FALSE(tensor);
  EXPECT_EQ(moved.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  NxrtTensor* raw = moved.release();
  EXPECT_FALSE(moved);
  Tensor adopted(raw);
  EXPECT_EQ(adopted.shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(nxrt::cxx::version(), nxrt_version_string());
}

}  // namespace
