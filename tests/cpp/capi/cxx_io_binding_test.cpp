// C++ wrapper for deployment: IoBinding, RunOptions, ThreadPool, MemoryInfo, providers; concurrent bound runs.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "nxrt/nxrt.hpp"
#include "session/default_models.h"

namespace {

namespace nx = nxrt::cxx;

TEST(CxxIoBinding, WritesIntoCallerVector) {
  nx::Session session = nx::Session::from_bytes(nxrt::simple_add_model());
  std::vector<float> x = {1, 2, 3, 4}, y = {5, 6, 7, 8}, z(4);
  nx::Tensor tx = nx::Tensor::wrap(x, {4});
  nx::Tensor ty = nx::Tensor::wrap(y, {4});
  nx::Tensor tz = nx::Tensor::wrap(z, {4});
  nx::IoBinding binding(session);
  binding.bind_input("x", tx).bind_input("y", ty).bind_output("z", tz);
  nx::RunOptions options;
  options.set_tag("cxx");
  EXPECT_EQ(options.tag(), "cxx");
  binding.run(&options);
  EXPECT_EQ(z, (std::vector<float>{7, 10, 13, 16}));
  EXPECT_TRUE(binding.written_in_place(0));
  ASSERT_EQ(binding.output_count(), 1u);
  EXPECT_EQ(binding.output(0).data<float>(), z.data());

  binding.clear_outputs();
  binding.bind_output("z", nx::MemoryInfo(NXRT_DEVICE_CPU));
  binding.run();
  EXPECT_EQ(binding.output(0).to_vector<float>(), (std::vector<float>{7, 10, 13, 16}));
  EXPECT_THROW(binding.bind_output("z", nx::MemoryInfo(NXRT_DEVICE_CUDA, 0)), nx::Error);
}

TEST(CxxIoBinding, ProvidersAndSharedPool) {
  EXPECT_EQ(nx::available_providers().front(), "CPUExecutionProvider");
  nx::SessionOptions options;
  options.append_execution_provider("CPU");
  try {
    options.append_execution_provider("CUDA");
    FAIL() << "CUDA must not be accepted by a build without it";
  } catch (const nx::Error& error) {
    EXPECT_EQ(error.code(), NXRT_EP_FAIL);
  }
  nx::ThreadPool pool(2);
  options.set_thread_pool(pool);
  nx::Session session(nx::Session::from_bytes(nxrt::simple_add_model(), &options));
  EXPECT_EQ(session.num_threads(), 2);
  EXPECT_EQ(session.metadata(NXRT_METADATA_GRAPH_NAME), "simple_add");
  nx::MemoryInfo cuda(NXRT_DEVICE_CUDA, 3);
  EXPECT_EQ(cuda.device_id(), 3);
  EXPECT_EQ(cuda.vendor_id(), NXRT_VENDOR_ID_NVIDIA);
}

TEST(CxxIoBinding, ConcurrentBoundRunsOnOneSession) {
  nx::Session session = nx::Session::from_bytes(nxrt::simple_add_model());
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> x(16, static_cast<float>(t)), y(16, 1.0f), z(16);
      nx::Tensor tx = nx::Tensor::wrap(x, {16});
      nx::Tensor ty = nx::Tensor::wrap(y, {16});
      nx::Tensor tz = nx::Tensor::wrap(z, {16});
      nx::IoBinding binding(session);
      binding.bind_input("x", tx).bind_input("y", ty).bind_output("z", tz);
      for (int i = 0; i < 200; ++i) {
        binding.run();
        for (float value : z) failures[t] += value != 2.0f * t + 1.0f;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures, std::vector<int>(kThreads, 0));
}

}  // namespace
