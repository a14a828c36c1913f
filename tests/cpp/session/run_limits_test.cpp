// Run deadlines, the terminate flag and max_tensor_bytes through whole sessions: a run stops between nodes, between
// Loop iterations and inside a long GEMM; a model's huge requests fail with an error naming the node, the output
// and the bytes, before anything is allocated; initializers that are too large or malformed fail at load.
// No assertion depends on how fast the machine is: every run that must stop would otherwise run for minutes or
// forever, and every run that must finish does far less work than its limit allows.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <thread>

#include "ep/cpu/run_limits.h"
#include "import/tensor_from_proto.h"
#include "onnx/model_writer.h"
#include "session/session.h"

namespace nxrt {
namespace {

namespace w = onnx::write;

constexpr int32_t kFloat = 1;
constexpr int32_t kInt64 = 7;
constexpr int32_t kDouble = 11;
constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

Expected<std::unique_ptr<Session>> create(const w::Model& model, const SessionOptions& options = {}) {
  return Session::create_from_bytes(w::encode_model(model), options);
}

Tensor int64s(Shape shape, std::vector<int64_t> values) {
  Tensor tensor = Tensor::allocate(DataType::kInt64, std::move(shape)).value();
  std::copy(values.begin(), values.end(), tensor.data<int64_t>());
  return tensor;
}

Tensor filled(Shape shape, float value) {
  Tensor tensor = Tensor::allocate(DataType::kFloat32, std::move(shape)).value();
  std::fill(tensor.data<float>(), tensor.data<float>() + tensor.numel(), value);
  return tensor;
}

bool contains(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

// Runs a session whose deadline is meant to pass inside its one long node. On a loaded machine the deadline can
// pass before that node starts ("before ... node"), which proves nothing about the kernel: such a run is repeated,
// up to three times. Returns the last run's status (OK when a run finished).
Status run_expecting_a_stop(const Session& session, const std::vector<std::string>& names,
                            const std::vector<Tensor>& feeds) {
  Status status = Status::ok();
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto ran = session.run(names, feeds, {});
    status = ran ? Status::ok() : ran.status();
    if (!contains(status, "before ")) break;
  }
  return status;
}

// Loop(m) carrying acc += 1 and, when `scan` is set, stacking a [256] float slice per iteration.
w::Model counting_loop(bool scan) {
  w::Graph body;
  body.name = "body";
  body.inputs = {{"i", kInt64, {}}, {"cond_in", 9, {}}, {"acc_in", kFloat, {int64_t{1}}}};
  body.outputs = {{"cond_out", 9, {}}, {"acc_out", kFloat, {int64_t{1}}}};
  body.initializers = {w::float_tensor("one", {1}, {1.0f})};
  body.nodes = {{"Identity", {"cond_in"}, {"cond_out"}}, {"Add", {"acc_in", "one"}, {"acc_out"}, {}, "add"}};
  if (scan) {
    body.initializers.push_back(w::float_tensor("row", {256}, std::vector<float>(256, 2.0f)));
    body.outputs.push_back({"slice", kFloat, {int64_t{256}}});
    body.nodes.push_back({"Mul", {"row", "acc_out"}, {"slice"}, {}, "scale"});
  }
  w::Model model;
  model.graph.inputs = {{"m", kInt64, {}}, {"start", kFloat, {int64_t{1}}}};
  model.graph.outputs = {{"total", kFloat, {int64_t{1}}}};
  std::vector<std::string> outputs = {"total"};
  if (scan) {
    model.graph.outputs.push_back({"history", kFloat, {std::string("N"), int64_t{256}}});
    outputs.push_back("history");
  }
  model.graph.nodes = {{"Loop", {"m", "", "start"}, outputs, {w::attr_graph("body", body)}, "loop"}};
  return model;
}

Expected<std::vector<Tensor>> run_loop(const Session& session, int64_t trips, const RunOptions& options = {}) {
  return session.run({{"m", "start"}}, {{int64s({}, {trips}), filled({1}, 0.0f)}}, {}, options);
}

TEST(RunLimits, LoopStopsAtTheSessionDeadline) {
  SessionOptions options;
  options.run_timeout_ms = 50;
  auto session = create(counting_loop(false), options);
  ASSERT_TRUE(session) << session.status().to_string();
  auto ran = run_loop(**session, 3);  // a short run finishes well within the deadline
  ASSERT_TRUE(ran) << ran.status().to_string();
  EXPECT_EQ((*ran)[0].data<float>()[0], 3.0f);

  auto forever = run_loop(**session, kForever);
  ASSERT_FALSE(forever);
  EXPECT_EQ(forever.status().code(), StatusCode::kFail);
  EXPECT_TRUE(contains(forever.status(), "run_timeout_ms (50 ms)")) << forever.status().to_string();
  EXPECT_TRUE(contains(forever.status(), "Loop node. Name:'loop'")) << forever.status().to_string();
}

TEST(RunLimits, RunOptionTimeoutOverridesTheSessionOne) {
  SessionOptions options;
  options.run_timeout_ms = 600'000;
  auto session = create(counting_loop(false), options);
  ASSERT_TRUE(session) << session.status().to_string();
  RunOptions run_options;
  run_options.run_timeout_ms = 30;
  auto forever = run_loop(**session, kForever, run_options);
  ASSERT_FALSE(forever);
  EXPECT_TRUE(contains(forever.status(), "run_timeout_ms (30 ms)")) << forever.status().to_string();
}

TEST(RunLimits, NegativeTimeoutsAreInvalid) {
  SessionOptions options;
  options.run_timeout_ms = -1;
  auto refused = create(counting_loop(false), options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);

  auto session = create(counting_loop(false));
  ASSERT_TRUE(session) << session.status().to_string();
  RunOptions run_options;
  run_options.run_timeout_ms = -5;
  auto ran = run_loop(**session, 1, run_options);
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.status().code(), StatusCode::kInvalidArgument);
}

// A chain of Adds over 64 MiB tensors: each node takes milliseconds, so a 1 ms deadline passes between nodes.
TEST(RunLimits, DeadlineIsCheckedBetweenNodes) {
  w::Model model;
  model.graph.inputs = {{"x", kFloat, {int64_t{1} << 24}}};
  std::string previous = "x";
  for (int n = 0; n < 40; ++n) {
    const std::string out = "v" + std::to_string(n);
    model.graph.nodes.push_back({"Add", {previous, "x"}, {out}, {}, "add" + std::to_string(n)});
    previous = out;
  }
  model.graph.outputs = {{previous, kFloat, {int64_t{1} << 24}}};
  SessionOptions options;
  options.intra_op_num_threads = 1;
  options.graph_optimization_level = 0;  // keeps the Adds apart (no elementwise fusion)
  options.run_timeout_ms = 1;
  auto session = create(model, options);
  ASSERT_TRUE(session) << session.status().to_string();
  auto ran = (*session)->run({{"x"}}, {{filled({int64_t{1} << 24}, 1.0f)}}, {});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.status().code(), StatusCode::kFail);
  EXPECT_TRUE(contains(ran.status(), "run_timeout_ms (1 ms) before Add node 'add")) << ran.status().to_string();
}

