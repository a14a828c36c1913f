// C API deployment settings: memory info, providers, shared thread pools, metadata, the versioned API table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capi/capi_test_util.h"
#include "onnx/model_writer.h"
#include "session/default_models.h"

namespace {

using nxrt::capi_test::StatusPtr;

TEST(CApiMemoryInfo, DescribesHostAndDeviceMemory) {
  NxrtMemoryInfo* cpu = nullptr;
  ASSERT_NXRT_OK(nxrt_create_cpu_memory_info(&cpu));
  NxrtDeviceType type = NXRT_DEVICE_CUDA;
  uint32_t vendor = 99;
  int id = -1;
  ASSERT_NXRT_OK(nxrt_memory_info_get_device_type(cpu, &type));
  ASSERT_NXRT_OK(nxrt_memory_info_get_vendor_id(cpu, &vendor));
  ASSERT_NXRT_OK(nxrt_memory_info_get_device_id(cpu, &id));
  EXPECT_EQ(type, NXRT_DEVICE_CPU);
  EXPECT_EQ(vendor, NXRT_VENDOR_ID_NONE);
  EXPECT_EQ(id, 0);

  NxrtMemoryInfo* cuda = nullptr;
  ASSERT_NXRT_OK(nxrt_create_memory_info(NXRT_DEVICE_CUDA, 1, &cuda));
  ASSERT_NXRT_OK(nxrt_memory_info_get_device_type(cuda, &type));
  ASSERT_NXRT_OK(nxrt_memory_info_get_vendor_id(cuda, &vendor));
  ASSERT_NXRT_OK(nxrt_memory_info_get_device_id(cuda, &id));
  EXPECT_EQ(type, NXRT_DEVICE_CUDA);
  EXPECT_EQ(vendor, NXRT_VENDOR_ID_NVIDIA);
  EXPECT_EQ(id, 1);

  // A tensor over "device" memory remembers its device; feeding it to a CPU session is an error.
  float fake_device_memory[2] = {0, 0};
  const int64_t dims[1] = {2};
  NxrtTensor* tensor = nullptr;
  ASSERT_NXRT_OK(nxrt_create_tensor_with_device_data(cuda, NXRT_TYPE_FLOAT, dims, 1, fake_device_memory, 8, &tensor));
  NxrtMemoryInfo* read_back = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_memory_info(tensor, &read_back));
  ASSERT_NXRT_OK(nxrt_memory_info_get_device_type(read_back, &type));
  EXPECT_EQ(type, NXRT_DEVICE_CUDA);
  nxrt_release_memory_info(read_back);

  const std::string bytes = nxrt::simple_add_model();
  NxrtSession* session = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), nullptr, &session));
  const char* names[2] = {"x", "y"};
  const NxrtTensor* inputs[2] = {tensor, tensor};
  NxrtTensor* z = nullptr;
  StatusPtr status(nxrt_session_run(session, nullptr, names, inputs, 2, nullptr, 1, &z));
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_INVALID_ARGUMENT);
  nxrt_release_session(session);
  nxrt_release_tensor(tensor);
  nxrt_release_memory_info(cuda);
  nxrt_release_memory_info(cpu);

  NxrtMemoryInfo* bad = nullptr;
  StatusPtr bad_cpu(nxrt_create_memory_info(NXRT_DEVICE_CPU, 1, &bad));
  EXPECT_EQ(nxrt_status_code(bad_cpu.get()), NXRT_INVALID_ARGUMENT);
  StatusPtr bad_type(nxrt_create_memory_info(static_cast<NxrtDeviceType>(7), 0, &bad));
  EXPECT_EQ(nxrt_status_code(bad_type.get()), NXRT_INVALID_ARGUMENT);
}

TEST(CApiProviders, CpuIsAvailableAndMissingProvidersFail) {
  const char* const* names = nullptr;
  size_t count = 0;
  ASSERT_NXRT_OK(nxrt_get_available_providers(&names, &count));
  ASSERT_GE(count, 1u);
  EXPECT_STREQ(names[0], "CPUExecutionProvider");

  NxrtSessionOptions* options = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_options(&options));
  ASSERT_NXRT_OK(nxrt_session_options_append_execution_provider(options, "CPU", nullptr, nullptr, 0));
  ASSERT_NXRT_OK(nxrt_session_options_append_execution_provider(options, "CPUExecutionProvider", nullptr, nullptr, 0));
  StatusPtr cuda(nxrt_session_options_append_execution_provider(options, "CUDAExecutionProvider", nullptr, nullptr, 0));
  EXPECT_EQ(nxrt_status_code(cuda.get()), NXRT_EP_FAIL);
  StatusPtr unknown(nxrt_session_options_append_execution_provider(options, "Banana", nullptr, nullptr, 0));
  EXPECT_EQ(nxrt_status_code(unknown.get()), NXRT_INVALID_ARGUMENT);
  const char* keys[1] = {"arena"};
  const char* values[1] = {"1"};
  StatusPtr cpu_option(nxrt_session_options_append_execution_provider(options, "CPU", keys, values, 1));
  EXPECT_EQ(nxrt_status_code(cpu_option.get()), NXRT_INVALID_ARGUMENT);
  nxrt_release_session_options(options);
}

