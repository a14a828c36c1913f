// The memory plan of the main graph (session/memory_plan.h): intermediates in one planned block per run state,
// laid out again when shapes grow, never visible to the caller; run states per concurrent run; PreparedRun.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "onnx/model_writer.h"
#include "session/prepared_run.h"
#include "session/session.h"

namespace nxrt {
namespace {

namespace w = onnx::write;

constexpr int32_t kFloat = 1;

// Optimisation off by default: the elementwise fusion would turn the chains below into one node.
SessionOptions unoptimized() {
  SessionOptions options;
  options.graph_optimization_level = 0;
  return options;
}

std::unique_ptr<Session> create(const w::Model& model, const SessionOptions& options = unoptimized()) {
  auto session = Session::create_from_bytes(w::encode_model(model), options);
  EXPECT_TRUE(session.has_value()) << session.status().to_string();
  return session ? std::move(session).value() : nullptr;
}

// y = ((x * 2 + x) * (x * 2 + x) - x) over [N] (N symbolic): three planned intermediates, each read once.
w::Model chain_model() {
  w::Model model;
  model.graph.inputs = {{"x", kFloat, {std::string("N")}}};
  model.graph.outputs = {{"y", kFloat, {std::string("N")}}};
  model.graph.initializers = {w::float_tensor("two", {}, {2.0f})};
  model.graph.nodes = {{"Mul", {"x", "two"}, {"t1"}, {}, "mul"},
                       {"Add", {"t1", "x"}, {"t2"}, {}, "add"},
                       {"Mul", {"t2", "t2"}, {"t3"}, {}, "square"},
                       {"Sub", {"t3", "x"}, {"y"}, {}, "sub"}};
  return model;
}

float chain_of(float x) { return 9.0f * x * x - x; }

std::vector<float> inputs_for(int64_t n, int seed) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7 + seed * 13) % 101) / 10.0f - 5.0f;
  return x;
}

// Runs `session` with x fed as input "x" of shape [x.size()].
Expected<std::vector<Tensor>> run_on(const Session& session, std::vector<float>& x) {
  return session.run({{"x"}}, {{Tensor::wrap(DataType::kFloat32, {static_cast<int64_t>(x.size())}, x.data())}}, {});
}