// One MatMul of 2048^3 multiply-adds (seconds on one core) stops inside the GEMM, between its tasks.
TEST(RunLimits, DeadlineStopsALongGemmBetweenTasks) {
  constexpr int64_t kSize = 2048;
  w::Model model;
  model.graph.inputs = {{"a", kFloat, {kSize, kSize}}, {"b", kFloat, {kSize, kSize}}};
  model.graph.outputs = {{"c", kFloat, {kSize, kSize}}};
  model.graph.nodes = {{"MatMul", {"a", "b"}, {"c"}, {}, "mm"}};
  SessionOptions options;
  options.intra_op_num_threads = 2;
  options.run_timeout_ms = 20;
  auto session = create(model, options);
  ASSERT_TRUE(session) << session.status().to_string();
  const Tensor a = filled({kSize, kSize}, 1.0f);
  const Status stopped = run_expecting_a_stop(**session, {"a", "b"}, {a, a});
  EXPECT_EQ(stopped.code(), StatusCode::kFail);
  EXPECT_TRUE(contains(stopped, "while running MatMul node 'mm'")) << stopped.to_string();
}

// A 3x3 Conv over 4 x 64 x 256 x 256 (about 19 GFLOP) stops between its tasks.
TEST(RunLimits, DeadlineStopsALongConvBetweenTasks) {
  const Shape x_shape = {4, 64, 256, 256};
  const Shape w_shape = {64, 64, 3, 3};
  w::Model model;
  model.graph.inputs = {{"x", kFloat, {int64_t{4}, int64_t{64}, int64_t{256}, int64_t{256}}},
                        {"w", kFloat, {int64_t{64}, int64_t{64}, int64_t{3}, int64_t{3}}}};
  model.graph.outputs = {{"y", kFloat, {}, false}};
  model.graph.nodes = {{"Conv", {"x", "w"}, {"y"}, {w::attr_ints("pads", {1, 1, 1, 1})}, "conv"}};
  SessionOptions options;
  options.intra_op_num_threads = 2;
  options.run_timeout_ms = 20;
  auto session = create(model, options);
  ASSERT_TRUE(session) << session.status().to_string();
  const Status stopped = run_expecting_a_stop(**session, {"x", "w"}, {filled(x_shape, 1.0f), filled(w_shape, 0.5f)});
  EXPECT_EQ(stopped.code(), StatusCode::kFail);
  EXPECT_TRUE(contains(stopped, "while running Conv node 'conv'")) << stopped.to_string();
}

