// Executor: intermediate buffers reused across nodes and runs (the session arena), caller-held outputs never
// recycled, per-node profiling.
#include <gtest/gtest.h>

#include <thread>

#include "onnx/model_writer.h"
#include "session/session.h"

namespace nxrt {
namespace {

namespace w = onnx::write;

// A chain over [N]: t1 = x * 2, t2 = t1 + x, t3 = t2 * t2, z = Reshape(t3 - x, [N]) (z aliases an intermediate).
w::Model chain_model(int64_t n) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {n}}};
  model.graph.outputs = {{"z", 1, {n}}, {"t2", 1, {n}}};
  model.graph.initializers = {w::float_tensor("two", {}, {2.0f}), w::int64_tensor("shape", {1}, {n})};
  model.graph.nodes = {{"Mul", {"x", "two"}, {"t1"}, {}, "mul1"},
                       {"Add", {"t1", "x"}, {"t2"}, {}, "add"},
                       {"Mul", {"t2", "t2"}, {"t3"}, {}, "square"},
                       {"Sub", {"t3", "x"}, {"t4"}, {}, "sub"},
                       {"Reshape", {"t4", "shape"}, {"z"}, {}, "reshape"}};
  return model;
}

std::unique_ptr<Session> create(const w::Model& model, const SessionOptions& options = {}) {
  auto session = Session::create_from_bytes(w::encode_model(model), options);
  EXPECT_TRUE(session.has_value()) << session.status().to_string();
  return session ? std::move(session).value() : nullptr;
}

float expected_z(float x) { return 9.0f * x * x - x; }

void expect_chain_outputs(const std::vector<Tensor>& outputs, const std::vector<float>& x) {
  ASSERT_EQ(outputs.size(), 2u);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_FLOAT_EQ(outputs[0].data<float>()[i], expected_z(x[i])) << i;
    ASSERT_FLOAT_EQ(outputs[1].data<float>()[i], 3.0f * x[i]) << i;
  }
}

TEST(Executor, HeldOutputsSurviveLaterRunsAndTheSession) {
  for (int64_t n : {1, 17, 100000}) {  // small blocks and blocks large enough to come from mmap
    auto session = create(chain_model(n));
    ASSERT_TRUE(session);
    std::vector<std::vector<float>> inputs;
    std::vector<std::vector<Tensor>> held;
    for (int run = 0; run < 4; ++run) {
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7 + run * 13) % 101) / 10.0f;
      auto outputs = session->run({{"x"}}, {{Tensor::wrap(DataType::kFloat32, {n}, x.data())}}, {});
      ASSERT_TRUE(outputs) << outputs.status().to_string();
      inputs.push_back(std::move(x));
      held.push_back(std::move(outputs).value());
    }
    for (size_t run = 0; run < held.size(); ++run) {
      for (size_t other = 0; other < run; ++other) {
        EXPECT_NE(held[run][0].raw_data(), held[other][0].raw_data());
      }
    }
    session.reset();  // held outputs (one of them arena-backed, via Reshape) outlive the session
    for (size_t run = 0; run < held.size(); ++run) expect_chain_outputs(held[run], inputs[run]);
  }
}

// Values of different sizes, never all alive at once: A, B [2n]; C, D [4n]; the output E [4n]. The blocks one run
// touches add up to more than its peak in use.
w::Model growing_model(int64_t n) {
  w::Model model;
  model.graph.inputs = {{"x", 1, {n}}};
  model.graph.outputs = {{"e", 1, {4 * n}}};
  model.graph.nodes = {{"Concat", {"x", "x"}, {"a"}, {w::attr_int("axis", 0)}, "concat1"},
                       {"Neg", {"a"}, {"b"}, {}, "neg1"},
                       {"Concat", {"b", "b"}, {"c"}, {w::attr_int("axis", 0)}, "concat2"},
                       {"Neg", {"c"}, {"d"}, {}, "neg2"},
                       {"Neg", {"d"}, {"e"}, {}, "neg3"}};
  return model;
}

TEST(Executor, RepeatedRunsReuseTheirBlocksWhileTheCallerHoldsAnOutput) {
  const int64_t n = 40000;  // blocks large enough to come from mmap, where a fresh block page-faults
  auto session = create(growing_model(n));
  ASSERT_TRUE(session);
  std::vector<float> x(static_cast<size_t>(n), 1.5f);
  const auto run = [&] {
    auto outputs = session->run({{"x"}}, {{Tensor::wrap(DataType::kFloat32, {n}, x.data())}}, {});
    EXPECT_TRUE(outputs) << outputs.status().to_string();
    if (outputs) {
      EXPECT_FLOAT_EQ((*outputs)[0].data<float>()[4 * n - 1], -1.5f);
    }
    return outputs ? std::move(outputs).value() : std::vector<Tensor>{};
  };
  const std::vector<Tensor> held = run();  // as a benchmark keeps its first result to check it
  run();
  const int64_t after_warm_up = session->arena_stats().system_allocations;
  for (int i = 0; i < 10; ++i) run();
  EXPECT_EQ(session->arena_stats().system_allocations, after_warm_up);
  EXPECT_LE(session->arena_stats().cached_bytes, 3 * session->arena_stats().peak_in_use_bytes);
}

TEST(Executor, RepeatedAndConcurrentRunsAgree) {
  const int64_t n = 50000;
  SessionOptions options;
  options.intra_op_num_threads = 2;
  auto session = create(chain_model(n), options);
  ASSERT_TRUE(session);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i + t) % 31) - 15.0f;
      for (int iteration = 0; iteration < 20; ++iteration) {
        auto outputs = session->run({{"x"}}, {{Tensor::wrap(DataType::kFloat32, {n}, x.data())}}, {});
        if (!outputs) {
          ++failures;
          continue;
        }
        for (int64_t i = 0; i < n; ++i) {
          if ((*outputs)[0].data<float>()[i] != expected_z(x[i]) || (*outputs)[1].data<float>()[i] != 3.0f * x[i]) {
            ++failures;
            break;
          }
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Executor, ProfilingTimesEveryNodeOfEveryRun) {
  SessionOptions options;
  options.enable_profiling = true;
  options.profile = std::make_shared<NodeProfile>();
  auto session = create(chain_model(1000), options);
  ASSERT_TRUE(session);
  std::vector<float> x(1000, 1.5f);
  for (int run = 0; run < 3; ++run) {
    auto outputs = session->run({{"x"}}, {{Tensor::wrap(DataType::kFloat32, {1000}, x.data())}}, {});
    ASSERT_TRUE(outputs) << outputs.status().to_string();
  }
  EXPECT_EQ(options.profile->runs(), 3);
  const std::vector<NodeTiming> nodes = options.profile->nodes();
  ASSERT_EQ(nodes.size(), session->graph().nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(nodes[i].name, session->graph().nodes[i].name);
    EXPECT_EQ(nodes[i].op_type, session->graph().nodes[i].op_type);
    EXPECT_EQ(nodes[i].calls, 3);
    EXPECT_GE(nodes[i].total_ms, 0.0);
  }
}

TEST(Executor, NoProfileUnlessEnabled) {
  SessionOptions options;
  options.profile = std::make_shared<NodeProfile>();
  auto session = create(chain_model(10), options);
  ASSERT_TRUE(session);
  std::vector<float> x(10, 1.0f);
  ASSERT_TRUE(session->run({{"x"}}, {{Tensor::wrap(DataType::kFloat32, {10}, x.data())}}, {}));
  EXPECT_EQ(options.profile->runs(), 0);
  EXPECT_TRUE(options.profile->nodes().empty());
}

}  // namespace
}  // namespace nxrt
