// Run deadlines, the terminate flag and max_tensor_bytes through the C API, its versioned table and the C++
// wrapper. Runs that must stop would otherwise never end (an unbounded Loop); none of the assertions is timed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "capi/capi_test_util.h"
#include "nxrt/nxrt.hpp"
#include "nxrt/nxrt_api.h"
#include "onnx/model_writer.h"

namespace {

namespace w = nxrt::onnx::write;
using nxrt::capi_test::StatusPtr;

constexpr int32_t kFloat = 1;
constexpr int32_t kInt64 = 7;
constexpr int32_t kBool = 9;

// Loop(m) adding 1 to a [1] float per iteration.
std::string loop_model() {
  w::Graph body;
  body.name = "body";
  body.inputs = {{"i", kInt64, {}}, {"cond_in", kBool, {}}, {"acc_in", kFloat, {int64_t{1}}}};
  body.outputs = {{"cond_out", kBool, {}}, {"acc_out", kFloat, {int64_t{1}}}};
  body.initializers = {w::float_tensor("one", {1}, {1.0f})};
  body.nodes = {{"Identity", {"cond_in"}, {"cond_out"}}, {"Add", {"acc_in", "one"}, {"acc_out"}}};
  w::Model model;
  model.graph.inputs = {{"m", kInt64, {}}, {"start", kFloat, {int64_t{1}}}};
  model.graph.outputs = {{"total", kFloat, {int64_t{1}}}};
  model.graph.nodes = {{"Loop", {"m", "", "start"}, {"total"}, {w::attr_graph("body", body)}, "loop"}};
  return w::encode_model(model);
}

// y = ConstantOfShape(n): a float tensor of the shape the caller feeds.
std::string constant_of_shape_model() {
  w::Model model;
  model.graph.inputs = {{"n", kInt64, {int64_t{1}}}};
  model.graph.outputs = {{"y", kFloat, {}, false}};
  model.graph.nodes = {{"ConstantOfShape", {"n"}, {"y"}, {}, "fill"}};
  return w::encode_model(model);
}

std::string message_of(const NxrtStatus* status) { return nxrt_status_message(status); }

class CApiRunLimits : public ::testing::Test {
 protected:
  void TearDown() override {
    nxrt_release_tensor(m_tensor_);
    nxrt_release_tensor(start_tensor_);
    nxrt_release_session(session_);
    nxrt_release_session_options(options_);
  }

  void create_loop_session() {
    const std::string bytes = loop_model();
    ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), options_, &session_));
  }

  // Runs the loop for `trips` iterations; returns the status (null: OK).
  StatusPtr run_loop(int64_t trips, const NxrtRunOptions* run_options) {
    m_ = trips;
    nxrt_release_tensor(m_tensor_);
    nxrt_release_tensor(start_tensor_);
    m_tensor_ = start_tensor_ = nullptr;
    StatusPtr created(nxrt_create_tensor_with_data(NXRT_TYPE_INT64, nullptr, 0, &m_, sizeof(m_), &m_tensor_));
    if (created) return created;
    created.reset(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, start_dims_, 1, &start_, sizeof(start_),
                                               &start_tensor_));
    if (created) return created;
    const char* names[] = {"m", "start"};
    const NxrtTensor* inputs[] = {m_tensor_, start_tensor_};
    NxrtTensor* output = nullptr;
    StatusPtr status(nxrt_session_run(session_, run_options, names, inputs, 2, nullptr, 1, &output));
    nxrt_release_tensor(output);
    return status;
  }

  NxrtSessionOptions* options_ = nullptr;
  NxrtSession* session_ = nullptr;
  int64_t m_ = 0;
  float start_ = 0;
  int64_t start_dims_[1] = {1};
  NxrtTensor* m_tensor_ = nullptr;
  NxrtTensor* start_tensor_ = nullptr;
};