// A deadline that passes inside an LSTM over 200,000 time steps fails the run naming the node (the kernel stops
// between its steps and inside its GEMMs; the executor discards the partial outputs).
TEST(RunLimits, DeadlineStopsALongRecurrence) {
  constexpr int64_t kSteps = 200000, kInput = 32, kHidden = 64;
  w::Model model;
  model.graph.inputs = {{"x", kFloat, {kSteps, int64_t{1}, kInput}}};
  model.graph.outputs = {{"y", kFloat, {}, false}};
  model.graph.initializers = {
      w::float_tensor("w", {1, 4 * kHidden, kInput}, std::vector<float>(4 * kHidden * kInput, 0.01f)),
      w::float_tensor("r", {1, 4 * kHidden, kHidden}, std::vector<float>(4 * kHidden * kHidden, 0.01f))};
  model.graph.nodes = {{"LSTM", {"x", "w", "r"}, {"y"}, {w::attr_int("hidden_size", kHidden)}, "lstm"}};
  SessionOptions options;
  options.intra_op_num_threads = 1;
  options.run_timeout_ms = 20;
  auto session = create(model, options);
  ASSERT_TRUE(session) << session.status().to_string();
  const Status stopped = run_expecting_a_stop(**session, {"x"}, {filled({kSteps, 1, kInput}, 0.5f)});
  EXPECT_EQ(stopped.code(), StatusCode::kFail);
  EXPECT_TRUE(contains(stopped, "while running LSTM node 'lstm'")) << stopped.to_string();
}

// A one-sided DFT of a 2-sample signal over dft_length "n" (a graph input), opset 21: the transform length, and so
// its FFT tables and work, come from the feed.
w::Model dft_of_length_input() {
  w::Model model;
  model.graph.inputs = {{"x", kFloat, {int64_t{1}, int64_t{2}, int64_t{1}}}, {"n", kInt64, {}}};
  model.graph.outputs = {{"y", kFloat, {}, false}};
  model.graph.nodes = {{"DFT", {"x", "n"}, {"y"}, {w::attr_int("onesided", 1)}, "dft"}};
  return model;
}

