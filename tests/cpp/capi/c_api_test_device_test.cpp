// The C API with the test execution provider (a second device on every machine): device feeds, outputs bound to
// device memory or allocated there, and the "session.disable_cpu_ep_fallback" config entry.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capi/capi_test_util.h"
#include "session/default_models.h"

namespace {

using nxrt::capi_test::StatusPtr;

class TestDeviceCApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NXRT_OK(nxrt_create_memory_info(NXRT_DEVICE_TEST, 0, &device_));
    ASSERT_NXRT_OK(nxrt_create_session_options(&options_));
    ASSERT_NXRT_OK(nxrt_session_options_append_execution_provider(options_, "TestDevice", nullptr, nullptr, 0));
  }
  void TearDown() override {
    for (NxrtTensor* tensor : tensors_) nxrt_release_tensor(tensor);
    nxrt_release_session_options(options_);
    nxrt_release_memory_info(device_);
  }

  // Test-device memory is host memory the session treats as the device's: the caller's vector stands for it.
  NxrtTensor* on_device(std::vector<float>& values) {
    const int64_t dims[1] = {static_cast<int64_t>(values.size())};
    NxrtTensor* tensor = nullptr;
    StatusPtr status(nxrt_create_tensor_with_device_data(device_, NXRT_TYPE_FLOAT, dims, 1, values.data(),
                                                         values.size() * sizeof(float), &tensor));
    EXPECT_EQ(status, nullptr) << nxrt_status_string(status.get());
    tensors_.push_back(tensor);
    return tensor;
  }

  NxrtMemoryInfo* device_ = nullptr;
  NxrtSessionOptions* options_ = nullptr;
  std::vector<NxrtTensor*> tensors_;
};

TEST_F(TestDeviceCApi, FeedsAndOutputsStayInDeviceMemory) {
  const std::string bytes = nxrt::simple_add_model();  // z = 2 * x + y: Mul on the CPU, Add on the device
  NxrtSession* session = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), options_, &session));
  NxrtIoBinding* binding = nullptr;
  ASSERT_NXRT_OK(nxrt_create_io_binding(session, &binding));
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30}, z(3, -1.0f);
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding, "x", on_device(x)));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding, "y", on_device(y)));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_output(binding, "z", on_device(z)));
  ASSERT_NXRT_OK(nxrt_session_run_with_binding(session, nullptr, binding));
  EXPECT_EQ(z, (std::vector<float>{12, 24, 36}));
  int in_place = 0;
  ASSERT_NXRT_OK(nxrt_io_binding_output_was_written_in_place(binding, 0, &in_place));
  EXPECT_EQ(in_place, 1);  // the device Add wrote into the bound device buffer

  // Allocated by the runtime on the device.
  nxrt_io_binding_clear_outputs(binding);
  ASSERT_NXRT_OK(nxrt_io_binding_bind_output_to_device(binding, "z", device_));
  ASSERT_NXRT_OK(nxrt_session_run_with_binding(session, nullptr, binding));
  NxrtTensor* output = nullptr;
  ASSERT_NXRT_OK(nxrt_io_binding_get_output(binding, 0, &output));
  NxrtMemoryInfo* where = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_memory_info(output, &where));
  NxrtDeviceType type = NXRT_DEVICE_CPU;
  ASSERT_NXRT_OK(nxrt_memory_info_get_device_type(where, &type));
  EXPECT_EQ(type, NXRT_DEVICE_TEST);
  void* data = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_data(output, &data));
  EXPECT_EQ(std::vector<float>(static_cast<float*>(data), static_cast<float*>(data) + 3),
            (std::vector<float>{12, 24, 36}));
  nxrt_release_memory_info(where);
  nxrt_release_tensor(output);

  // A plain run returns host memory.
  const char* input_names[2] = {"x", "y"};
  const NxrtTensor* inputs[2] = {tensors_[0], tensors_[1]};
  const char* output_names[1] = {"z"};
  NxrtTensor* host = nullptr;
  ASSERT_NXRT_OK(nxrt_session_run(session, nullptr, input_names, inputs, 2, output_names, 1, &host));
  ASSERT_NXRT_OK(nxrt_tensor_get_memory_info(host, &where));
  ASSERT_NXRT_OK(nxrt_memory_info_get_device_type(where, &type));
  EXPECT_EQ(type, NXRT_DEVICE_CPU);
  nxrt_release_memory_info(where);
  nxrt_release_tensor(host);
  nxrt_release_io_binding(binding);
  nxrt_release_session(session);
}

TEST_F(TestDeviceCApi, DisabledCpuFallbackRefusesNodesOnlyTheCpuRuns) {
  StatusPtr bad_value(nxrt_session_options_add_config_entry(options_, "session.disable_cpu_ep_fallback", "yes"));
  EXPECT_EQ(nxrt_status_code(bad_value.get()), NXRT_INVALID_ARGUMENT);
  ASSERT_NXRT_OK(nxrt_session_options_add_config_entry(options_, "session.some_other_key", "kept"));
  ASSERT_NXRT_OK(nxrt_session_options_add_config_entry(options_, "session.disable_cpu_ep_fallback", "1"));
  const std::string bytes = nxrt::simple_add_model();  // its Mul has no test-device kernel
  NxrtSession* session = nullptr;
  StatusPtr refused(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), options_, &session));
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(nxrt_status_code(refused.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nxrt_status_message(refused.get())).find("Mul node"), std::string::npos)
      << nxrt_status_message(refused.get());
}

TEST_F(TestDeviceCApi, TheTestProviderIsNotListedAsAvailable) {
  const char* const* names = nullptr;
  size_t count = 0;
  ASSERT_NXRT_OK(nxrt_get_available_providers(&names, &count));
  for (size_t i = 0; i < count; ++i) EXPECT_STRNE(names[i], "TestDeviceExecutionProvider");
  NxrtSessionOptions* options = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_options(&options));
  StatusPtr unknown(nxrt_session_options_append_execution_provider(options, "Bogus", nullptr, nullptr, 0));
  EXPECT_EQ(nxrt_status_code(unknown.get()), NXRT_INVALID_ARGUMENT);
  nxrt_release_session_options(options);
}

}  // namespace
