// C API error paths: codes, messages and NULL handling.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capi/capi_test_util.h"
#include "onnx/model_writer.h"
#include "session/default_models.h"

namespace {

using nxrt::capi_test::StatusPtr;

bool contains(const NxrtStatus* status, const std::string& text) {
  return std::string(nxrt_status_message(status)).find(text) != std::string::npos;
}

class CApiErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string bytes = nxrt::simple_add_model();
    ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), nullptr, &session_));
    ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims_, 1, x_, sizeof(x_), &x_tensor_));
    ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims_, 1, y_, sizeof(y_), &y_tensor_));
  }
  void TearDown() override {
    nxrt_release_tensor(x_tensor_);
    nxrt_release_tensor(y_tensor_);
    nxrt_release_session(session_);
  }

  // Runs with the given feeds; expects failure and returns the status.
  StatusPtr run_expecting_error(std::vector<const char*> names, std::vector<const NxrtTensor*> inputs) {
    NxrtTensor* output = reinterpret_cast<NxrtTensor*>(0x1);  // must be reset to NULL on failure
    StatusPtr status(
        nxrt_session_run(session_, nullptr, names.data(), inputs.data(), names.size(), nullptr, 1, &output));
    EXPECT_NE(status, nullptr);
    EXPECT_EQ(output, nullptr);
    return status;
  }

  NxrtSession* session_ = nullptr;
  float x_[3] = {1, 2, 3};
  float y_[3] = {4, 5, 6};
  int64_t dims_[1] = {3};
  NxrtTensor* x_tensor_ = nullptr;
  NxrtTensor* y_tensor_ = nullptr;
};

TEST(CApiLoadErrors, MissingFileIsNoSuchFile) {
  NxrtSession* session = nullptr;
  StatusPtr status(nxrt_create_session("/nonexistent/dir/model.onnx", nullptr, &session));
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_NO_SUCHFILE);
  EXPECT_TRUE(contains(status.get(), "/nonexistent/dir/model.onnx")) << nxrt_status_message(status.get());
  EXPECT_EQ(std::string(nxrt_status_string(status.get())).rfind("[ONNXRuntimeError] : 3 : NO_SUCHFILE : ", 0), 0u)
      << nxrt_status_string(status.get());
}

TEST(CApiLoadErrors, GarbageBytesAreInvalidProtobuf) {
  const std::string garbage = "\xff\xff\xff\xff this is not a protobuf \x07\x08";
  NxrtSession* session = nullptr;
  StatusPtr status(nxrt_create_session_from_bytes(garbage.data(), garbage.size(), nullptr, &session));
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_INVALID_PROTOBUF) << nxrt_status_string(status.get());

  const std::string path = nxrt::capi_test::write_file("garbage.onnx", garbage);
  StatusPtr from_file(nxrt_create_session(path.c_str(), nullptr, &session));
  EXPECT_EQ(nxrt_status_code(from_file.get()), NXRT_INVALID_PROTOBUF) << nxrt_status_string(from_file.get());
  std::remove(path.c_str());

  StatusPtr empty(nxrt_create_session_from_bytes(garbage.data(), 0, nullptr, &session));
  EXPECT_EQ(nxrt_status_code(empty.get()), NXRT_INVALID_PROTOBUF);
}

TEST_F(CApiErrorTest, MissingInput) {
  StatusPtr status = run_expecting_error({"x"}, {x_tensor_});
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_INVALID_ARGUMENT) << nxrt_status_string(status.get());
  EXPECT_TRUE(contains(status.get(), "y")) << nxrt_status_message(status.get());
}

TEST_F(CApiErrorTest, UnknownInputName) {
  StatusPtr status = run_expecting_error({"x", "y", "w"}, {x_tensor_, y_tensor_, y_tensor_});
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_INVALID_ARGUMENT) << nxrt_status_string(status.get());
  EXPECT_TRUE(contains(status.get(), "w")) << nxrt_status_message(status.get());
}

TEST_F(CApiErrorTest, WrongElementType) {
  int64_t values[3] = {1, 2, 3};
  NxrtTensor* ints = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_INT64, dims_, 1, values, sizeof(values), &ints));
  StatusPtr status = run_expecting_error({"x", "y"}, {ints, y_tensor_});
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_INVALID_ARGUMENT) << nxrt_status_string(status.get());
  EXPECT_TRUE(contains(status.get(), "x")) << nxrt_status_message(status.get());
  nxrt_release_tensor(ints);
}

TEST_F(CApiErrorTest, WrongRank) {
  float values[4] = {1, 2, 3, 4};
  const int64_t dims[2] = {2, 2};
  NxrtTensor* matrix = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 2, values, sizeof(values), &matrix));
  StatusPtr status = run_expecting_error({"x", "y"}, {x_tensor_, matrix});
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_INVALID_ARGUMENT) << nxrt_status_string(status.get());
  EXPECT_TRUE(contains(status.get(), "y")) << nxrt_status_message(status.get());
  nxrt_release_tensor(matrix);
}