Tensor int64_scalar(int64_t value) {
  Tensor tensor = Tensor::allocate(DataType::kInt64, Shape{}).value();
  tensor.data<int64_t>()[0] = value;
  return tensor;
}

// Fuzzer finding: a DFT of length 13,631,347 (not a power of two: Bluestein over 2^25 points, about 2 GB of
// tables and buffers) ran for minutes. Building the plan and each transform now stop at the deadline.
TEST(RunLimits, DeadlineStopsALongFourierTransform) {
  SessionOptions options;
  options.intra_op_num_threads = 1;
  options.run_timeout_ms = 20;
  auto session = create(dft_of_length_input(), options);
  ASSERT_TRUE(session) << session.status().to_string();
  const Status stopped = run_expecting_a_stop(**session, {"x", "n"}, {filled({1, 2, 1}, 1.0f), int64_scalar(13631347)});
  EXPECT_EQ(stopped.code(), StatusCode::kFail);
  EXPECT_TRUE(contains(stopped, "while running DFT node")) << stopped.to_string();
}

// The per-task buffers of a long transform are checked against max_tensor_bytes even when its output fits.
TEST(RunLimits, FourierTransformBuffersRespectTheByteLimit) {
  SessionOptions options;
  options.max_tensor_bytes = 8 * (size_t{1} << 20);
  auto session = create(dft_of_length_input(), options);
  ASSERT_TRUE(session) << session.status().to_string();
  const Tensor x = filled({1, 2, 1}, 1.0f);
  auto ran = (*session)->run({{"x", "n"}}, {{x, int64_scalar((int64_t{1} << 20) + 1)}}, {});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(ran.status(), "running DFT node")) << ran.status().to_string();
  EXPECT_TRUE(contains(ran.status(), "transform line of length 1048577")) << ran.status().to_string();
  auto small = (*session)->run({{"x", "n"}}, {{x, int64_scalar(5)}}, {});
  ASSERT_TRUE(small) << small.status().to_string();
  EXPECT_EQ((*small)[0].shape(), (Shape{1, 3, 2}));
  // Both samples are 1: bin 0 sums them, bins 1 and 2 are 1 + exp(-2 pi i k / 5).
  EXPECT_NEAR((*small)[0].data<float>()[0], 2.0f, 1e-5f);
  EXPECT_NEAR((*small)[0].data<float>()[2], static_cast<float>(1 + std::cos(2 * 3.14159265358979 / 5)), 1e-5f);
}

TEST(RunLimits, TerminateFlagSetBeforeTheRunFailsWithOnnxRuntimesMessage) {
  auto session = create(counting_loop(false));
  ASSERT_TRUE(session) << session.status().to_string();
  std::atomic<bool> terminate{true};
  RunOptions run_options;
  run_options.terminate = &terminate;
  auto ran = run_loop(**session, 1, run_options);
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.status().code(), StatusCode::kFail);
  EXPECT_EQ(ran.status().message(), "Exiting due to terminate flag being set to true.");
}

TEST(RunLimits, TerminateFlagStopsARunningLoop) {
  auto session = create(counting_loop(false));
  ASSERT_TRUE(session) << session.status().to_string();
  std::atomic<bool> terminate{false};
  RunOptions run_options;
  run_options.terminate = &terminate;
  run_options.run_timeout_ms = 600'000;  // a broken flag fails the test (timeout message) instead of hanging it
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    terminate.store(true);
  });
  auto ran = run_loop(**session, kForever, run_options);
  setter.join();
  ASSERT_FALSE(ran);
  EXPECT_TRUE(contains(ran.status(), "Exiting due to terminate flag being set to true."))
      << ran.status().to_string();
}

