// Sessions split across the test execution provider (a second device on every machine) and the CPU: node
// assignment, the copies the partitioner inserts (counted), streams, device feeds, IO binding to device memory,
// and the no-silent-fallback policy.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ep/test_device/test_device_provider.h"
#include "onnx/model_writer.h"
#include "session/io_binding.h"
#include "session/session.h"

namespace nxrt {
namespace {

namespace w = onnx::write;
constexpr int32_t kFloat = 1;
constexpr int32_t kBool = 9;
constexpr Device kTestDevice{DeviceType::kTestDevice, 0};

SessionOptions on_test_device() {
  SessionOptions options;
  options.execution_providers = {"TestDevice"};
  options.intra_op_num_threads = 1;
  return options;
}

Tensor floats(Shape shape, std::vector<float> values) {
  auto tensor = Tensor::allocate(DataType::kFloat32, std::move(shape));
  std::copy(values.begin(), values.end(), tensor->data<float>());
  return std::move(*tensor);
}

Tensor on_device(const Tensor& host) {
  auto tensor = Tensor::allocate(host.dtype(), host.shape(), ep::test_device_provider()->allocator());
  std::copy(host.data<float>(), host.data<float>() + host.numel(), tensor->data<float>());
  return std::move(*tensor);
}

std::vector<float> values_of(const Tensor& tensor) {
  return std::vector<float>(tensor.data<float>(), tensor.data<float>() + tensor.numel());
}

// "provider:op" per node of the partitioned graph, with the provider's short name.
std::vector<std::string> placement(const Session& session) {
  std::vector<std::string> nodes;
  for (const graph::Node& node : session.graph().nodes) {
    const std::string provider = node.provider == "CPUExecutionProvider" ? "cpu" : "dev";
    nodes.push_back(provider + ":" + node.op_type);
  }
  return nodes;
}

// y = Sigmoid(Relu(x + bias)): Add and Relu on the device, Sigmoid on the CPU.
w::Model add_relu_sigmoid() {
  w::Model model;
  model.graph.inputs = {{"x", kFloat, {int64_t{2}, int64_t{3}}}};
  model.graph.outputs = {{"y", kFloat, {int64_t{2}, int64_t{3}}}};
  model.graph.initializers = {w::float_tensor("bias", {3}, {1.0f, -1.0f, 0.5f})};
  model.graph.nodes = {{"Add", {"x", "bias"}, {"sum"}}, {"Relu", {"sum"}, {"r"}}, {"Sigmoid", {"r"}, {"y"}}};
  return model;
}

std::vector<float> expected_add_relu_sigmoid(const std::vector<float>& x) {
  const float bias[3] = {1.0f, -1.0f, 0.5f};
  std::vector<float> y;
  for (size_t i = 0; i < x.size(); ++i) y.push_back(1.0f / (1.0f + std::exp(-std::max(x[i] + bias[i % 3], 0.0f))));
  return y;
}

TEST(TestDeviceProvider, TakesItsOpsAndCopiesExactlyAtTheBoundaries) {
  ep::reset_test_device_stats();
  auto session = Session::create_from_bytes(w::encode_model(add_relu_sigmoid()), on_test_device());
  ASSERT_TRUE(session) << session.status().to_string();
  EXPECT_EQ((*session)->providers(), (std::vector<std::string>{"TestDeviceExecutionProvider", "CPUExecutionProvider"}));
  // x is read only on the device, so it is fed there (no copy node); the bias goes over once, at creation.
  EXPECT_EQ(placement(**session), (std::vector<std::string>{"dev:CopyToDevice", "dev:Add", "dev:Relu",
                                                            "dev:CopyToHost", "cpu:Sigmoid"}));
  EXPECT_EQ(ep::test_device_stats().host_to_device, 1);

  const std::vector<float> x = {-3, 0, 1, 2, -0.25f, 4};
  for (int run = 0; run < 2; ++run) {
    auto outputs = (*session)->run({{"x"}}, {{floats({2, 3}, x)}}, {});
    ASSERT_TRUE(outputs) << outputs.status().to_string();
    ASSERT_EQ((*outputs)[0].device(), Device{});
    const std::vector<float> y = values_of((*outputs)[0]);
    const std::vector<float> expected = expected_add_relu_sigmoid(x);
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-6f) << i;
  }
  const ep::TestDeviceStats stats = ep::test_device_stats();
  EXPECT_EQ(stats.host_to_device, 1 + 2);  // the bias once, then the feed once per run
  EXPECT_EQ(stats.device_to_host, 2);      // Relu's output once per run
  EXPECT_EQ(stats.kernel_runs, 4);         // Add and Relu per run
  EXPECT_EQ(stats.streams, 2);             // one per run
  EXPECT_GE(stats.synchronizes, 2);        // every run waits for the device before returning
}

TEST(TestDeviceProvider, AFeedAlreadyOnTheDeviceIsNotCopied) {
  auto session = Session::create_from_bytes(w::encode_model(add_relu_sigmoid()), on_test_device());
  ASSERT_TRUE(session) << session.status().to_string();
  ep::reset_test_device_stats();
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  auto outputs = (*session)->run({{"x"}}, {{on_device(floats({2, 3}, x))}}, {});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  EXPECT_EQ(ep::test_device_stats().host_to_device, 0);
  const std::vector<float> expected = expected_add_relu_sigmoid(x);
  const std::vector<float> y = values_of((*outputs)[0]);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-6f) << i;
}

