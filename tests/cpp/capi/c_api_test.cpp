// C API: sessions from bytes and files, signatures with symbolic dims, zero-copy runs, threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "capi/capi_test_util.h"
#include "session/default_models.h"

namespace {

using nxrt::capi_test::StatusPtr;

class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    add_bytes_ = nxrt::simple_add_model();
    ASSERT_NXRT_OK(nxrt_create_session_from_bytes(add_bytes_.data(), add_bytes_.size(), nullptr, &add_));
  }
  void TearDown() override { nxrt_release_session(add_); }

  // Runs simple_add on x, y (both [n]) and returns z.
  std::vector<float> run_add(std::vector<float>& x, std::vector<float>& y) {
    const int64_t dims[1] = {static_cast<int64_t>(x.size())};
    NxrtTensor* tx = nullptr;
    NxrtTensor* ty = nullptr;
    NxrtTensor* tz = nullptr;
    std::vector<float> result;
    StatusPtr status(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, x.data(), x.size() * 4, &tx));
    if (!status) status.reset(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, y.data(), y.size() * 4, &ty));
    const char* names[2] = {"x", "y"};
    const NxrtTensor* inputs[2] = {tx, ty};
    if (!status) status.reset(nxrt_session_run(add_, nullptr, names, inputs, 2, nullptr, 1, &tz));
    EXPECT_EQ(status, nullptr) << nxrt_status_string(status.get());
    if (!status) {
      void* data = nullptr;
      int64_t count = 0;
      StatusPtr s1(nxrt_tensor_get_data(tz, &data));
      StatusPtr s2(nxrt_tensor_get_element_count(tz, &count));
      const float* values = static_cast<const float*>(data);
      result.assign(values, values + count);
    }
    nxrt_release_tensor(tx);
    nxrt_release_tensor(ty);
    nxrt_release_tensor(tz);
    return result;
  }

  std::string add_bytes_;
  NxrtSession* add_ = nullptr;
};

TEST_F(CApiTest, ReportsSignatureWithSymbolicDims) {
  size_t inputs = 0, outputs = 0;
  ASSERT_NXRT_OK(nxrt_session_get_input_count(add_, &inputs));
  ASSERT_NXRT_OK(nxrt_session_get_output_count(add_, &outputs));
  ASSERT_EQ(inputs, 2u);
  ASSERT_EQ(outputs, 1u);
  const char* name = nullptr;
  ASSERT_NXRT_OK(nxrt_session_get_input_name(add_, 0, &name));
  EXPECT_STREQ(name, "x");
  ASSERT_NXRT_OK(nxrt_session_get_input_name(add_, 1, &name));
  EXPECT_STREQ(name, "y");
  ASSERT_NXRT_OK(nxrt_session_get_output_name(add_, 0, &name));
  EXPECT_STREQ(name, "z");

  NxrtElementType type = NXRT_TYPE_UNDEFINED;
  ASSERT_NXRT_OK(nxrt_session_get_input_element_type(add_, 0, &type));
  EXPECT_EQ(type, NXRT_TYPE_FLOAT);
  ASSERT_NXRT_OK(nxrt_session_get_output_element_type(add_, 0, &type));
  EXPECT_EQ(type, NXRT_TYPE_FLOAT);
  int64_t rank = 0;
  ASSERT_NXRT_OK(nxrt_session_get_input_rank(add_, 1, &rank));
  EXPECT_EQ(rank, 1);
  int64_t dim = 0;
  ASSERT_NXRT_OK(nxrt_session_get_input_dims(add_, 1, &dim, 1));
  EXPECT_EQ(dim, -1);
  const char* dim_name = nullptr;
  ASSERT_NXRT_OK(nxrt_session_get_input_dim_name(add_, 1, 0, &dim_name));
  EXPECT_STREQ(dim_name, "B");
  ASSERT_NXRT_OK(nxrt_session_get_output_dim_name(add_, 0, 0, &dim_name));
  EXPECT_STREQ(dim_name, "B");
}

TEST_F(CApiTest, MixedConcreteAndSymbolicDims) {
  const std::string bytes = nxrt::mlp_model();
  NxrtSession* mlp = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), nullptr, &mlp));
  int64_t dims[2] = {0, 0};
  ASSERT_NXRT_OK(nxrt_session_get_input_dims(mlp, 0, dims, 2));
  EXPECT_EQ(dims[0], -1);
  EXPECT_EQ(dims[1], 4);
  ASSERT_NXRT_OK(nxrt_session_get_output_dims(mlp, 0, dims, 2));
  EXPECT_EQ(dims[0], -1);
  EXPECT_EQ(dims[1], 3);
  const char* dim_name = nullptr;
  ASSERT_NXRT_OK(nxrt_session_get_input_dim_name(mlp, 0, 0, &dim_name));
  EXPECT_STREQ(dim_name, "B");
  ASSERT_NXRT_OK(nxrt_session_get_input_dim_name(mlp, 0, 1, &dim_name));
  EXPECT_STREQ(dim_name, "");

  StatusPtr small(nxrt_session_get_input_dims(mlp, 0, dims, 1));
  EXPECT_EQ(nxrt_status_code(small.get()), NXRT_INVALID_ARGUMENT);
  StatusPtr out_of_range(nxrt_session_get_input_dim_name(mlp, 0, 2, &dim_name));
  EXPECT_EQ(nxrt_status_code(out_of_range.get()), NXRT_INVALID_ARGUMENT);
  nxrt_release_session(mlp);
}