// ---- max_tensor_bytes --------------------------------------------------------------------------------------

constexpr size_t kMiB = size_t{1} << 20;

// One node whose output size comes from the int64 input "n" (a graph input, so nothing folds it at creation).
struct HugeRequest {
  const char* op;
  w::Model model;
  Shape n_shape;
  std::vector<int64_t> n;
};

w::Model one_node(const char* op, std::vector<std::string> inputs, std::vector<w::Tensor> initializers,
                  std::vector<w::ValueInfo> graph_inputs, int32_t out_type) {
  w::Model model;
  model.graph.inputs = std::move(graph_inputs);
  model.graph.initializers = std::move(initializers);
  model.graph.outputs = {{"y", out_type, {}, false}};
  model.graph.nodes = {{op, std::move(inputs), {"y"}, {}, "big"}};
  return model;
}

// Each request asks for `count` elements (4 bytes each but Range's 8).
std::vector<HugeRequest> huge_requests(int64_t count) {
  const w::ValueInfo n_vector{"n", kInt64, {int64_t{1}}};
  const w::ValueInfo n_scalar{"n", kInt64, {}};
  return {
      {"ConstantOfShape", one_node("ConstantOfShape", {"n"}, {}, {n_vector}, kFloat), {1}, {count}},
      {"Expand", one_node("Expand", {"x", "n"}, {w::float_tensor("x", {1}, {1})}, {n_vector}, kFloat), {1}, {count}},
      {"Tile", one_node("Tile", {"x", "n"}, {w::float_tensor("x", {1}, {1})}, {n_vector}, kFloat), {1}, {count}},
      {"Range", one_node("Range", {"zero", "n", "one"}, {w::int64_tensor("zero", {}, {0}), w::int64_tensor("one", {}, {1})},
                         {n_scalar}, kInt64),
       {},
       {count}},
      {"Pad", one_node("Pad", {"x", "n"}, {w::float_tensor("x", {1}, {1})}, {{"n", kInt64, {int64_t{2}}}}, kFloat),
       {2},
       {0, count - 1}},
  };
}

TEST(RunLimits, HugeOutputsFailBeforeAllocationNamingNodeOutputAndBytes) {
  SessionOptions options;
  options.max_tensor_bytes = kMiB;
  for (const HugeRequest& request : huge_requests(int64_t{1} << 30)) {
    SCOPED_TRACE(request.op);
    auto session = create(request.model, options);
    ASSERT_TRUE(session) << session.status().to_string();
    auto ran = (*session)->run({{"n"}}, {{int64s(request.n_shape, request.n)}}, {});
    ASSERT_FALSE(ran);
    const Status& status = ran.status();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(contains(status, std::string("running ") + request.op + " node. Name:'big'")) << status.to_string();
    EXPECT_TRUE(contains(status, "output 'y'")) << status.to_string();
    const std::string bytes = std::string(request.op) == "Range" ? "8589934592" : "4294967296";
    EXPECT_TRUE(contains(status, "needs " + bytes + " bytes")) << status.to_string();
    EXPECT_TRUE(contains(status, "max_tensor_bytes (1048576)")) << status.to_string();

    auto small = (*session)->run({{"n"}}, {{int64s(request.n_shape, request.op == std::string("Pad")
                                                                          ? std::vector<int64_t>{0, 3}
                                                                          : std::vector<int64_t>{4})}},
                                 {});
    ASSERT_TRUE(small) << small.status().to_string();
    EXPECT_EQ((*small)[0].numel(), 4);
  }
}