void expect_chain(const Tensor& y, const std::vector<float>& x) {
  ASSERT_EQ(y.numel(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_FLOAT_EQ(y.data<float>()[i], chain_of(x[i])) << i;
}

TEST(MemoryPlan, IntermediatesLiveInThePlannedBlockAfterTheFirstRun) {
  auto session = create(chain_model());
  ASSERT_TRUE(session);
  const int64_t n = 1000;
  for (int run = 0; run < 5; ++run) {
    std::vector<float> x = inputs_for(n, run);
    auto outputs = run_on(*session, x);
    ASSERT_TRUE(outputs) << outputs.status().to_string();
    expect_chain((*outputs)[0], x);
  }
  const Session::ArenaStats stats = session->arena_stats();
  // Each intermediate dies at the elementwise node making the next one, which writes it in place: one slot.
  EXPECT_EQ(stats.planned_block_bytes, (n * 4 + 63) / 64 * 64);
  // After the first run, only the output comes from the arena: one block, reused by every later run.
  const int64_t allocations = stats.system_allocations;
  for (int run = 0; run < 3; ++run) {
    std::vector<float> x = inputs_for(n, run);
    ASSERT_TRUE(run_on(*session, x));
  }
  EXPECT_EQ(session->arena_stats().system_allocations, allocations);
}

TEST(MemoryPlan, StaticShapesArePlannedBeforeTheFirstRun) {
  // With N fixed, shape inference sizes every intermediate, so even the first run takes them from the block: the
  // arena serves only the output.
  w::Model model = chain_model();
  const int64_t n = 4096;
  model.graph.inputs[0].dims = {n};
  model.graph.outputs[0].dims = {n};
  auto session = create(model);
  ASSERT_TRUE(session);
  std::vector<float> x = inputs_for(n, 3);
  auto outputs = run_on(*session, x);
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  expect_chain((*outputs)[0], x);
  const Session::ArenaStats stats = session->arena_stats();
  EXPECT_GE(stats.planned_block_bytes, n * 4);
  // The arena counts what it takes from the system only where it reuses blocks: not under AddressSanitizer, where
  // every block is freed at once (the count stays 0) and this check has nothing to look at.
  if (stats.system_allocations > 0) {
    EXPECT_EQ(stats.system_allocations, 1);
  }
}

TEST(MemoryPlan, ShapesThatGrowAndShrinkStayCorrect) {
  auto session = create(chain_model());
  ASSERT_TRUE(session);
  int seed = 0;
  for (int64_t n : {4, 1000, 10, 50000, 3, 50000, 0, 7}) {
    std::vector<float> x = inputs_for(n, ++seed);
    auto outputs = run_on(*session, x);
    ASSERT_TRUE(outputs) << n << ": " << outputs.status().to_string();
    expect_chain((*outputs)[0], x);
  }
  EXPECT_GE(session->arena_stats().planned_block_bytes, 50000 * 4);
}

TEST(MemoryPlan, AnInputReadAfterTheNodeIsNotWrittenInPlace) {
  // t1 is read again after the Relu, so t2 needs a slot of its own.
  w::Model model;
  model.graph.inputs = {{"x", kFloat, {std::string("N")}}};
  model.graph.outputs = {{"y", kFloat, {std::string("N")}}};
  model.graph.initializers = {w::float_tensor("two", {}, {2.0f})};
  model.graph.nodes = {{"Mul", {"x", "two"}, {"t1"}, {}, "mul"},
                       {"Relu", {"t1"}, {"t2"}, {}, "relu"},
                       {"Add", {"t2", "t1"}, {"y"}, {}, "add"}};
  auto session = create(model);
  ASSERT_TRUE(session);
  const int64_t n = 1000;
  for (int run = 0; run < 3; ++run) {
    std::vector<float> x = inputs_for(n, run);
    auto outputs = run_on(*session, x);
    ASSERT_TRUE(outputs) << outputs.status().to_string();
    for (int64_t i = 0; i < n; ++i) {
      const float t1 = 2.0f * x[i];
      ASSERT_FLOAT_EQ((*outputs)[0].data<float>()[i], std::max(t1, 0.0f) + t1) << i;
    }
  }
  EXPECT_GE(session->arena_stats().planned_block_bytes, 2 * n * 4);
}

TEST(MemoryPlan, AnInPlacePairThatBroadcastsToALargerOutputIsSplit) {
  // t2 = t1 + c broadcasts t1 [N] to [3, N]: writing t2 over t1 would overwrite elements still to be read. The
  // first planned run finds the sizes differ, allocates t2 elsewhere, and the next layout gives it its own slot.
  w::Model model;
  model.graph.inputs = {{"x", kFloat, {std::string("N")}}, {"c", kFloat, {int64_t{3}, std::string("N")}}};
  model.graph.outputs = {{"y", kFloat, {int64_t{3}, std::string("N")}}};
  model.graph.initializers = {w::float_tensor("two", {}, {2.0f})};
  model.graph.nodes = {{"Mul", {"x", "two"}, {"t1"}, {}, "mul"},
                       {"Add", {"t1", "c"}, {"t2"}, {}, "add"},
                       {"Relu", {"t2"}, {"y"}, {}, "relu"}};
  auto session = create(model);
  ASSERT_TRUE(session);
  const int64_t n = 500;
  for (int run = 0; run < 4; ++run) {
    std::vector<float> x = inputs_for(n, run);
    std::vector<float> c = inputs_for(3 * n, run + 7);
    auto outputs = session->run({{"x", "c"}},
                                {{Tensor::wrap(DataType::kFloat32, {n}, x.data()),
                                  Tensor::wrap(DataType::kFloat32, {3, n}, c.data())}},
                                {});
    ASSERT_TRUE(outputs) << outputs.status().to_string();
    for (int64_t r = 0; r < 3; ++r) {
      for (int64_t i = 0; i < n; ++i) {
        const float expected = std::max(2.0f * x[i] + c[r * n + i], 0.0f);
        ASSERT_FLOAT_EQ((*outputs)[0].data<float>()[r * n + i], expected) << "run " << run << " at " << r << "," << i;
      }
    }
  }
  EXPECT_GE(session->arena_stats().planned_block_bytes, 4 * n * 4);
}

TEST(MemoryPlan, EmptyIntermediatesLeaveTheLayoutAlone) {
  // Values of 0 bytes get no slot; they must not make every run lay the block out again (and drop the arena's
  // cache, so that the next run allocates its output afresh).
  auto session = create(chain_model());
  ASSERT_TRUE(session);
  std::vector<float> none;
  const auto run = [&] {
    auto outputs = session->run({{"x"}}, {{Tensor::wrap(DataType::kFloat32, {0}, none.data())}}, {});
    ASSERT_TRUE(outputs) << outputs.status().to_string();
    EXPECT_EQ((*outputs)[0].numel(), 0);
  };
  for (int i = 0; i < 3; ++i) run();
  const int64_t allocations = session->arena_stats().system_allocations;
  for (int i = 0; i < 5; ++i) run();
  EXPECT_EQ(session->arena_stats().system_allocations, allocations);
}

TEST(MemoryPlan, HeldOutputsAndViewsOfIntermediatesAreNeverOverwritten) {
  // z is a Reshape (a view) of an intermediate, so that intermediate must not be planned; u is an output too.
  w::Model model;
  model.graph.inputs = {{"x", kFloat, {int64_t{6}}}};
  model.graph.outputs = {{"z", kFloat, {int64_t{2}, int64_t{3}}}, {"u", kFloat, {int64_t{6}}}};
  model.graph.initializers = {w::int64_tensor("shape", {2}, {2, 3})};
  model.graph.nodes = {{"Neg", {"x"}, {"a"}, {}, "neg"},
                       {"Reshape", {"a", "shape"}, {"z"}, {}, "reshape"},
                       {"Abs", {"x"}, {"b"}, {}, "abs"},
                       {"Mul", {"b", "b"}, {"u"}, {}, "square"}};
  auto session = create(model);
  ASSERT_TRUE(session);
  std::vector<std::vector<float>> inputs;
  std::vector<std::vector<Tensor>> held;
  for (int run = 0; run < 4; ++run) {
    inputs.push_back(inputs_for(6, run));
    auto outputs = session->run({{"x"}}, {{Tensor::wrap(DataType::kFloat32, {6}, inputs.back().data())}}, {});
    ASSERT_TRUE(outputs) << outputs.status().to_string();
    held.push_back(std::move(*outputs));
  }
  for (size_t run = 0; run < held.size(); ++run) {
    for (size_t i = 0; i < 6; ++i) {
      EXPECT_FLOAT_EQ(held[run][0].data<float>()[i], -inputs[run][i]);
      EXPECT_FLOAT_EQ(held[run][1].data<float>()[i], inputs[run][i] * inputs[run][i]);
    }
  }
}

TEST(MemoryPlan, ValuesKeptInASequenceOutliveTheirLastTensorReader) {
  // `a` goes into a sequence and comes back after several intermediates that would reuse its slot were it planned.
  w::Model model;
  model.graph.inputs = {{"x", kFloat, {int64_t{8}}}};
  model.graph.outputs = {{"y", kFloat, {int64_t{8}}}};
  model.graph.initializers = {w::int64_tensor("zero", {}, {0})};
  model.graph.nodes = {{"Neg", {"x"}, {"a"}, {}, "neg"},
                       {"SequenceConstruct", {"a"}, {"seq"}, {}, "construct"},
                       {"Abs", {"x"}, {"b"}, {}, "abs"},
                       {"Mul", {"b", "b"}, {"c"}, {}, "square"},
                       {"Add", {"c", "b"}, {"d"}, {}, "add"},
                       {"SequenceAt", {"seq", "zero"}, {"back"}, {}, "at"},
                       {"Add", {"back", "d"}, {"y"}, {}, "sum"}};
  auto session = create(model);
  ASSERT_TRUE(session);
  for (int run = 0; run < 3; ++run) {
    std::vector<float> x = inputs_for(8, run);
    auto outputs = session->run({{"x"}}, {{Tensor::wrap(DataType::kFloat32, {8}, x.data())}}, {});
    ASSERT_TRUE(outputs) << outputs.status().to_string();
    for (size_t i = 0; i < 8; ++i) {
      const float b = std::abs(x[i]);
      EXPECT_FLOAT_EQ((*outputs)[0].data<float>()[i], -x[i] + b * b + b) << i;
    }
  }
}

TEST(MemoryPlan, ConcurrentRunsEachUseTheirOwnState) {
  SessionOptions options = unoptimized();
  options.intra_op_num_threads = 1;
  auto session = create(chain_model(), options);
  ASSERT_TRUE(session);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < 40; ++run) {
        const int64_t n = 100 + 37 * t + run % 3;
        std::vector<float> x = inputs_for(n, t * 100 + run);
        auto outputs = run_on(*session, x);
        if (!outputs) {
          if (failures++ == 0) ADD_FAILURE() << outputs.status().to_string();
          continue;
        }
        for (int64_t i = 0; i < n; ++i) {
          const float want = chain_of(x[i]);
          if (std::abs((*outputs)[0].data<float>()[i] - want) > 1e-5f * std::max(1.0f, std::abs(want))) {
            ++failures;
            break;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(PreparedRun, RepeatsARunIntoItsBoundOutput) {
  auto session = create(chain_model());
  ASSERT_TRUE(session);
  const int64_t n = 256;
  std::vector<float> x = inputs_for(n, 1);
  std::vector<float> y(n, 0.0f);
  const Tensor feed = Tensor::wrap(DataType::kFloat32, {n}, x.data());
  const Tensor bound = Tensor::wrap(DataType::kFloat32, {n}, y.data());
  auto prepared = PreparedRun::create(*session, {{"x"}}, {{feed}}, {{"y"}}, {{bound}});
  ASSERT_TRUE(prepared) << prepared.status().to_string();
  for (int run = 0; run < 3; ++run) {
    const std::vector<float> values = inputs_for(n, run);
    std::copy(values.begin(), values.end(), x.begin());  // same storage: the feed sees the new values
    ASSERT_TRUE((*prepared)->run().is_ok());
    EXPECT_TRUE((*prepared)->written_in_place(0));
    EXPECT_EQ((*prepared)->outputs()[0].raw_data(), y.data());
    expect_chain(Tensor::wrap(DataType::kFloat32, {n}, y.data()), x);
  }
  // A new feed of another size: the bound output no longer fits, which is the error run_bound gives.
  std::vector<float> longer = inputs_for(2 * n, 5);
  ASSERT_TRUE((*prepared)->set_input(0, Tensor::wrap(DataType::kFloat32, {2 * n}, longer.data())).is_ok());
  const Status status = (*prepared)->run();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("bound to"), std::string::npos) << status.message();
}

TEST(PreparedRun, UnboundOutputsAreAllocatedPerRunAndNamesAreChecked) {
  auto session = create(chain_model());
  ASSERT_TRUE(session);
  std::vector<float> x = inputs_for(10, 2);
  const Tensor feed = Tensor::wrap(DataType::kFloat32, {10}, x.data());
  auto prepared = PreparedRun::create(*session, {{"x"}}, {{feed}}, {}, {{Tensor()}});
  ASSERT_TRUE(prepared) << prepared.status().to_string();
  ASSERT_TRUE((*prepared)->run().is_ok());
  const Tensor first = (*prepared)->outputs()[0];
  expect_chain(first, x);
  EXPECT_FALSE((*prepared)->written_in_place(0));

  auto bad_input = PreparedRun::create(*session, {{"nope"}}, {{feed}}, {}, {{Tensor()}});
  ASSERT_FALSE(bad_input);
  EXPECT_NE(bad_input.status().message().find("Invalid input name: nope"), std::string::npos);
  auto bad_output = PreparedRun::create(*session, {{"x"}}, {{feed}}, {{"t1"}}, {{Tensor()}});
  ASSERT_FALSE(bad_output);
  EXPECT_NE(bad_output.status().message().find("Invalid output name: t1"), std::string::npos);
  auto missing = PreparedRun::create(*session, {}, {}, {}, {{Tensor()}});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("Missing Input: x"), std::string::npos);
  auto wrong_type = PreparedRun::create(*session, {{"x"}}, {{Tensor::wrap(DataType::kInt32, {10}, x.data())}}, {},
                                        {{Tensor()}});
  ASSERT_FALSE(wrong_type);
  EXPECT_EQ(wrong_type.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace nxrt

namespace nxrt {
namespace {

// One com.microsoft GroupQueryAttention node over caches of 4 positions; with `past_read_elsewhere` an Identity also
// reads past_key (into another output), so that cache may not be updated in place.
w::Model attention_model(bool past_read_elsewhere) {
  w::Model model;
  model.opset_imports = {{"", 21}, {"com.microsoft", 1}};
  const auto cache = [](const char* name) { return w::ValueInfo{name, kFloat, {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{8}}}; };
  model.graph.inputs = {{"q", kFloat, {int64_t{1}, int64_t{1}, int64_t{32}}}, {"k", kFloat, {int64_t{1}, int64_t{1}, int64_t{16}}},
                        {"v", kFloat, {int64_t{1}, int64_t{1}, int64_t{16}}}, cache("past_key"), cache("past_value"),
                        {"seqlens_k", 6, {int64_t{1}}},                    {"total", 6, {}}};
  model.graph.outputs = {{"y", kFloat, {int64_t{1}, int64_t{1}, int64_t{32}}}, cache("present_key"), cache("present_value")};
  model.graph.nodes = {{"GroupQueryAttention", {"q", "k", "v", "past_key", "past_value", "seqlens_k", "total"},
                        {"y", "present_key", "present_value"},
                        {w::attr_int("num_heads", 4), w::attr_int("kv_num_heads", 2)}, "gqa", "com.microsoft"}};
  if (past_read_elsewhere) {
    model.graph.nodes.push_back({"Identity", {"past_key"}, {"copy"}, {}, "copy"});
    model.graph.outputs.push_back(cache("copy"));
  }
  return model;
}

TEST(PreparedRun, AttentionCacheBoundAsPastAndPresentIsUpdatedInPlace) {
  for (const bool read_elsewhere : {false, true}) {
    auto session = create(attention_model(read_elsewhere));
    ASSERT_TRUE(session);
    std::vector<float> q = inputs_for(32, 1), k = inputs_for(16, 2), v = inputs_for(16, 3);
    std::vector<float> keys = inputs_for(64, 4), values = inputs_for(64, 5);
    std::vector<int32_t> seqlens = {2}, total = {3};  // two cached rows, the new one at row 2
    const auto feeds = [&](std::vector<float>& past_k, std::vector<float>& past_v) {
      return std::vector<Tensor>{Tensor::wrap(DataType::kFloat32, {1, 1, 32}, q.data()),
                                 Tensor::wrap(DataType::kFloat32, {1, 1, 16}, k.data()),
                                 Tensor::wrap(DataType::kFloat32, {1, 1, 16}, v.data()),
                                 Tensor::wrap(DataType::kFloat32, {1, 2, 4, 8}, past_k.data()),
                                 Tensor::wrap(DataType::kFloat32, {1, 2, 4, 8}, past_v.data()),
                                 Tensor::wrap(DataType::kInt32, {1}, seqlens.data()),
                                 Tensor::wrap(DataType::kInt32, {}, total.data())};
    };
    const std::vector<std::string> names = {"q", "k", "v", "past_key", "past_value", "seqlens_k", "total"};
    std::vector<float> separate_k = keys, separate_v = values;
    auto separate = session->run(names, feeds(separate_k, separate_v), {{"y", "present_key"}});
    ASSERT_TRUE(separate) << separate.status().to_string();
    const std::vector<Tensor> bound_feeds = feeds(keys, values);
    auto prepared = PreparedRun::create(*session, names, bound_feeds, {{"y", "present_key", "present_value"}},
                                        {{Tensor(), bound_feeds[3], bound_feeds[4]}});
    ASSERT_TRUE(prepared) << prepared.status().to_string();
    ASSERT_TRUE((*prepared)->run().is_ok());
    EXPECT_EQ((*prepared)->written_in_place(1), !read_elsewhere);
    EXPECT_TRUE((*prepared)->written_in_place(2));  // past_value has no other reader in either model
    const Tensor& y = (*prepared)->outputs()[0];
    for (int64_t i = 0; i < 32; ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], (*separate)[0].data<float>()[i]) << i;
    for (int64_t g = 0; g < 2; ++g) {
      for (int64_t e = 0; e < 3 * 8; ++e) {  // rows 0..2 (the cached two and the new one)
        EXPECT_FLOAT_EQ(keys[static_cast<size_t>(g * 32 + e)], (*separate)[1].data<float>()[g * 32 + e]) << g << " " << e;
      }
    }
  }
}

}  // namespace
}  // namespace nxrt