TEST_F(CApiErrorTest, UnknownOutputAndWrongOutputCount) {
  const char* names[2] = {"x", "y"};
  const NxrtTensor* inputs[2] = {x_tensor_, y_tensor_};
  const char* bad_output[1] = {"nope"};
  NxrtTensor* output = nullptr;
  StatusPtr unknown(nxrt_session_run(session_, nullptr, names, inputs, 2, bad_output, 1, &output));
  EXPECT_EQ(nxrt_status_code(unknown.get()), NXRT_INVALID_ARGUMENT) << nxrt_status_string(unknown.get());
  EXPECT_TRUE(contains(unknown.get(), "nope")) << nxrt_status_message(unknown.get());

  NxrtTensor* outputs[2] = {nullptr, nullptr};
  StatusPtr count(nxrt_session_run(session_, nullptr, names, inputs, 2, nullptr, 2, outputs));
  EXPECT_EQ(nxrt_status_code(count.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(count.get(), "output_count is 2")) << nxrt_status_message(count.get());
}

TEST_F(CApiErrorTest, TerminatedRunFails) {
  NxrtRunOptions* run_options = nullptr;
  ASSERT_NXRT_OK(nxrt_create_run_options(&run_options));
  ASSERT_NXRT_OK(nxrt_run_options_set_tag(run_options, "test"));
  ASSERT_NXRT_OK(nxrt_run_options_set_terminate(run_options, 1));
  const char* names[2] = {"x", "y"};
  const NxrtTensor* inputs[2] = {x_tensor_, y_tensor_};
  NxrtTensor* output = nullptr;
  StatusPtr status(nxrt_session_run(session_, run_options, names, inputs, 2, nullptr, 1, &output));
  EXPECT_NE(status, nullptr);
  EXPECT_EQ(output, nullptr);

  ASSERT_NXRT_OK(nxrt_run_options_set_terminate(run_options, 0));
  ASSERT_NXRT_OK(nxrt_session_run(session_, run_options, names, inputs, 2, nullptr, 1, &output));
  nxrt_release_tensor(output);
  nxrt_release_run_options(run_options);
}

TEST_F(CApiErrorTest, NullArgumentsAreInvalidArgument) {
  size_t count = 0;
  const char* name = nullptr;
  NxrtSession* session = nullptr;
  NxrtTensor* tensor = nullptr;
  std::vector<StatusPtr> statuses;
  statuses.emplace_back(nxrt_create_session(nullptr, nullptr, &session));
  statuses.emplace_back(nxrt_create_session("model.onnx", nullptr, nullptr));
  statuses.emplace_back(nxrt_create_session_from_bytes(nullptr, 10, nullptr, &session));
  statuses.emplace_back(nxrt_session_get_input_count(nullptr, &count));
  statuses.emplace_back(nxrt_session_get_input_count(session_, nullptr));
  statuses.emplace_back(nxrt_session_get_output_name(session_, 0, nullptr));
  statuses.emplace_back(nxrt_session_get_input_dims(session_, 0, nullptr, 1));
  statuses.emplace_back(nxrt_create_session_options(nullptr));
  statuses.emplace_back(nxrt_session_options_set_intra_op_threads(nullptr, 1));
  statuses.emplace_back(nxrt_session_options_add_free_dimension_override(nullptr, "B", 1));
  statuses.emplace_back(nxrt_create_tensor(NXRT_TYPE_FLOAT, dims_, 1, nullptr));
  statuses.emplace_back(nxrt_create_tensor(NXRT_TYPE_FLOAT, nullptr, 1, &tensor));
  statuses.emplace_back(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims_, 1, nullptr, 12, &tensor));
  statuses.emplace_back(nxrt_tensor_get_data(nullptr, nullptr));
  statuses.emplace_back(nxrt_session_run(nullptr, nullptr, nullptr, nullptr, 0, nullptr, 0, nullptr));
  statuses.emplace_back(nxrt_session_run(session_, nullptr, nullptr, nullptr, 2, nullptr, 1, &tensor));
  statuses.emplace_back(nxrt_session_run(session_, nullptr, nullptr, nullptr, 0, nullptr, 1, nullptr));
  for (size_t i = 0; i < statuses.size(); ++i) {
    ASSERT_NE(statuses[i], nullptr) << "call " << i;
    EXPECT_EQ(nxrt_status_code(statuses[i].get()), NXRT_INVALID_ARGUMENT) << "call " << i;
    EXPECT_TRUE(contains(statuses[i].get(), "is NULL"))
        << "call " << i << ": " << nxrt_status_message(statuses[i].get());
  }
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(tensor, nullptr);
  EXPECT_TRUE(contains(statuses[0].get(), "nxrt_create_session: argument 'model_path'"))
      << nxrt_status_message(statuses[0].get());

  const char* names[2] = {"x", nullptr};
  const NxrtTensor* inputs[2] = {x_tensor_, y_tensor_};
  StatusPtr null_name(nxrt_session_run(session_, nullptr, names, inputs, 2, nullptr, 1, &tensor));
  EXPECT_EQ(nxrt_status_code(null_name.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(null_name.get(), "input_names[1] is NULL"));
  (void)name;
}

TEST(CApiTensorErrors, BadTensorSpecs) {
  float data[4] = {};
  const int64_t dims[2] = {2, 2};
  NxrtTensor* tensor = nullptr;
  StatusPtr too_small(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 2, data, 12, &tensor));
  EXPECT_EQ(nxrt_status_code(too_small.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(too_small.get(), "needs 16 bytes, got 12")) << nxrt_status_message(too_small.get());

  const int64_t negative[2] = {2, -1};
  StatusPtr bad_dim(nxrt_create_tensor(NXRT_TYPE_FLOAT, negative, 2, &tensor));
  EXPECT_EQ(nxrt_status_code(bad_dim.get()), NXRT_INVALID_ARGUMENT);

  StatusPtr bad_type(nxrt_create_tensor(static_cast<NxrtElementType>(99), dims, 2, &tensor));
  EXPECT_EQ(nxrt_status_code(bad_type.get()), NXRT_INVALID_ARGUMENT);
  StatusPtr undefined(nxrt_create_tensor(NXRT_TYPE_UNDEFINED, dims, 2, &tensor));
  EXPECT_EQ(nxrt_status_code(undefined.get()), NXRT_INVALID_ARGUMENT);

  StatusPtr strings(nxrt_create_tensor(NXRT_TYPE_STRING, dims, 2, &tensor));
  EXPECT_EQ(nxrt_status_code(strings.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(strings.get(), "nxrt_create_string_tensor"));
  EXPECT_EQ(tensor, nullptr);

  // An empty tensor may have no data at all.
  const int64_t empty[1] = {0};
  ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, empty, 1, nullptr, 0, &tensor));
  nxrt_release_tensor(tensor);
}