TEST(RunLimits, SizesThatOverflowFailWithoutALimit) {
  // 2^62 elements: the count fits in int64, its bytes do not fit in 64 bits.
  auto session = create(one_node("ConstantOfShape", {"n"}, {}, {{"n", kInt64, {int64_t{2}}}}, kFloat));
  ASSERT_TRUE(session) << session.status().to_string();
  auto ran = (*session)->run({{"n"}}, {{int64s({2}, {int64_t{1} << 31, int64_t{1} << 31})}}, {});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(ran.status(), "ConstantOfShape")) << ran.status().to_string();

  auto tile = create(one_node("Tile", {"x", "n"}, {w::float_tensor("x", {2}, {1, 2})}, {{"n", kInt64, {int64_t{1}}}},
                              kFloat));
  ASSERT_TRUE(tile) << tile.status().to_string();
  auto tiled = (*tile)->run({{"n"}}, {{int64s({1}, {kForever})}}, {});
  ASSERT_FALSE(tiled);
  EXPECT_EQ(tiled.status().code(), StatusCode::kInvalidArgument);
}

TEST(RunLimits, EmptyExpandWithAHugeDimAllocatesNothing) {
  auto session = create(one_node("Expand", {"x", "n"}, {w::float_tensor("x", {1}, {1})}, {{"n", kInt64, {int64_t{2}}}},
                                 kFloat));
  ASSERT_TRUE(session) << session.status().to_string();
  auto ran = (*session)->run({{"n"}}, {{int64s({2}, {0, int64_t{1} << 50})}}, {});
  ASSERT_TRUE(ran) << ran.status().to_string();
  EXPECT_EQ((*ran)[0].shape(), (Shape{0, int64_t{1} << 50}));
}

TEST(RunLimits, LoopScanOutputsStopGrowingAtTheLimit) {
  SessionOptions options;
  options.max_tensor_bytes = 64 * 1024;  // 64 iterations of 1 KiB slices
  auto session = create(counting_loop(true), options);
  ASSERT_TRUE(session) << session.status().to_string();
  auto few = run_loop(**session, 10);
  ASSERT_TRUE(few) << few.status().to_string();
  EXPECT_EQ((*few)[1].shape(), (Shape{10, 256}));
  auto forever = run_loop(**session, kForever);
  ASSERT_FALSE(forever);
  EXPECT_EQ(forever.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(forever.status(), "Loop scan output 0 (stacked over 65 iterations) needs 66560 bytes"))
      << forever.status().to_string();
  EXPECT_TRUE(contains(forever.status(), "Name:'loop'")) << forever.status().to_string();
}

// ---- initializers at load ----------------------------------------------------------------------------------

w::Model with_initializer(w::Tensor initializer) {
  w::Model model;
  model.graph.initializers = {std::move(initializer)};
  model.graph.outputs = {{"y", kFloat, {}, false}};
  model.graph.nodes = {{"Identity", {"w"}, {"y"}}};
  return model;
}

// The model parser rejects these before import ("TensorProto 'w' at byte offset ..."); import checks them again
// for tensors that reach it by other paths (tensor files).
TEST(RunLimits, InitializerWhoseDimsOverflowFailsAtLoad) {
  w::Tensor count_overflow{"w", kFloat, {int64_t{1} << 40, int64_t{1} << 40}, ""};
  auto refused = create(with_initializer(count_overflow));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidProtobuf);
  EXPECT_TRUE(contains(refused.status(), "'w'")) << refused.status().to_string();

  w::Tensor bytes_overflow{"w", kDouble, {int64_t{1} << 31, int64_t{1} << 31}, ""};
  refused = create(with_initializer(bytes_overflow));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidProtobuf);
  EXPECT_TRUE(contains(refused.status(), "'w'")) << refused.status().to_string();
}

TEST(RunLimits, InitializerDataMustMatchItsDims) {
  w::Tensor short_data = w::float_tensor("w", {4}, {1, 2, 3, 4});
  short_data.dims = {8};
  auto refused = create(with_initializer(short_data));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidProtobuf);
  EXPECT_TRUE(contains(refused.status(), "'w'")) << refused.status().to_string();
}

