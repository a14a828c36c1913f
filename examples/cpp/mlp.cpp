// Runs the builtin "mlp" model (y = Sigmoid(Relu(x @ W1 + b1) @ W2 + b2), x [B,4] -> y [B,3]) through the
// header-only C++ wrapper.
// usage: example_cpp_mlp MODEL.onnx   (write it with `nxrt export-builtin mlp MODEL.onnx`)
// Prints the model's signature and y, and exits non-zero unless y matches the expected values.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

#include "nxrt/nxrt.hpp"

namespace {

std::string dims_text(const nxrt::cxx::ValueInfo& info) {
  std::string text = "[";
  for (size_t d = 0; d < info.dims.size(); ++d) {
    if (d) text += ",";
    text += info.dims[d] >= 0 ? std::to_string(info.dims[d]) : info.dim_names[d];
  }
  return text + "]";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " MODEL.onnx\n";
    return 2;
  }
  try {
    nxrt::cxx::SessionOptions options;
    options.set_intra_op_threads(1);
    nxrt::cxx::Session session(argv[1], &options);
    for (size_t i = 0; i < session.input_count(); ++i) {
      nxrt::cxx::ValueInfo info = session.input_info(i);
      std::cout << "input  " << info.name << ": " << nxrt_element_type_name(info.element_type) << " "
                << dims_text(info) << "\n";
    }
    for (size_t i = 0; i < session.output_count(); ++i) {
      nxrt::cxx::ValueInfo info = session.output_info(i);
      std::cout << "output " << info.name << ": " << nxrt_element_type_name(info.element_type) << " "
                << dims_text(info) << "\n";
    }

    std::vector<float> x = {-0.9f, -0.6f, -0.3f, 0.0f, 0.3f, 0.6f, 0.9f, -0.9f, -0.6f, -0.3f, 0.0f, 0.3f};
    nxrt::cxx::Tensor input = nxrt::cxx::Tensor::wrap(x, {3, 4});
    std::vector<nxrt::cxx::Tensor> outputs = session.run({"x"}, {input});

    const std::vector<float> expected = {0.4430606f, 0.5034374f, 0.5265375f, 0.4625702f, 0.5153077f,
                                         0.5677065f, 0.4566714f, 0.5046874f, 0.5262259f};
    const std::vector<int64_t> shape = outputs.at(0).shape();
    const std::vector<float> y = outputs.at(0).to_vector<float>();
    std::cout << "y [" << shape.at(0) << "," << shape.at(1) << "] =\n";
    for (int64_t r = 0; r < shape.at(0); ++r) {
      for (int64_t c = 0; c < shape.at(1); ++c) std::printf(" %.6f", y[r * shape.at(1) + c]);
      std::printf("\n");
    }
    if (shape != std::vector<int64_t>{3, 3}) {
      std::cerr << "unexpected output shape\n";
      return 1;
    }
    int mismatches = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (std::fabs(y[i] - expected[i]) > 1e-5f) {
        std::cerr << "y[" << i << "] = " << y[i] << ", expected " << expected[i] << "\n";
        ++mismatches;
      }
    }
    return mismatches == 0 ? 0 : 1;
  } catch (const nxrt::cxx::Error& error) {
    std::cerr << error.what() << "\n";
    return 1;
  }
}
