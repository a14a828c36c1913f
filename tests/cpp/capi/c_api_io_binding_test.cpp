// C API IO binding: in-place outputs, copy fallback for view outputs, runtime-allocated outputs, errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capi/capi_test_util.h"
#include "onnx/model_writer.h"
#include "session/default_models.h"

namespace {

using nxrt::capi_test::StatusPtr;

// out = Identity(x) over [B] floats: the output is a view of the input, so a bound output is copied.
std::string identity_model() {
  namespace w = nxrt::onnx::write;
  w::Model model;
  model.graph.name = "identity";
  model.graph.inputs = {w::ValueInfo{"x", 1, {std::string("B")}}};
  model.graph.outputs = {w::ValueInfo{"out", 1, {std::string("B")}}};
  w::Node node;
  node.op_type = "Identity";
  node.inputs = {"x"};
  node.outputs = {"out"};
  model.graph.nodes = {node};
  return w::encode_model(model);
}

class IoBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string bytes = nxrt::simple_add_model();
    ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), nullptr, &session_));
    ASSERT_NXRT_OK(nxrt_create_io_binding(session_, &binding_));
  }
  void TearDown() override {
    nxrt_release_io_binding(binding_);
    for (NxrtTensor* tensor : tensors_) nxrt_release_tensor(tensor);
    nxrt_release_session(session_);
  }

  NxrtTensor* wrap(std::vector<float>& values) {
    const int64_t dims[1] = {static_cast<int64_t>(values.size())};
    NxrtTensor* tensor = nullptr;
    StatusPtr status(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, values.data(), values.size() * 4,
                                                  &tensor));
    EXPECT_EQ(status, nullptr) << nxrt_status_string(status.get());
    tensors_.push_back(tensor);
    return tensor;
  }

  NxrtSession* session_ = nullptr;
  NxrtIoBinding* binding_ = nullptr;
  std::vector<NxrtTensor*> tensors_;
};

TEST_F(IoBindingTest, WritesBoundOutputInPlace) {
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30}, z(3, -1.0f);
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding_, "x", wrap(x)));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding_, "y", wrap(y)));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_output(binding_, "z", wrap(z)));
  ASSERT_NXRT_OK(nxrt_session_run_with_binding(session_, nullptr, binding_));
  EXPECT_EQ(z, (std::vector<float>{12, 24, 36}));
  int in_place = 0;
  ASSERT_NXRT_OK(nxrt_io_binding_output_was_written_in_place(binding_, 0, &in_place));
  EXPECT_EQ(in_place, 1);

  size_t count = 0;
  ASSERT_NXRT_OK(nxrt_io_binding_get_output_count(binding_, &count));
  ASSERT_EQ(count, 1u);
  const char* name = nullptr;
  ASSERT_NXRT_OK(nxrt_io_binding_get_output_name(binding_, 0, &name));
  EXPECT_STREQ(name, "z");
  NxrtTensor* output = nullptr;
  ASSERT_NXRT_OK(nxrt_io_binding_get_output(binding_, 0, &output));
  void* data = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_data(output, &data));
  EXPECT_EQ(data, z.data());
  nxrt_release_tensor(output);

  x[0] = 100;  // the binding reads the caller's memory on every run
  ASSERT_NXRT_OK(nxrt_session_run_with_binding(session_, nullptr, binding_));
  EXPECT_EQ(z[0], 210);
}

TEST_F(IoBindingTest, RuntimeAllocatesUnboundOrDeviceBoundOutputs) {
  std::vector<float> x = {1, 2}, y = {3, 4};
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding_, "x", wrap(x)));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding_, "y", wrap(y)));
  ASSERT_NXRT_OK(nxrt_session_run_with_binding(session_, nullptr, binding_));
  size_t count = 0;
  ASSERT_NXRT_OK(nxrt_io_binding_get_output_count(binding_, &count));
  EXPECT_EQ(count, 1u);

  NxrtMemoryInfo* cpu = nullptr;
  ASSERT_NXRT_OK(nxrt_create_cpu_memory_info(&cpu));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_output_to_device(binding_, "z", cpu));
  nxrt_release_memory_info(cpu);
  ASSERT_NXRT_OK(nxrt_session_run_with_binding(session_, nullptr, binding_));
  NxrtTensor* z = nullptr;
  ASSERT_NXRT_OK(nxrt_io_binding_get_output(binding_, 0, &z));
  void* data = nullptr;
  ASSERT_NXRT_OK(nxrt_tensor_get_data(z, &data));
  EXPECT_EQ(static_cast<float*>(data)[1], 8.0f);
  int in_place = 1;
  ASSERT_NXRT_OK(nxrt_io_binding_output_was_written_in_place(binding_, 0, &in_place));
  EXPECT_EQ(in_place, 0);
  nxrt_release_tensor(z);
}