TEST_F(CApiRunLimits, SessionTimeoutStopsAnUnboundedLoop) {
  ASSERT_NXRT_OK(nxrt_create_session_options(&options_));
  ASSERT_NXRT_OK(nxrt_session_options_set_run_timeout_ms(options_, 40));
  create_loop_session();
  EXPECT_EQ(run_loop(5, nullptr), nullptr);
  StatusPtr status = run_loop(std::numeric_limits<int64_t>::max(), nullptr);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_FAIL);
  EXPECT_NE(message_of(status.get()).find("run_timeout_ms (40 ms)"), std::string::npos) << message_of(status.get());
  EXPECT_NE(message_of(status.get()).find("Name:'loop'"), std::string::npos) << message_of(status.get());
}

TEST_F(CApiRunLimits, RunOptionsTimeoutAndTerminate) {
  create_loop_session();
  NxrtRunOptions* run_options = nullptr;
  ASSERT_NXRT_OK(nxrt_create_run_options(&run_options));
  StatusPtr negative(nxrt_run_options_set_timeout_ms(run_options, -1));
  EXPECT_EQ(nxrt_status_code(negative.get()), NXRT_INVALID_ARGUMENT);

  ASSERT_NXRT_OK(nxrt_run_options_set_timeout_ms(run_options, 30));
  StatusPtr timed_out = run_loop(std::numeric_limits<int64_t>::max(), run_options);
  ASSERT_NE(timed_out, nullptr);
  EXPECT_NE(message_of(timed_out.get()).find("run_timeout_ms (30 ms)"), std::string::npos)
      << message_of(timed_out.get());

  // Terminate from another thread; the long timeout only turns a broken flag into a failure instead of a hang.
  ASSERT_NXRT_OK(nxrt_run_options_set_timeout_ms(run_options, 600'000));
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    StatusPtr set(nxrt_run_options_set_terminate(run_options, 1));
    EXPECT_EQ(set, nullptr);
  });
  StatusPtr terminated = run_loop(std::numeric_limits<int64_t>::max(), run_options);
  setter.join();
  ASSERT_NE(terminated, nullptr);
  EXPECT_EQ(nxrt_status_code(terminated.get()), NXRT_FAIL);
  EXPECT_NE(message_of(terminated.get()).find("Exiting due to terminate flag being set to true."), std::string::npos)
      << message_of(terminated.get());

  ASSERT_NXRT_OK(nxrt_run_options_set_terminate(run_options, 0));
  EXPECT_EQ(run_loop(3, run_options), nullptr);
  nxrt_release_run_options(run_options);
}

TEST_F(CApiRunLimits, InvalidOptionValues) {
  ASSERT_NXRT_OK(nxrt_create_session_options(&options_));
  StatusPtr negative(nxrt_session_options_set_run_timeout_ms(options_, -10));
  EXPECT_EQ(nxrt_status_code(negative.get()), NXRT_INVALID_ARGUMENT);
  StatusPtr null_options(nxrt_session_options_set_max_tensor_bytes(nullptr, 1));
  EXPECT_EQ(nxrt_status_code(null_options.get()), NXRT_INVALID_ARGUMENT);
  StatusPtr null_run_options(nxrt_run_options_set_timeout_ms(nullptr, 1));
  EXPECT_EQ(nxrt_status_code(null_run_options.get()), NXRT_INVALID_ARGUMENT);
}

