#include "session/session.h"

#include <gtest/gtest.h>

#include <thread>

#include "import/importer.h"
#include "onnx/model_writer.h"

namespace nxrt {
namespace {

namespace w = onnx::write;

// z = 2 * x + y over a symbolic dim B.
w::Model simple_add_model() {
  w::Model model;
  model.graph.inputs = {{"x", 1, {std::string("B")}}, {"y", 1, {std::string("B")}}};
  model.graph.outputs = {{"z", 1, {std::string("B")}}};
  model.graph.initializers = {w::float_tensor("two", {}, {2.0f})};
  model.graph.nodes = {{"Mul", {"two", "x"}, {"twice"}, {}, "mul"}, {"Add", {"twice", "y"}, {"z"}, {}, "add"}};
  return model;
}

std::unique_ptr<Session> create(const w::Model& model, const SessionOptions& options = {}) {
  auto session = Session::create_from_bytes(w::encode_model(model), options);
  EXPECT_TRUE(session.has_value()) << session.status().to_string();
  return session ? std::move(session).value() : nullptr;
}

Tensor floats(Shape shape, std::vector<float>& storage) {
  return Tensor::wrap(DataType::kFloat32, std::move(shape), storage.data());
}

Status run_status(const Session& session, const std::vector<std::string>& names, const std::vector<Tensor>& values) {
  auto result = session.run(names, values, {});
  return result ? Status::ok() : result.status();
}

TEST(Session, RunsSimpleAddWithSymbolicDim) {
  auto session = create(simple_add_model());
  ASSERT_TRUE(session);
  ASSERT_EQ(session->inputs().size(), 2u);
  EXPECT_EQ(session->inputs()[0].type.to_string(), "tensor(float)");
  EXPECT_EQ(graph::symbolic_shape_to_string(*session->outputs()[0].type.shape), "[B]");
  for (int64_t batch : {1, 4, 1000}) {
    std::vector<float> x(batch), y(batch);
    for (int64_t i = 0; i < batch; ++i) x[i] = static_cast<float>(i), y[i] = static_cast<float>(10 * i);
    auto outputs = session->run({{"x", "y"}}, {{floats({batch}, x), floats({batch}, y)}}, {});
    ASSERT_TRUE(outputs) << outputs.status().to_string();
    ASSERT_EQ(outputs->size(), 1u);
    const Tensor& z = (*outputs)[0];
    ASSERT_EQ(z.shape(), Shape{batch});
    for (int64_t i = 0; i < batch; ++i) EXPECT_FLOAT_EQ(z.data<float>()[i], 12.0f * i);
  }
}

TEST(Session, ErrorsAreWordedLikeOnnxRuntime) {
  auto session = create(simple_add_model());
  ASSERT_TRUE(session);
  std::vector<float> four(4, 1.0f), six(6, 1.0f);
  std::vector<double> doubles(4, 1.0);

  Status missing = run_status(*session, {"x"}, {floats({4}, four)});
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.message(), "Missing Input: y");

  Status unknown = run_status(*session, {"x", "y", "w"}, {floats({4}, four), floats({4}, four), floats({4}, four)});
  EXPECT_EQ(unknown.message(), "Invalid input name: w");

  Status wrong_type = run_status(
      *session, {"x", "y"}, {Tensor::wrap(DataType::kFloat64, {4}, doubles.data()), floats({4}, four)});
  EXPECT_EQ(wrong_type.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong_type.message(), "Unexpected input data type. Actual: (tensor(double)) , expected: (tensor(float))");

  Status wrong_rank = run_status(*session, {"x", "y"}, {floats({2, 2}, four), floats({4}, four)});
  EXPECT_EQ(wrong_rank.message(),
            "Invalid rank for input: x Got: 2 Expected: 1 Please fix either the inputs/outputs or the model.");

  Status bad_broadcast = run_status(*session, {"x", "y"}, {floats({4}, four), floats({6}, six)});
  EXPECT_EQ(bad_broadcast.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_broadcast.message().find("Add node. Name:'add'"), std::string::npos) << bad_broadcast.message();

