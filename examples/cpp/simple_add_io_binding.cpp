// Deployment workflow in C++ (header-only nxrt.hpp): the builtin "simple_add" model (z = 2 * x + y, symbolic
// batch "B") run on std::vector buffers through an IO binding; z is written into the caller's vector in place.
// usage: example_cpp_simple_add_io_binding MODEL.onnx
#include <cmath>
#include <cstdio>
#include <vector>

#include "nxrt/nxrt.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
    return 2;
  }
  try {
    namespace nx = nxrt::cxx;
    nx::ThreadPool pool(2);  // shared by every session created with these options
    nx::SessionOptions options;
    options.set_thread_pool(pool).append_execution_provider("CPU");
    nx::Session session(argv[1], &options);
    nx::ValueInfo x_info = session.input_info(0);
    std::printf("graph '%s', input %s has %zu dims, dim 0 is '%s'; %d threads\n",
                session.metadata(NXRT_METADATA_GRAPH_NAME).c_str(), x_info.name.c_str(), x_info.dims.size(),
                x_info.dim_names.empty() ? "?" : x_info.dim_names[0].c_str(), session.num_threads());

    const int64_t batch = 5;
    std::vector<float> x(batch), y(batch), z(batch, -1.0f);
    for (int64_t i = 0; i < batch; ++i) {
      x[i] = static_cast<float>(i) + 0.5f;
      y[i] = static_cast<float>(100 * i);
    }
    nx::Tensor x_tensor = nx::Tensor::wrap(x, {batch});
    nx::Tensor y_tensor = nx::Tensor::wrap(y, {batch});
    nx::Tensor z_tensor = nx::Tensor::wrap(z, {batch});
    nx::IoBinding binding(session);
    binding.bind_input("x", x_tensor).bind_input("y", y_tensor).bind_output("z", z_tensor);
    nx::RunOptions run_options;
    run_options.set_tag("example");
    binding.run(&run_options);

    if (!binding.written_in_place(0)) {
      std::fprintf(stderr, "z was copied, expected an in-place write\n");
      return 1;
    }
    for (int64_t i = 0; i < batch; ++i) {
      if (std::fabs(z[i] - (2.0f * x[i] + y[i])) > 1e-5f) {
        std::fprintf(stderr, "z[%lld] = %g, expected %g\n", static_cast<long long>(i), z[i], 2.0f * x[i] + y[i]);
        return 1;
      }
    }
    std::printf("z = [%g, %g, %g, %g, %g]\n", z[0], z[1], z[2], z[3], z[4]);

    // A provider that is not available is an error, never a silent CPU run.
    try {
      nx::SessionOptions cuda_options;
      cuda_options.append_execution_provider("CUDA");
      std::printf("CUDA execution provider available\n");
    } catch (const nx::Error& error) {
      if (error.code() != NXRT_EP_FAIL) throw;
      std::printf("CUDA not available: %s\n", error.message().c_str());
    }
  } catch (const nxrt::cxx::Error& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}