TEST(RunLimits, InitializerLargerThanTheLimitFailsAtLoad) {
  const w::Model model = with_initializer(w::float_tensor("w", {1024}, std::vector<float>(1024, 1.0f)));
  SessionOptions options;
  options.max_tensor_bytes = 4096;
  auto fits = create(model, options);
  ASSERT_TRUE(fits) << fits.status().to_string();
  options.max_tensor_bytes = 4095;
  auto refused = create(model, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(refused.status(), "initializer 'w'")) << refused.status().to_string();
  EXPECT_TRUE(contains(refused.status(), "need 4096 bytes, more than max_tensor_bytes (4095)"))
      << refused.status().to_string();
}

TEST(RunLimits, ImportChecksSizesBeforeReadingData) {
  onnx::TensorProto proto;
  proto.data_type = kDouble;
  proto.dims = {int64_t{1} << 31, int64_t{1} << 31};
  proto.has_raw_data = true;
  auto overflow = import::tensor_from_proto(proto, nullptr, "initializer 'w'");
  ASSERT_FALSE(overflow);
  EXPECT_EQ(overflow.status().message(),
            "initializer 'w': dims [2147483648,2147483648] of double need more bytes than 64 bits can count");

  proto.dims = {int64_t{1} << 40};
  auto too_large = import::tensor_from_proto(proto, nullptr, "initializer 'w'", kMiB);
  ASSERT_FALSE(too_large);
  EXPECT_EQ(too_large.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(too_large.status(), "initializer 'w': dims [1099511627776] of double need 8796093022208 bytes"))
      << too_large.status().to_string();
}

// ---- RunLimits itself --------------------------------------------------------------------------------------

TEST(RunLimits, StopLatchesAndNamesItsCause) {
  const cpu::RunLimits none;
  EXPECT_FALSE(none.should_stop());
  EXPECT_TRUE(none.stop_status("anywhere").is_ok());

  std::atomic<bool> terminate{false};
  const cpu::RunLimits flagged(&terminate, 0, 0);
  EXPECT_FALSE(flagged.should_stop());
  terminate.store(true);
  EXPECT_TRUE(flagged.should_stop());
  terminate.store(false);
  EXPECT_TRUE(flagged.stopped());  // latched
  EXPECT_EQ(flagged.stop_status("before X").message(), "Exiting due to terminate flag being set to true.");

  const cpu::RunLimits timed(nullptr, 1, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(timed.stopped());  // nobody looked yet
  EXPECT_TRUE(timed.should_stop());
  EXPECT_EQ(timed.stop_status("before Add node 'a'").message(),
            "Exiting because the run exceeded run_timeout_ms (1 ms) before Add node 'a'.");
}

TEST(RunLimits, StorageBytesOverflowIsNotAWrap) {
  EXPECT_EQ(cpu::tensor_storage_bytes(DataType::kFloat32, Shape{2, 3}), size_t{24});
  EXPECT_EQ(cpu::tensor_storage_bytes(DataType::kInt4, Shape{3}), size_t{2});
  EXPECT_FALSE(cpu::tensor_storage_bytes(DataType::kFloat32, Shape{int64_t{1} << 62}));
  EXPECT_FALSE(cpu::tensor_storage_bytes(DataType::kFloat32, Shape{int64_t{1} << 32, int64_t{1} << 32}));
  EXPECT_FALSE(cpu::tensor_storage_bytes(DataType::kFloat32, Shape{-1}));
  const cpu::RunLimits limited(nullptr, 0, 100);
  EXPECT_TRUE(limited.check_tensor_bytes(DataType::kFloat32, Shape{25}, "t").is_ok());
  const Status over = limited.check_tensor_bytes(DataType::kFloat32, Shape{26}, "output 'y'");
  EXPECT_EQ(over.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(over.message(), "output 'y': a float tensor of shape [26] needs 104 bytes, more than max_tensor_bytes (100)");
}

}  // namespace
}  // namespace nxrt