TEST_F(CApiTest, IndexOutOfRangeIsInvalidArgument) {
  const char* name = nullptr;
  StatusPtr status(nxrt_session_get_input_name(add_, 2, &name));
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nxrt_status_message(status.get())).find("index 2 is out of range (2 inputs)"),
            std::string::npos)
      << nxrt_status_message(status.get());
  StatusPtr output(nxrt_session_get_output_name(add_, 1, &name));
  EXPECT_EQ(nxrt_status_code(output.get()), NXRT_INVALID_ARGUMENT);
}

TEST_F(CApiTest, RunComputesTwoXPlusY) {
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> y = {10, 20, 30, 40};
  EXPECT_EQ(run_add(x, y), (std::vector<float>{12, 24, 36, 48}));
  std::vector<float> x7 = {0.5f, -1, 2, 3, 4, 5, 6};
  std::vector<float> y7 = {1, 1, 1, 1, 1, 1, -6};
  EXPECT_EQ(run_add(x7, y7), (std::vector<float>{2, -1, 5, 7, 9, 11, 6}));
}

TEST_F(CApiTest, WrappedTensorUsesCallerMemoryInPlace) {
  std::vector<float> x = {1, 2, 3};
  std::vector<float> y = {0, 0, 0};
  const int64_t dims[1] = {3};
  NxrtTensor* tx = nullptr;
  NxrtTensor* ty = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, x.data(), 12, &tx));
  ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, y.data(), 12, &ty));
  void* data = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_data(tx, &data));
  EXPECT_EQ(data, x.data());

  // Writes after wrapping are seen by the run: nothing was copied.
  x[0] = 100;
  y[2] = 7;
  const char* names[2] = {"x", "y"};
  const NxrtTensor* inputs[2] = {tx, ty};
  const char* output_names[1] = {"z"};
  NxrtTensor* tz = nullptr;
  ASSERT_NXRT_OK(nxrt_session_run(add_, nullptr, names, inputs, 2, output_names, 1, &tz));
  void* out = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_data(tz, &out));
  EXPECT_NE(out, x.data());
  EXPECT_NE(out, y.data());
  const float* z = static_cast<const float*>(out);
  EXPECT_EQ(z[0], 200.0f);
  EXPECT_EQ(z[1], 4.0f);
  EXPECT_EQ(z[2], 13.0f);
  EXPECT_EQ(x[0], 100.0f);  // inputs are only read
  size_t rank = 0;
  int64_t out_dims[1] = {0};
  NxrtElementType type = NXRT_TYPE_UNDEFINED;
  ASSERT_NXRT_OK(nxrt_tensor_get_rank(tz, &rank));
  ASSERT_NXRT_OK(nxrt_tensor_get_dims(tz, out_dims, 1));
  ASSERT_NXRT_OK(nxrt_tensor_get_element_type(tz, &type));
  EXPECT_EQ(rank, 1u);
  EXPECT_EQ(out_dims[0], 3);
  EXPECT_EQ(type, NXRT_TYPE_FLOAT);
  nxrt_release_tensor(tz);
  nxrt_release_tensor(ty);
  nxrt_release_tensor(tx);
}

TEST_F(CApiTest, CreateFromPathAndOptions) {
  const std::string path = nxrt::capi_test::write_file("simple_add.onnx", add_bytes_);
  NxrtSessionOptions* options = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_options(&options));
  ASSERT_NXRT_OK(nxrt_session_options_set_intra_op_threads(options, 2));
  ASSERT_NXRT_OK(nxrt_session_options_set_graph_optimization_level(options, NXRT_DISABLE_ALL));
  ASSERT_NXRT_OK(nxrt_session_options_add_free_dimension_override(options, "B", 4));
  NxrtSession* session = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session(path.c_str(), options, &session));
  nxrt_release_session_options(options);  // the session keeps its own copy

  float x[4] = {1, 2, 3, 4};
  float y[4] = {10, 20, 30, 40};
  const int64_t dims[1] = {4};
  NxrtTensor* tx = nullptr;
  NxrtTensor* ty = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, x, sizeof(x), &tx));
  ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, y, sizeof(y), &ty));
  const char* names[2] = {"y", "x"};  // any order
  const NxrtTensor* inputs[2] = {ty, tx};
  NxrtTensor* tz = nullptr;
  ASSERT_NXRT_OK(nxrt_session_run(session, nullptr, names, inputs, 2, nullptr, 1, &tz));
  void* out = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_data(tz, &out));
  const float* z = static_cast<const float*>(out);
  EXPECT_EQ(std::vector<float>(z, z + 4), (std::vector<float>{12, 24, 36, 48}));
  nxrt_release_tensor(tz);
  nxrt_release_tensor(tx);
  nxrt_release_tensor(ty);
  nxrt_release_session(session);
  std::remove(path.c_str());
}

