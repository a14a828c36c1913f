// Helpers for optimizer tests: build a model with onnx::write, create sessions at two optimisation levels, run
// both on the same random inputs and compare, and list the optimised graph's ops.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "onnx/model_writer.h"
#include "session/session.h"

namespace nxrt::optimizer_test {

namespace w = onnx::write;

inline std::unique_ptr<Session> create_session(const w::Model& model, int level, int threads = 1) {
  SessionOptions options;
  options.graph_optimization_level = level;
  options.intra_op_num_threads = threads;
  auto session = Session::create_from_bytes(w::encode_model(model), options);
  EXPECT_TRUE(session.has_value()) << session.status().to_string();
  return session ? std::move(session).value() : nullptr;
}

// "Op" or "domain:Op" for each node of the session's (optimised) main graph, in order.
inline std::vector<std::string> op_types(const Session& session) {
  std::vector<std::string> ops;
  for (const graph::Node& node : session.graph().nodes) {
    ops.push_back(node.domain.empty() ? node.op_type : node.domain + ":" + node.op_type);
  }
  return ops;
}

inline int count_op(const Session& session, const std::string& op) {
  int count = 0;
  for (const std::string& name : op_types(session)) count += name == op;
  return count;
}

// Random float or double tensors for every input; symbolic dims take `symbol_size`.
inline std::vector<Tensor> random_inputs(const Session& session, uint32_t seed, int64_t symbol_size = 3) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::vector<Tensor> inputs;
  for (const ValueDesc& desc : session.inputs()) {
    Shape shape;
    for (const graph::Dim& dim : *desc.type.shape) shape.push_back(dim.is_known() ? dim.value : symbol_size);
    auto tensor = Tensor::allocate(desc.type.elem_type, shape);
    EXPECT_TRUE(tensor.has_value());
    for (int64_t i = 0; i < tensor->numel(); ++i) {
      if (desc.type.elem_type == DataType::kFloat64) {
        tensor->data<double>()[i] = dist(rng);
      } else {
        tensor->data<float>()[i] = static_cast<float>(dist(rng));
      }
    }
    inputs.push_back(std::move(*tensor));
  }
  return inputs;
}

inline std::vector<Tensor> run_session(const Session& session, const std::vector<Tensor>& inputs) {
  std::vector<std::string> names;
  for (const ValueDesc& desc : session.inputs()) names.push_back(desc.name);
  auto outputs = session.run(names, inputs, {});
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  return outputs ? std::move(*outputs) : std::vector<Tensor>{};
}

inline double element(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kFloat64 ? t.data<double>()[i] : static_cast<double>(t.data<float>()[i]);
}

// Outputs of `optimized` equal those of `reference` on the same inputs: exactly when `tolerance` is 0, else
// within |a - b| <= tolerance * (1 + |b|).
inline void expect_same_outputs(const Session& reference, const Session& optimized, double tolerance,
                                uint32_t seed = 7, int64_t symbol_size = 3) {
  const std::vector<Tensor> inputs = random_inputs(reference, seed, symbol_size);
  const std::vector<Tensor> expected = run_session(reference, inputs);
  const std::vector<Tensor> actual = run_session(optimized, inputs);
  ASSERT_EQ(expected.size(), actual.size());
  ASSERT_FALSE(expected.empty());
  for (size_t o = 0; o < expected.size(); ++o) {
    ASSERT_EQ(expected[o].shape(), actual[o].shape()) << "output " << o;
    ASSERT_EQ(expected[o].dtype(), actual[o].dtype()) << "output " << o;
    for (int64_t i = 0; i < expected[o].numel(); ++i) {
      const double e = element(expected[o], i);
      const double a = element(actual[o], i);
      if (tolerance == 0) {
        ASSERT_TRUE(e == a || (std::isnan(e) && std::isnan(a))) << "output " << o << " [" << i << "]: " << a
                                                                 << " vs " << e;
      } else {
        ASSERT_NEAR(a, e, tolerance * (1 + std::fabs(e))) << "output " << o << " [" << i << "]";
      }
    }
  }
}

// Asserts that two float tensors hold the same values bit for bit where it matters: NaN where the other is NaN,
// otherwise equal with the same sign (so -0 and +0 differ). Returns how many elements are NaN.
inline int64_t expect_identical_floats(const Tensor& expected, const Tensor& actual) {
  EXPECT_EQ(expected.shape(), actual.shape());
  if (expected.shape() != actual.shape()) return 0;
  int64_t nan_count = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const float e = expected.data<float>()[i];
    const float a = actual.data<float>()[i];
    nan_count += std::isnan(e);
    if (!((std::isnan(e) && std::isnan(a)) || (e == a && std::signbit(e) == std::signbit(a)))) {
      ADD_FAILURE() << "[" << i << "]: " << a << " vs " << e;
      return nan_count;
    }
  }
  return nan_count;
}

// Level-0 and level-99 sessions of `model`, compared; returns the optimised one for graph checks.
inline std::unique_ptr<Session> optimize_and_compare(const w::Model& model, double tolerance, int level = 99,
                                                     int threads = 1) {
  auto reference = create_session(model, 0);
  auto optimized = create_session(model, level, threads);
  if (!reference || !optimized) return nullptr;
  expect_same_outputs(*reference, *optimized, tolerance);
  return optimized;
}

inline w::Tensor scalar(const std::string& name, float value) { return w::float_tensor(name, {}, {value}); }

inline std::vector<float> ramp(size_t count, float scale = 0.1f) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = scale * static_cast<float>(static_cast<int>(i % 7) - 3) + 0.05f;
  return values;
}

}  // namespace nxrt::optimizer_test