TEST(CApiThreads, SessionsShareOnePool) {
  NxrtThreadPool* pool = nullptr;
  ASSERT_NXRT_OK(nxrt_create_thread_pool(3, &pool));
  int threads = 0;
  ASSERT_NXRT_OK(nxrt_thread_pool_get_num_threads(pool, &threads));
  EXPECT_EQ(threads, 3);
  NxrtSessionOptions* options = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_options(&options));
  ASSERT_NXRT_OK(nxrt_session_options_set_thread_pool(options, pool));
  nxrt_release_thread_pool(pool);  // the options keep it alive

  const std::string bytes = nxrt::simple_add_model();
  NxrtSession* first = nullptr;
  NxrtSession* second = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), options, &first));
  ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), options, &second));
  nxrt_release_session_options(options);
  ASSERT_NXRT_OK(nxrt_session_get_num_threads(first, &threads));
  EXPECT_EQ(threads, 3);
  ASSERT_NXRT_OK(nxrt_session_get_num_threads(second, &threads));
  EXPECT_EQ(threads, 3);
  nxrt_release_session(first);
  nxrt_release_session(second);

  StatusPtr negative(nxrt_create_thread_pool(-1, &pool));
  EXPECT_EQ(nxrt_status_code(negative.get()), NXRT_INVALID_ARGUMENT);
}

TEST(CApiMetadata, ReadsModelStringsAndCustomProps) {
  namespace w = nxrt::onnx::write;
  w::Model model;
  model.producer_name = "maker";
  model.producer_version = "2.1";
  model.doc_string = "adds";
  model.graph.name = "g";
  model.graph.inputs = {w::ValueInfo{"x", 1, {int64_t{2}}}};
  model.graph.outputs = {w::ValueInfo{"x_out", 1, {int64_t{2}}}};
  w::Node node;
  node.op_type = "Identity";
  node.inputs = {"x"};
  node.outputs = {"x_out"};
  model.graph.nodes = {node};
  model.metadata_props = {{"license", "MIT"}, {"author", "me"}};
  const std::string bytes = w::encode_model(model);
  NxrtSession* session = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), nullptr, &session));

  const char* value = nullptr;
  ASSERT_NXRT_OK(nxrt_session_get_metadata(session, NXRT_METADATA_PRODUCER_NAME, &value));
  EXPECT_STREQ(value, "maker");
  ASSERT_NXRT_OK(nxrt_session_get_metadata(session, NXRT_METADATA_PRODUCER_VERSION, &value));
  EXPECT_STREQ(value, "2.1");
  ASSERT_NXRT_OK(nxrt_session_get_metadata(session, NXRT_METADATA_GRAPH_NAME, &value));
  EXPECT_STREQ(value, "g");
  ASSERT_NXRT_OK(nxrt_session_get_metadata(session, NXRT_METADATA_DESCRIPTION, &value));
  EXPECT_STREQ(value, "adds");
  StatusPtr bad_field(nxrt_session_get_metadata(session, static_cast<NxrtMetadataField>(42), &value));
  EXPECT_EQ(nxrt_status_code(bad_field.get()), NXRT_INVALID_ARGUMENT);

  size_t count = 0;
  ASSERT_NXRT_OK(nxrt_session_get_custom_metadata_count(session, &count));
  ASSERT_EQ(count, 2u);
  const char* key = nullptr;
  ASSERT_NXRT_OK(nxrt_session_get_custom_metadata(session, 0, &key, &value));
  EXPECT_STREQ(key, "author");
  EXPECT_STREQ(value, "me");
  ASSERT_NXRT_OK(nxrt_session_lookup_custom_metadata(session, "license", &value));
  EXPECT_STREQ(value, "MIT");
  ASSERT_NXRT_OK(nxrt_session_lookup_custom_metadata(session, "absent", &value));
  EXPECT_EQ(value, nullptr);
  StatusPtr out_of_range(nxrt_session_get_custom_metadata(session, 2, &key, &value));
  EXPECT_EQ(nxrt_status_code(out_of_range.get()), NXRT_INVALID_ARGUMENT);
  int64_t version = -1;
  ASSERT_NXRT_OK(nxrt_session_get_model_version(session, &version));
  EXPECT_EQ(version, 0);
  nxrt_release_session(session);
}

TEST(CApiTable, VersionedTableMatchesThePlainFunctions) {
  EXPECT_EQ(nxrt_get_api(0), nullptr);
  EXPECT_EQ(nxrt_get_api(NXRT_API_VERSION + 1), nullptr);
  const NxrtApi* api = nxrt_get_api(1);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->version_string, &nxrt_version_string);
  EXPECT_EQ(api->session_run_with_binding, &nxrt_session_run_with_binding);

  const std::string bytes = nxrt::simple_add_model();
  NxrtSession* session = nullptr;
  NxrtStatus* status = api->create_session_from_bytes(bytes.data(), bytes.size(), nullptr, &session);
  ASSERT_EQ(status, nullptr) << api->status_string(status);
  size_t inputs = 0;
  ASSERT_EQ(api->session_get_input_count(session, &inputs), nullptr);
  EXPECT_EQ(inputs, 2u);
  api->release_session(session);
}

TEST(CApiRunOptions, TagRoundTrips) {
  NxrtRunOptions* options = nullptr;
  ASSERT_NXRT_OK(nxrt_create_run_options(&options));
  const char* tag = nullptr;
  ASSERT_NXRT_OK(nxrt_run_options_get_tag(options, &tag));
  EXPECT_STREQ(tag, "");
  ASSERT_NXRT_OK(nxrt_run_options_set_tag(options, "request-17"));
  ASSERT_NXRT_OK(nxrt_run_options_get_tag(options, &tag));
  EXPECT_STREQ(tag, "request-17");
  nxrt_release_run_options(options);
}

}  // namespace