// z = MatMul(Sigmoid(MatMul(a, b)), c) + a2: device, CPU, device; z is bound to device memory.
w::Model split_model() {
  w::Model model;
  model.graph.inputs = {{"a", kFloat, {int64_t{2}, int64_t{3}}}, {"b", kFloat, {int64_t{3}, int64_t{2}}}};
  model.graph.outputs = {{"z", kFloat, {int64_t{2}, int64_t{2}}}};
  model.graph.initializers = {w::float_tensor("c", {2, 2}, {1, 2, 3, 4}), w::float_tensor("d", {2}, {10, 20})};
  model.graph.nodes = {{"MatMul", {"a", "b"}, {"ab"}},
                       {"Sigmoid", {"ab"}, {"s"}},
                       {"MatMul", {"s", "c"}, {"sc"}},
                       {"Add", {"sc", "d"}, {"z"}}};
  return model;
}

std::vector<float> expected_split(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> s(4);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      float sum = 0;
      for (int k = 0; k < 3; ++k) sum += a[i * 3 + k] * b[k * 2 + j];
      s[i * 2 + j] = 1.0f / (1.0f + std::exp(-sum));
    }
  }
  const float c[4] = {1, 2, 3, 4};
  const float d[2] = {10, 20};
  std::vector<float> z(4);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) z[i * 2 + j] = s[i * 2] * c[j] + s[i * 2 + 1] * c[2 + j] + d[j];
  }
  return z;
}

TEST(TestDeviceProvider, AModelSplitAcrossTwoProvidersCopiesBothWaysAndWritesABoundDeviceOutput) {
  auto session = Session::create_from_bytes(w::encode_model(split_model()), on_test_device());
  ASSERT_TRUE(session) << session.status().to_string();
  std::vector<std::string> nodes = placement(**session);
  EXPECT_EQ(std::count(nodes.begin(), nodes.end(), "dev:CopyToHost"), 1);    // ab, for Sigmoid
  EXPECT_EQ(std::count(nodes.begin(), nodes.end(), "dev:CopyToDevice"), 3);  // s, and the constants c and d
  EXPECT_EQ(std::count(nodes.begin(), nodes.end(), "cpu:Sigmoid"), 1);
  EXPECT_EQ(std::count(nodes.begin(), nodes.end(), "dev:MatMul"), 2);  // not fused with the Add by CPU passes
  EXPECT_EQ(std::count(nodes.begin(), nodes.end(), "dev:Add"), 1);

  const std::vector<float> a = {0.1f, 0.2f, 0.3f, -0.4f, 0.5f, -0.6f};
  const std::vector<float> b = {1, -1, 0.5f, 2, -0.25f, 0.75f};
  ep::reset_test_device_stats();
  auto bound = Tensor::allocate(DataType::kFloat32, {2, 2}, ep::test_device_provider()->allocator());
  ASSERT_TRUE(bound);
  auto result = (*session)->run_bound({{"a", "b"}}, {{floats({2, 3}, a), floats({3, 2}, b)}}, {{"z"}}, {{*bound}});
  ASSERT_TRUE(result) << result.status().to_string();
  EXPECT_TRUE(result->written_in_place[0]);
  EXPECT_EQ(result->outputs[0].device(), kTestDevice);
  const ep::TestDeviceStats stats = ep::test_device_stats();
  EXPECT_EQ(stats.host_to_device, 3);  // a, b, s
  EXPECT_EQ(stats.device_to_host, 1);  // ab
  const std::vector<float> z = values_of(*bound);
  const std::vector<float> expected = expected_split(a, b);
  for (size_t i = 0; i < z.size(); ++i) EXPECT_NEAR(z[i], expected[i], 1e-5f) << i;

  // Unbound, asked for on the device: allocated there, no copy back.
  auto on_dev = (*session)->run_bound({{"a", "b"}}, {{floats({2, 3}, a), floats({3, 2}, b)}}, {{"z"}}, {{Tensor()}},
                                      {}, std::vector<Device>{kTestDevice});
  ASSERT_TRUE(on_dev) << on_dev.status().to_string();
  EXPECT_EQ(on_dev->outputs[0].device(), kTestDevice);
  EXPECT_EQ(values_of(on_dev->outputs[0]), z);
}

