// Small ONNX models embedded in the runtime, built in code with onnx/model_writer.h. They back the CLI's
// `builtin:NAME` model specs, `nxrt export-builtin`, the examples and the API tests.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace nxrt {

// "simple_add": inputs x, y float [B]; output z float [B] = 2 * x + y (Mul by the scalar initializer `two`,
// then Add). Opset 21.
std::string simple_add_model();

// "mlp": input x float [B,4]; output y float [B,3] =
//   Sigmoid(Relu(x @ W1 + b1) @ W2 + b2)   (MatMul, Add, Relu, MatMul, Add, Sigmoid; opset 21)
// with deterministic weights:
//   W1[i][j] = ((i * 8 + j) % 7 - 3) / 10      (4 x 8)    b1[j] = (j % 3 - 1) / 20   (8)
//   W2[i][j] = ((i * 3 + j) % 5 - 2) / 8       (8 x 3)    b2[j] = (j - 1) / 10       (3)
std::string mlp_model();

// Plain C++ evaluation of the "mlp" model for x in row-major [rows, 4] (x.size() must be a multiple of 4);
// returns [rows, 3].
std::vector<float> mlp_reference(std::span<const float> x);

// Names accepted by default_model, in a stable order.
std::vector<std::string_view> default_model_names();

// Bytes of the model called `name`; INVALID_ARGUMENT listing the known names otherwise.
Expected<std::string> default_model(std::string_view name);

// Writes default_model(name) to `path`; NO_SUCHFILE / FAIL when the file cannot be written.
Status write_default_model(std::string_view name, const std::string& path);

}  // namespace nxrt
