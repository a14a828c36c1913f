#include "session/default_models.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "onnx/model_writer.h"

namespace nxrt {

namespace {

namespace w = onnx::write;

constexpr int kIn = 4;
constexpr int kHidden = 8;
constexpr int kOut = 3;

float w1(int i, int j) { return static_cast<float>((i * kHidden + j) % 7 - 3) / 10.0f; }
float b1(int j) { return static_cast<float>(j % 3 - 1) / 20.0f; }
float w2(int i, int j) { return static_cast<float>((i * kOut + j) % 5 - 2) / 8.0f; }
float b2(int j) { return static_cast<float>(j - 1) / 10.0f; }

std::vector<float> matrix_values(int rows, int cols, float (*value)(int, int)) {
  std::vector<float> values;
  values.reserve(static_cast<size_t>(rows) * cols);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) values.push_back(value(i, j));
  }
  return values;
}

std::vector<float> vector_values(int size, float (*value)(int)) {
  std::vector<float> values;
  values.reserve(size);
  for (int j = 0; j < size; ++j) values.push_back(value(j));
  return values;
}

w::Node node(std::string op_type, std::vector<std::string> inputs, std::string output) {
  w::Node result;
  result.name = output + "_node";
  result.op_type = std::move(op_type);
  result.inputs = std::move(inputs);
  result.outputs = {std::move(output)};
  return result;
}

w::ValueInfo float_value(std::string name, std::vector<w::Dim> dims) {
  w::ValueInfo info;
  info.name = std::move(name);
  info.elem_type = 1;
  info.dims = std::move(dims);
  return info;
}

}  // namespace

std::string simple_add_model() {
  w::Model model;
  model.opset_imports = {{"", 21}};
  model.doc_string = "z = 2 * x + y";
  w::Graph& graph = model.graph;
  graph.name = "simple_add";
  graph.inputs = {float_value("x", {std::string("B")}), float_value("y", {std::string("B")})};
  graph.outputs = {float_value("z", {std::string("B")})};
  graph.initializers = {w::float_tensor("two", {}, {2.0f})};
  graph.nodes = {node("Mul", {"x", "two"}, "two_x"), node("Add", {"two_x", "y"}, "z")};
  return w::encode_model(model);
}

std::string mlp_model() {
  w::Model model;
  model.opset_imports = {{"", 21}};
  model.doc_string = "y = Sigmoid(Relu(x @ W1 + b1) @ W2 + b2)";
  w::Graph& graph = model.graph;
  graph.name = "mlp";
  graph.inputs = {float_value("x", {std::string("B"), int64_t{kIn}})};
  graph.outputs = {float_value("y", {std::string("B"), int64_t{kOut}})};
  graph.initializers = {
      w::float_tensor("W1", {kIn, kHidden}, matrix_values(kIn, kHidden, w1)),
      w::float_tensor("b1", {kHidden}, vector_values(kHidden, b1)),
      w::float_tensor("W2", {kHidden, kOut}, matrix_values(kHidden, kOut, w2)),
      w::float_tensor("b2", {kOut}, vector_values(kOut, b2)),
  };
  graph.nodes = {
      node("MatMul", {"x", "W1"}, "h_mm"),    node("Add", {"h_mm", "b1"}, "h_pre"),
      node("Relu", {"h_pre"}, "h"),           node("MatMul", {"h", "W2"}, "y_mm"),
      node("Add", {"y_mm", "b2"}, "y_pre"),   node("Sigmoid", {"y_pre"}, "y"),
  };
  return w::encode_model(model);
}

std::vector<float> mlp_reference(std::span<const float> x) {
  const size_t rows = x.size() / kIn;
  std::vector<float> y(rows * kOut);
  for (size_t r = 0; r < rows; ++r) {
    float hidden[kHidden];
    for (int j = 0; j < kHidden; ++j) {
      float sum = 0.0f;
      for (int k = 0; k < kIn; ++k) sum += x[r * kIn + k] * w1(k, j);
      hidden[j] = std::max(sum + b1(j), 0.0f);
    }
    for (int j = 0; j < kOut; ++j) {
      float sum = 0.0f;
      for (int k = 0; k < kHidden; ++k) sum += hidden[k] * w2(k, j);
      y[r * kOut + j] = 1.0f / (1.0f + std::exp(-(sum + b2(j))));
    }
  }
  return y;
}

std::vector<std::string_view> default_model_names() { return {"simple_add", "mlp"}; }

Expected<std::string> default_model(std::string_view name) {
  if (name == "simple_add") return simple_add_model();
  if (name == "mlp") return mlp_model();
  std::string known;
  for (std::string_view candidate : default_model_names()) {
    if (!known.empty()) known += ", ";
    known += candidate;
  }
  return make_error(StatusCode::kInvalidArgument, "unknown builtin model '", name, "' (known: ", known, ")");
}

Status write_default_model(std::string_view name, const std::string& path) {
  TRY_ASSIGN(std::string bytes, default_model(name));
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return make_error(StatusCode::kNoSuchFile, "cannot open '", path, "' for writing");
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) return make_error(StatusCode::kFail, "failed to write ", bytes.size(), " bytes to '", path, "'");
  return Status::ok();
}

}  // namespace nxrt