// A value made on the device and read by a subgraph is copied to the host under its own name.
TEST(TestDeviceProvider, SubgraphsReadDeviceValuesThroughAHostCopy) {
  w::Graph then_branch;
  then_branch.name = "then";
  then_branch.nodes = {{"Mul", {"r", "r"}, {"sq"}}};
  then_branch.outputs = {{"sq", kFloat, {int64_t{3}}}};
  w::Graph else_branch;
  else_branch.name = "else";
  else_branch.nodes = {{"Neg", {"r"}, {"neg"}}};
  else_branch.outputs = {{"neg", kFloat, {int64_t{3}}}};
  w::Model model;
  model.graph.inputs = {{"c", kBool, {}}, {"x", kFloat, {int64_t{3}}}};
  model.graph.outputs = {{"y", kFloat, {int64_t{3}}}, {"r", kFloat, {int64_t{3}}}};
  model.graph.nodes = {
      {"Relu", {"x"}, {"r"}},
      {"If", {"c"}, {"y"}, {w::attr_graph("then_branch", then_branch), w::attr_graph("else_branch", else_branch)}},
  };
  auto session = Session::create_from_bytes(w::encode_model(model), on_test_device());
  ASSERT_TRUE(session) << session.status().to_string();
  EXPECT_EQ(placement(**session), (std::vector<std::string>{"dev:Relu", "dev:CopyToHost", "cpu:If"}));
  auto flag = Tensor::allocate(DataType::kBool, {});
  *flag->data<bool>() = true;
  auto outputs = (*session)->run({{"c", "x"}}, {{*flag, floats({3}, {-1, 2, 3})}}, {});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  EXPECT_EQ(values_of((*outputs)[0]), (std::vector<float>{0, 4, 9}));
  EXPECT_EQ(values_of((*outputs)[1]), (std::vector<float>{0, 2, 3}));
}

TEST(TestDeviceProvider, NoSilentFallback) {
  const std::string bytes = w::encode_model(add_relu_sigmoid());
  SessionOptions cuda;
  cuda.execution_providers = {"CUDAExecutionProvider"};
  auto no_cuda = Session::create_from_bytes(bytes, cuda);
  ASSERT_FALSE(no_cuda);
  EXPECT_EQ(no_cuda.status().code(), StatusCode::kEpFail);

  SessionOptions unknown;
  unknown.execution_providers = {"NoSuchExecutionProvider"};
  auto bad = Session::create_from_bytes(bytes, unknown);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);

  // Sigmoid has no test-device kernel: with CPU fallback disabled, creation names it.
  SessionOptions strict = on_test_device();
  strict.disable_cpu_fallback = true;
  auto refused = Session::create_from_bytes(bytes, strict);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("Sigmoid node"), std::string::npos) << refused.status().message();
  EXPECT_NE(refused.status().message().find("session.disable_cpu_ep_fallback"), std::string::npos);
}

TEST(TestDeviceProvider, ACpuOnlySessionHasNoCopies) {
  auto session = Session::create_from_bytes(w::encode_model(split_model()), SessionOptions{});
  ASSERT_TRUE(session) << session.status().to_string();
  for (const graph::Node& node : (*session)->graph().nodes) {
    EXPECT_EQ(node.provider, "CPUExecutionProvider") << node.describe();
    EXPECT_TRUE(node.op_type != "CopyToDevice" && node.op_type != "CopyToHost") << node.describe();
  }
}

}  // namespace
}  // namespace nxrt