TEST_F(IoBindingTest, ViewOutputIsCopiedIntoBoundTensor) {
  const std::string bytes = identity_model();
  NxrtSession* identity = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), nullptr, &identity));
  NxrtIoBinding* binding = nullptr;
  ASSERT_NXRT_OK(nxrt_create_io_binding(identity, &binding));
  std::vector<float> x = {1, 2, 3, 4}, out(4, 0.0f);
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding, "x", wrap(x)));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_output(binding, "out", wrap(out)));
  ASSERT_NXRT_OK(nxrt_session_run_with_binding(identity, nullptr, binding));
  EXPECT_EQ(out, x);
  int in_place = 1;
  ASSERT_NXRT_OK(nxrt_io_binding_output_was_written_in_place(binding, 0, &in_place));
  EXPECT_EQ(in_place, 0);
  nxrt_release_io_binding(binding);
  nxrt_release_session(identity);
}

TEST_F(IoBindingTest, BoundOutputOverlappingAnInputStillComputesCorrectly) {
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30};
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding_, "x", wrap(x)));
  NxrtTensor* y_tensor = wrap(y);
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding_, "y", y_tensor));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_output(binding_, "z", y_tensor));
  ASSERT_NXRT_OK(nxrt_session_run_with_binding(session_, nullptr, binding_));
  EXPECT_EQ(y, (std::vector<float>{12, 24, 36}));
}

TEST_F(IoBindingTest, ShapeMismatchIsInvalidArgument) {
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30}, z(2);
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding_, "x", wrap(x)));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding_, "y", wrap(y)));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_output(binding_, "z", wrap(z)));
  StatusPtr status(nxrt_session_run_with_binding(session_, nullptr, binding_));
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nxrt_status_message(status.get())).find("bound to a tensor(float) tensor of shape"),
            std::string::npos)
      << nxrt_status_message(status.get());
}

TEST_F(IoBindingTest, ReportsBindingErrors) {
  std::vector<float> z(3);
  StatusPtr unknown(nxrt_io_binding_bind_output(binding_, "nope", wrap(z)));
  EXPECT_EQ(nxrt_status_code(unknown.get()), NXRT_INVALID_ARGUMENT);

  StatusPtr missing(nxrt_session_run_with_binding(session_, nullptr, binding_));
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(nxrt_status_code(missing.get()), NXRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nxrt_status_message(missing.get())).find("Missing Input: x"), std::string::npos);

  NxrtMemoryInfo* cuda = nullptr;
  ASSERT_NXRT_OK(nxrt_create_memory_info(NXRT_DEVICE_CUDA, 0, &cuda));
  StatusPtr no_cuda(nxrt_io_binding_bind_output_to_device(binding_, "z", cuda));
  EXPECT_EQ(nxrt_status_code(no_cuda.get()), NXRT_EP_FAIL);
  nxrt_release_memory_info(cuda);

  const std::string bytes = nxrt::simple_add_model();
  NxrtSession* other = nullptr;
  ASSERT_NXRT_OK(nxrt_create_session_from_bytes(bytes.data(), bytes.size(), nullptr, &other));
  StatusPtr wrong_session(nxrt_session_run_with_binding(other, nullptr, binding_));
  EXPECT_EQ(nxrt_status_code(wrong_session.get()), NXRT_INVALID_ARGUMENT);
  nxrt_release_session(other);

  size_t count = 7;
  ASSERT_NXRT_OK(nxrt_io_binding_get_output_count(binding_, &count));
  EXPECT_EQ(count, 0u);
  NxrtTensor* output = nullptr;
  StatusPtr out_of_range(nxrt_io_binding_get_output(binding_, 0, &output));
  EXPECT_EQ(nxrt_status_code(out_of_range.get()), NXRT_INVALID_ARGUMENT);
  StatusPtr null_binding(nxrt_session_run_with_binding(session_, nullptr, nullptr));
  EXPECT_EQ(nxrt_status_code(null_binding.get()), NXRT_INVALID_ARGUMENT);
}

TEST_F(IoBindingTest, TerminatedRunFails) {
  std::vector<float> x = {1}, y = {2}, z(1);
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding_, "x", wrap(x)));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_input(binding_, "y", wrap(y)));
  ASSERT_NXRT_OK(nxrt_io_binding_bind_output(binding_, "z", wrap(z)));
  NxrtRunOptions* options = nullptr;
  ASSERT_NXRT_OK(nxrt_create_run_options(&options));
  ASSERT_NXRT_OK(nxrt_run_options_set_terminate(options, 1));
  StatusPtr status(nxrt_session_run_with_binding(session_, options, binding_));
  EXPECT_EQ(nxrt_status_code(status.get()), NXRT_FAIL);
  ASSERT_NXRT_OK(nxrt_run_options_set_terminate(options, 0));
  ASSERT_NXRT_OK(nxrt_session_run_with_binding(session_, options, binding_));
  EXPECT_EQ(z[0], 4.0f);
  nxrt_release_run_options(options);
}

}  // namespace