  auto bad_output = session->run({{"x", "y"}}, {{floats({4}, four), floats({4}, four)}}, {{"nope"}});
  ASSERT_FALSE(bad_output);
  EXPECT_EQ(bad_output.status().message(), "Invalid output name: nope");
  EXPECT_EQ(bad_output.status().to_string(), "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Invalid output name: nope");
}

TEST(Session, ChecksFixedDims) {
  w::Model model = simple_add_model();
  model.graph.inputs[0].dims = {int64_t{4}};
  auto session = create(model);
  ASSERT_TRUE(session);
  std::vector<float> three(3, 1.0f);
  Status status = run_status(*session, {"x", "y"}, {floats({3}, three), floats({3}, three)});
  EXPECT_EQ(status.message(),
            "Got invalid dimensions for input: x for the following indices\n index: 0 Got: 3 Expected: 4\n"
            " Please fix either the inputs/outputs or the model.");
}

TEST(Session, FreeDimensionOverrideFixesSymbolicDim) {
  SessionOptions options;
  options.free_dimension_overrides["B"] = 2;
  auto session = create(simple_add_model(), options);
  ASSERT_TRUE(session);
  EXPECT_EQ(graph::symbolic_shape_to_string(*session->inputs()[0].type.shape), "[2]");
  EXPECT_EQ(graph::symbolic_shape_to_string(*session->outputs()[0].type.shape), "[2]");
}

TEST(Session, UnknownOpIsNotImplemented) {
  w::Model model = simple_add_model();
  model.graph.nodes[1].op_type = "NoSuchOp";
  auto session = Session::create_from_bytes(w::encode_model(model));
  ASSERT_FALSE(session);
  EXPECT_EQ(session.status().code(), StatusCode::kNotImplemented);
  EXPECT_EQ(session.status().message(), "Could not find an implementation for NoSuchOp(21) node with name 'add'");
}

TEST(Session, NodeWithoutOutputsIsAnInvalidGraph) {
  // Found by fuzz_kernel: an RNN without outputs indexed an empty output list (fuzz/regressions/kernel).
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{2}}}};
  model.graph.outputs = {{"x", 1, {int64_t{2}}}};
  model.graph.nodes = {{"Relu", {"x"}, {}, {}, "silent"}};
  auto session = Session::create_from_bytes(w::encode_model(model));
  ASSERT_FALSE(session);
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidGraph);
  EXPECT_NE(session.status().message().find("has no outputs"), std::string::npos) << session.status().message();
  EXPECT_NE(session.status().message().find("silent"), std::string::npos) << session.status().message();
}

TEST(Session, RejectsCyclesAndDanglingInputs) {
  w::Model cycle = simple_add_model();
  cycle.graph.nodes = {{"Add", {"x", "b"}, {"a"}, {}, "n1"}, {"Add", {"a", "y"}, {"b"}, {}, "n2"},
                       {"Identity", {"b"}, {"z"}, {}, "n3"}};
  auto cyclic = Session::create_from_bytes(w::encode_model(cycle));
  ASSERT_FALSE(cyclic);
  EXPECT_EQ(cyclic.status().code(), StatusCode::kInvalidGraph);
  EXPECT_NE(cyclic.status().message().find("cycle"), std::string::npos);

  w::Model dangling = simple_add_model();
  dangling.graph.nodes[1].inputs = {"twice", "ghost"};
  auto result = Session::create_from_bytes(w::encode_model(dangling));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidGraph);
  EXPECT_NE(result.status().message().find("'ghost'"), std::string::npos);

  w::Model twice = simple_add_model();
  twice.graph.nodes[1].outputs = {"twice"};
  auto duplicate = Session::create_from_bytes(w::encode_model(twice));
  ASSERT_FALSE(duplicate);
  EXPECT_EQ(duplicate.status().code(), StatusCode::kInvalidGraph);

  w::Model no_output = simple_add_model();
  no_output.graph.outputs[0].name = "missing";
  EXPECT_FALSE(Session::create_from_bytes(w::encode_model(no_output)));
}

