/* Runs the builtin "simple_add" model (z = 2 * x + y) through the C API.
 * usage: example_c_simple_add MODEL.onnx   (write it with `nxrt export-builtin simple_add MODEL.onnx`)
 * Prints z and exits non-zero unless z == [12, 24, 36, 48]. */
#include <math.h>
#include <stdio.h>

#include "nxrt/nxrt.h"

/* Prints and releases a failing status; returns non-zero when there was one. */
static int failed(NxrtStatus* status, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "%s failed: %s\n", what, nxrt_status_string(status));
  nxrt_release_status(status);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
    return 2;
  }
  int rc = 1;
  NxrtSessionOptions* options = NULL;
  NxrtSession* session = NULL;
  NxrtTensor* x = NULL;
  NxrtTensor* y = NULL;
  NxrtTensor* z = NULL;
  float x_data[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  float y_data[4] = {10.0f, 20.0f, 30.0f, 40.0f};
  const float expected[4] = {12.0f, 24.0f, 36.0f, 48.0f};
  const int64_t dims[1] = {4};

  printf("nxrt %s\n", nxrt_version_string());
  if (failed(nxrt_create_session_options(&options), "create options")) goto done;
  if (failed(nxrt_session_options_set_intra_op_threads(options, 1), "set threads")) goto done;
  if (failed(nxrt_create_session(argv[1], options, &session), "create session")) goto done;

  /* Zero-copy: the tensors refer to x_data / y_data, which outlive them. */
  if (failed(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, x_data, sizeof(x_data), &x), "wrap x")) goto done;
  if (failed(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, y_data, sizeof(y_data), &y), "wrap y")) goto done;
  {
    const char* input_names[2] = {"x", "y"};
    const NxrtTensor* inputs[2] = {x, y};
    const char* output_names[1] = {"z"};
    if (failed(nxrt_session_run(session, NULL, input_names, inputs, 2, output_names, 1, &z), "run")) goto done;
  }
  {
    void* raw = NULL;
    int64_t count = 0;
    if (failed(nxrt_tensor_get_data(z, &raw), "get data")) goto done;
    if (failed(nxrt_tensor_get_element_count(z, &count), "get count")) goto done;
    if (count != 4) {
      fprintf(stderr, "z has %lld elements, expected 4\n", (long long)count);
      goto done;
    }
    const float* values = (const float*)raw;
    printf("z = [%g, %g, %g, %g]\n", values[0], values[1], values[2], values[3]);
    rc = 0;
    for (int i = 0; i < 4; ++i) {
      if (fabsf(values[i] - expected[i]) > 1e-6f) {
        fprintf(stderr, "z[%d] = %g, expected %g\n", i, values[i], expected[i]);
        rc = 1;
      }
    }
  }

done:
  nxrt_release_tensor(z);
  nxrt_release_tensor(y);
  nxrt_release_tensor(x);
  nxrt_release_session(session);
  nxrt_release_session_options(options);
  return rc;
}