TEST(CApiOptionErrors, RejectsBadValues) {
  NxrtSessionOptions* options = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_options(&options));
  StatusPtr threads(nxrt_session_options_set_intra_op_threads(options, -1));
  EXPECT_EQ(nxrt_status_code(threads.get()), NXRT_INVALID_ARGUMENT);
  StatusPtr level(
      nxrt_session_options_set_graph_optimization_level(options, static_cast<NxrtGraphOptimizationLevel>(5)));
  EXPECT_EQ(nxrt_status_code(level.get()), NXRT_INVALID_ARGUMENT);
  StatusPtr dim(nxrt_session_options_add_free_dimension_override(options, "B", -3));
  EXPECT_EQ(nxrt_status_code(dim.get()), NXRT_INVALID_ARGUMENT);
  StatusPtr empty(nxrt_session_options_add_free_dimension_override(options, "", 3));
  EXPECT_EQ(nxrt_status_code(empty.get()), NXRT_INVALID_ARGUMENT);
  nxrt_release_session_options(options);
}

TEST(CApiOutputs, NeverAliasInputs) {
  nxrt::onnx::write::Model model;
  model.graph.inputs = {{"a", 1, {int64_t{3}}}};
  model.graph.outputs = {{"b", 1, {int64_t{3}}}};
  model.graph.nodes = {{"Identity", {"a"}, {"b"}, {}, "identity", ""}};
  const std::string bytes = nxrt::onnx::write::encode_model(model);
  NxrtSession* session = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), nullptr, &session));
  float a[3] = {1, 2, 3};
  const int64_t dims[1] = {3};
  NxrtTensor* input = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, a, sizeof(a), &input));
  const char* names[1] = {"a"};
  const NxrtTensor* inputs[1] = {input};
  NxrtTensor* output = nullptr;
  ASSERT_NXRT_OK(nxrt_session_run(session, nullptr, names, inputs, 1, nullptr, 1, &output));
  void* data = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_data(output, &data));
  EXPECT_NE(data, static_cast<void*>(a));
  a[0] = 50;
  EXPECT_EQ(static_cast<float*>(data)[0], 1.0f);
  EXPECT_EQ(static_cast<float*>(data)[2], 3.0f);
  nxrt_release_tensor(output);
  nxrt_release_tensor(input);
  nxrt_release_session(session);
}

}  // namespace