TEST(Session, GarbageBytesAreInvalidProtobuf) {
  auto session = Session::create_from_bytes(std::string("\x0a\xff\xff\xff\xff\x0f garbage", 15));
  ASSERT_FALSE(session);
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidProtobuf);
  auto missing = Session::create_from_file("/nonexistent/model.onnx");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), StatusCode::kNoSuchFile);
}

TEST(Session, InlinesModelLocalFunctions) {
  w::Model model = simple_add_model();
  w::Function axpy;
  axpy.name = "TwiceAdd";
  axpy.domain = "custom";
  axpy.inputs = {"a", "b"};
  axpy.outputs = {"c"};
  axpy.opset_imports = {{"", 21}};
  axpy.nodes = {{"Add", {"a", "a"}, {"t"}, {}, "double"}, {"Add", {"t", "b"}, {"c"}, {}, "sum"}};
  model.functions = {axpy};
  model.opset_imports.push_back({"custom", 1});
  model.graph.initializers.clear();
  model.graph.nodes = {{"TwiceAdd", {"x", "y"}, {"z"}, {}, "call", "custom"}};
  auto session = create(model);
  ASSERT_TRUE(session);
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30};
  auto outputs = session->run({{"x", "y"}}, {{floats({3}, x), floats({3}, y)}}, {});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  EXPECT_FLOAT_EQ((*outputs)[0].data<float>()[2], 36.0f);
}

TEST(Session, ConcurrentRunsOnOneSessionAgree) {
  SessionOptions options;
  options.intra_op_num_threads = 2;
  auto session = create(simple_add_model(), options);
  ASSERT_TRUE(session);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int iteration = 0; iteration < 50; ++iteration) {
        const int64_t n = 1000 + t * 7 + iteration;
        std::vector<float> x(n, static_cast<float>(t)), y(n, 1.0f);
        auto outputs = session->run({{"x", "y"}}, {{floats({n}, x), floats({n}, y)}}, {});
        if (!outputs || (*outputs)[0].data<float>()[n - 1] != 2.0f * t + 1.0f) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Session, TerminateFlagStopsRun) {
  auto session = create(simple_add_model());
  ASSERT_TRUE(session);
  std::atomic<bool> terminate{true};
  RunOptions run_options;
  run_options.terminate = &terminate;
  std::vector<float> x(2, 1.0f);
  auto outputs = session->run({{"x", "y"}}, {{floats({2}, x), floats({2}, x)}}, {}, run_options);
  ASSERT_FALSE(outputs);
  EXPECT_EQ(outputs.status().code(), StatusCode::kFail);
}

TEST(Import, InitializerRawDataIsReferencedInPlaceWhenAligned) {
  w::Model model = simple_add_model();
  model.graph.initializers = {w::float_tensor("two", {1024}, std::vector<float>(1024, 2.0f))};
  // Pad the model so that raw_data lands at both even and odd offsets across the two runs.
  for (const std::string& padding : {std::string(), std::string("p")}) {
    model.producer_version = padding;
    const auto bytes = onnx::model_bytes_from_buffer(w::encode_model(model));
    auto proto = onnx::parse_model(bytes->bytes());
    ASSERT_TRUE(proto) << proto.status().to_string();
    auto imported = import::import_model(*proto, bytes);
    ASSERT_TRUE(imported) << imported.status().to_string();
    const graph::Graph& g = imported->graph;
    const Tensor& weights = *g.values[g.find_value("two")].initializer;
    const char* raw = proto->graph->initializer[0].raw_data.data();
    if (reinterpret_cast<uintptr_t>(raw) % alignof(float) == 0) {
      EXPECT_EQ(weights.raw_data(), raw);
    } else {
      EXPECT_NE(weights.raw_data(), raw);
    }
    EXPECT_EQ(weights.numel(), 1024);
    EXPECT_FLOAT_EQ(weights.data<float>()[1023], 2.0f);
  }
}

}  // namespace
}  // namespace nxrt