TEST(CApiMaxTensorBytes, HugeOutputFailsNamingNodeOutputAndBytes) {
  NxrtSessionOptions* options = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_options(&options));
  ASSERT_NXRT_OK(nxrt_session_options_set_max_tensor_bytes(options, 1 << 20));
  const std::string bytes = constant_of_shape_model();
  NxrtSession* session = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), options, &session));
  nxrt_release_session_options(options);

  for (const int64_t count : {int64_t{1} << 30, int64_t{16}}) {
    int64_t n[1] = {count};
    int64_t dims[1] = {1};
    NxrtTensor* n_tensor = nullptr;
    ASSERT_NXRT_OK(nxrt_create_tensor_with_data(NXRT_TYPE_INT64, dims, 1, n, sizeof(n), &n_tensor));
    const char* names[] = {"n"};
    const NxrtTensor* inputs[] = {n_tensor};
    NxrtTensor* output = nullptr;
    StatusPtr status(nxrt_session_run(session, nullptr, names, inputs, 1, nullptr, 1, &output));
    if (count == 16) {
      EXPECT_EQ(status, nullptr) << nxrt_status_string(status.get());
      int64_t elements = 0;
      ASSERT_NXRT_OK(nxrt_tensor_get_element_count(output, &elements));
      EXPECT_EQ(elements, 16);
    } else {
      ASSERT_NE(status, nullptr);
      EXPECT_EQ(output, nullptr);
      EXPECT_EQ(nxrt_status_code(status.get()), NXRT_INVALID_ARGUMENT);
      const std::string message = message_of(status.get());
      EXPECT_NE(message.find("ConstantOfShape node. Name:'fill'"), std::string::npos) << message;
      EXPECT_NE(message.find("output 'y'"), std::string::npos) << message;
      EXPECT_NE(message.find("needs 4294967296 bytes, more than max_tensor_bytes (1048576)"), std::string::npos)
          << message;
    }
    nxrt_release_tensor(output);
    nxrt_release_tensor(n_tensor);
  }
  nxrt_release_session(session);
}

TEST(CApiMaxTensorBytes, InitializerOverTheLimitFailsSessionCreation) {
  w::Model model;
  model.graph.initializers = {w::float_tensor("weights", {256}, std::vector<float>(256, 1.0f))};
  model.graph.outputs = {{"y", kFloat, {}, false}};
  model.graph.nodes = {{"Identity", {"weights"}, {"y"}}};
  const std::string bytes = w::encode_model(model);
  NxrtSessionOptions* options = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_options(&options));
  ASSERT_NXRT_OK(nxrt_session_options_set_max_tensor_bytes(options, 1000));
  NxrtSession* session = nullptr;
  StatusPtr status(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), options, &session));
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_NE(message_of(status.get()).find("initializer 'weights'"), std::string::npos) << message_of(status.get());
  nxrt_release_session_options(options);
}

TEST(CApiRunLimitsTable, VersionTwoMembersAreThePlainFunctions) {
  EXPECT_GE(NXRT_API_VERSION, 2u);
  const NxrtApi* api = nxrt_get_api(2);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->session_options_set_run_timeout_ms, &nxrt_session_options_set_run_timeout_ms);
  EXPECT_EQ(api->session_options_set_max_tensor_bytes, &nxrt_session_options_set_max_tensor_bytes);
  EXPECT_EQ(api->run_options_set_timeout_ms, &nxrt_run_options_set_timeout_ms);
  EXPECT_EQ(nxrt_get_api(1)->create_session, api->create_session);  // older versions get the same table
}

TEST(CxxRunLimits, WrapperSetsBothLimits) {
  nxrt::cxx::SessionOptions options;
  options.set_run_timeout_ms(600'000).set_max_tensor_bytes(1 << 20);
  EXPECT_THROW(options.set_run_timeout_ms(-1), nxrt::cxx::Error);
  nxrt::cxx::Session session = nxrt::cxx::Session::from_bytes(loop_model(), &options);
  nxrt::cxx::RunOptions run_options;
  run_options.set_timeout_ms(25);
  std::vector<int64_t> m = {std::numeric_limits<int64_t>::max()};
  std::vector<float> start = {0};
  nxrt::cxx::Tensor m_tensor = nxrt::cxx::Tensor::wrap(m, {});
  nxrt::cxx::Tensor start_tensor = nxrt::cxx::Tensor::wrap(start, {1});
  try {
    session.run({"m", "start"}, {m_tensor, start_tensor}, {}, &run_options);
    ADD_FAILURE() << "an unbounded Loop returned";
  } catch (const nxrt::cxx::Error& error) {
    EXPECT_EQ(error.code(), NXRT_FAIL);
    EXPECT_NE(error.message().find("run_timeout_ms (25 ms)"), std::string::npos) << error.message();
  }
}

}  // namespace