TEST_F(CApiTest, MlpMatchesReference) {
  const std::string bytes = nxrt::mlp_model();
  NxrtSession* mlp = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), nullptr, &mlp));
  std::vector<float> x(5 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 7 % 11) - 5) / 4.0f;
  const int64_t dims[2] = {5, 4};
  NxrtTensor* tx = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 2, x.data(), x.size() * 4, &tx));
  const char* names[1] = {"x"};
  const NxrtTensor* inputs[1] = {tx};
  NxrtTensor* ty = nullptr;
  ASSERT_NXRT_OK(nxrt_session_run(mlp, nullptr, names, inputs, 1, nullptr, 1, &ty));
  int64_t out_dims[2] = {0, 0};
  ASSERT_NXRT_OK(nxrt_tensor_get_dims(ty, out_dims, 2));
  EXPECT_EQ(out_dims[0], 5);
  EXPECT_EQ(out_dims[1], 3);
  void* out = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_data(ty, &out));
  const std::vector<float> expected = nxrt::mlp_reference(x);
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(static_cast<float*>(out)[i], expected[i], 1e-5f) << i;
  nxrt_release_tensor(ty);
  nxrt_release_tensor(tx);
  nxrt_release_session(mlp);
}

TEST_F(CApiTest, AllocatedTensorIsZeroFilledAndDescribed) {
  const int64_t dims[3] = {2, 3, 4};
  NxrtTensor* tensor = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor(NXRT_TYPE_INT64, dims, 3, &tensor));
  int64_t count = 0;
  size_t bytes = 0;
  ASSERT_NXRT_OK(nxrt_tensor_get_element_count(tensor, &count));
  ASSERT_NXRT_OK(nxrt_tensor_get_byte_size(tensor, &bytes));
  EXPECT_EQ(count, 24);
  EXPECT_EQ(bytes, 24u * 8u);
  void* data = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_data(tensor, &data));
  ASSERT_NE(data, nullptr);
  const int64_t* values = static_cast<const int64_t*>(data);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(values[i], 0);
  int64_t out_dims[3] = {};
  ASSERT_NXRT_OK(nxrt_tensor_get_dims(tensor, out_dims, 3));
  EXPECT_EQ(out_dims[2], 4);
  StatusPtr small(nxrt_tensor_get_dims(tensor, out_dims, 2));
  EXPECT_EQ(nxrt_status_code(small.get()), NXRT_INVALID_ARGUMENT);
  nxrt_release_tensor(tensor);

  NxrtTensor* scalar = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor(NXRT_TYPE_DOUBLE, nullptr, 0, &scalar));
  ASSERT_NXRT_OK(nxrt_tensor_get_element_count(scalar, &count));
  EXPECT_EQ(count, 1);
  nxrt_release_tensor(scalar);
}

TEST_F(CApiTest, ConcurrentRunsOnOneSession) {
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this, t, &failures] {
      for (int i = 0; i < 25; ++i) {
        std::vector<float> x = {static_cast<float>(t), static_cast<float>(i)};
        std::vector<float> y = {1, 2};
        std::vector<float> z = run_add(x, y);
        if (z != std::vector<float>{2.0f * t + 1, 2.0f * i + 2}) ++failures[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures, (std::vector<int>{0, 0, 0, 0}));
}

TEST(CApiLibrary, VersionStatusAndTypeNames) {
  const std::string version = nxrt_version_string();
  ASSERT_FALSE(version.empty());
  EXPECT_EQ(std::count(version.begin(), version.end(), '.'), 2) << version;
  EXPECT_EQ(nxrt_status_code(nullptr), NXRT_OK);
  EXPECT_STREQ(nxrt_status_message(nullptr), "");
  EXPECT_STREQ(nxrt_status_string(nullptr), "OK");
  EXPECT_STREQ(nxrt_status_code_name(NXRT_NO_SUCHFILE), "NO_SUCHFILE");
  EXPECT_STREQ(nxrt_status_code_name(NXRT_EP_FAIL), "EP_FAIL");
  EXPECT_STREQ(nxrt_status_code_name(static_cast<NxrtStatusCode>(42)), "UNKNOWN");
  EXPECT_STREQ(nxrt_element_type_name(NXRT_TYPE_FLOAT), "float");
  EXPECT_STREQ(nxrt_element_type_name(NXRT_TYPE_INT64), "int64");
  EXPECT_STREQ(nxrt_element_type_name(static_cast<NxrtElementType>(99)), "undefined");
  EXPECT_EQ(NXRT_TYPE_BFLOAT16, 16);
  EXPECT_EQ(NXRT_INVALID_GRAPH, 10);
  nxrt_release_status(nullptr);
}

}  // namespace