namespace nxrt {
namespace {

TEST(Session, OutputsAliasingInputsOrInitializersAreCopies) {
  namespace w = onnx::write;
  w::Model model;
  model.graph.inputs = {{"x", 1, {int64_t{2}, int64_t{2}}}};
  model.graph.initializers = {w::float_tensor("weights", {4}, {1, 2, 3, 4}), w::int64_tensor("shape", {2}, {2, 2})};
  model.graph.nodes = {{"Identity", {"x"}, {"same"}, {}, "id"}, {"Reshape", {"weights", "shape"}, {"w2"}, {}, "r"}};
  model.graph.outputs = {{"same", 1, {int64_t{2}, int64_t{2}}}, {"w2", 1, {int64_t{2}, int64_t{2}}}};
  auto session = Session::create_from_bytes(w::encode_model(model));
  ASSERT_TRUE(session) << session.status().to_string();
  std::vector<float> x = {5, 6, 7, 8};
  auto outputs = (*session)->run({{"x"}}, {{Tensor::wrap(DataType::kFloat32, {2, 2}, x.data())}}, {});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  EXPECT_NE((*outputs)[0].raw_data(), static_cast<void*>(x.data()));
  EXPECT_EQ((*outputs)[0].data<float>()[3], 8.0f);
  const graph::Graph& g = (*session)->graph();
  EXPECT_NE((*outputs)[1].raw_data(), g.values[g.find_value("weights")].initializer->raw_data());
  EXPECT_EQ((*outputs)[1].shape(), (Shape{2, 2}));
  EXPECT_EQ((*outputs)[1].data<float>()[2], 3.0f);
}

}  // namespace
}  // namespace nxrt

namespace nxrt {
namespace {

TEST(Session, ConstantOutputsAreNotSharedWithTheCaller) {
  namespace w = onnx::write;
  w::Model model;
  model.graph.nodes = {{"Constant", {}, {"c"}, {w::attr_tensor("value", w::float_tensor("", {2}, {1, 2}))}, "k"}};
  model.graph.outputs = {{"c", 1, {int64_t{2}}}};
  auto session = Session::create_from_bytes(w::encode_model(model));
  ASSERT_TRUE(session) << session.status().to_string();
  auto first = (*session)->run({}, {}, {});
  ASSERT_TRUE(first) << first.status().to_string();
  (*first)[0].data<float>()[0] = 100.0f;
  auto second = (*session)->run({}, {}, {});
  ASSERT_TRUE(second);
  EXPECT_EQ((*second)[0].data<float>()[0], 1.0f);
}

TEST(Session, InitializersFromTheOptionsReplaceTheModelsAndAreChecked) {
  std::vector<float> three{3.0f};
  SessionOptions options;
  options.initializers["two"] = floats({}, three);
  auto session = create(simple_add_model(), options);
  ASSERT_TRUE(session);
  std::vector<float> x{1.0f, 2.0f}, y{0.5f, 0.5f};
  auto outputs = session->run({{"x", "y"}}, {{floats({2}, x), floats({2}, y)}}, {});
  ASSERT_TRUE(outputs) << outputs.status().to_string();
  EXPECT_FLOAT_EQ((*outputs)[0].data<float>()[1], 6.5f);  // 3 * 2 + 0.5

  std::vector<float> pair{1.0f, 2.0f};
  SessionOptions wrong_shape;
  wrong_shape.initializers["two"] = floats({2}, pair);
  auto refused = Session::create_from_bytes(w::encode_model(simple_add_model()), wrong_shape);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("declares float []"), std::string::npos) << refused.status().to_string();
  SessionOptions unknown;
  unknown.initializers["three"] = floats({}, three);
  auto missing = Session::create_from_bytes(w::encode_model(simple_add_model()), unknown);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.status().message().find("'three'"), std::string::npos);
}

}  // namespace
}  // namespace nxrt
