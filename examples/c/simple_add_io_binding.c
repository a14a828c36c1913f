/* Deployment workflow in C: the builtin "simple_add" model (z = 2 * x + y, symbolic batch dim "B") run on
 * caller buffers through an IO binding, so the run reads x and y in place and writes z straight into the
 * caller's array.
 * usage: example_c_simple_add_io_binding MODEL.onnx   (write it with `nxrt export-builtin simple_add MODEL.onnx`)
 * Exits non-zero unless every z == 2 * x + y and z was written in place. */
#include <math.h>
#include <stdio.h>

#include "nxrt/nxrt.h"

#define BATCH 8

static int failed(NxrtStatus* status, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "%s failed: %s\n", what, nxrt_status_string(status));
  nxrt_release_status(status);
  return 1;
}

/* Prints "name: type [dims]" with symbolic dims by name. */
static int describe_input(const NxrtSession* session, size_t index) {
  const char* name = NULL;
  const char* dim_name = NULL;
  NxrtElementType type = NXRT_TYPE_UNDEFINED;
  int64_t rank = 0;
  int64_t dims[8];
  if (failed(nxrt_session_get_input_name(session, index, &name), "input name")) return 1;
  if (failed(nxrt_session_get_input_element_type(session, index, &type), "input type")) return 1;
  if (failed(nxrt_session_get_input_rank(session, index, &rank), "input rank")) return 1;
  if (rank < 0 || rank > 8) return 1;
  if (failed(nxrt_session_get_input_dims(session, index, dims, 8), "input dims")) return 1;
  printf("input %s: %s [", name, nxrt_element_type_name(type));
  for (int64_t d = 0; d < rank; ++d) {
    if (failed(nxrt_session_get_input_dim_name(session, index, (size_t)d, &dim_name), "dim name")) return 1;
    if (dims[d] < 0) {
      printf("%s%s", d ? ", " : "", dim_name);
    } else {
      printf("%s%lld", d ? ", " : "", (long long)dims[d]);
    }
  }
  printf("]\n");
  return 0;
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
  NxrtIoBinding* binding = NULL;
  float x_data[BATCH], y_data[BATCH], z_data[BATCH];
  const int64_t dims[1] = {BATCH};
  const char* graph_name = NULL;
  int in_place = 0;
  size_t input_count = 0;

  if (failed(nxrt_create_session_options(&options), "create options")) goto done;
  if (failed(nxrt_session_options_set_intra_op_threads(options, 1), "set threads")) goto done;
  if (failed(nxrt_session_options_append_execution_provider(options, "CPU", NULL, NULL, 0), "select CPU")) goto done;
  if (failed(nxrt_create_session(argv[1], options, &session), "create session")) goto done;
  if (failed(nxrt_session_get_metadata(session, NXRT_METADATA_GRAPH_NAME, &graph_name), "graph name")) goto done;
  printf("nxrt %s, graph '%s'\n", nxrt_version_string(), graph_name);
  if (failed(nxrt_session_get_input_count(session, &input_count), "input count")) goto done;
  for (size_t i = 0; i < input_count; ++i) {
    if (describe_input(session, i)) goto done;
  }

  /* The binding refers to the caller's arrays; the tensor handles could be released right after binding. */
  if (failed(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, x_data, sizeof(x_data), &x), "wrap x")) goto done;
  if (failed(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, y_data, sizeof(y_data), &y), "wrap y")) goto done;
  if (failed(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, z_data, sizeof(z_data), &z), "wrap z")) goto done;
  if (failed(nxrt_create_io_binding(session, &binding), "create binding")) goto done;
  if (failed(nxrt_io_binding_bind_input(binding, "x", x), "bind x")) goto done;
  if (failed(nxrt_io_binding_bind_input(binding, "y", y), "bind y")) goto done;
  if (failed(nxrt_io_binding_bind_output(binding, "z", z), "bind z")) goto done;

  /* Each step refills the caller's arrays and runs again: no tensor is created per run. */
  for (int step = 0; step < 3; ++step) {
    for (int i = 0; i < BATCH; ++i) {
      x_data[i] = (float)(i + step);
      y_data[i] = (float)(10 * i);
      z_data[i] = -1.0f;
    }
    if (failed(nxrt_session_run_with_binding(session, NULL, binding), "run")) goto done;
    if (failed(nxrt_io_binding_output_was_written_in_place(binding, 0, &in_place), "in place")) goto done;
    if (!in_place) {
      fprintf(stderr, "z was copied, expected the run to write it in place\n");
      goto done;
    }
    for (int i = 0; i < BATCH; ++i) {
      const float expected = 2.0f * x_data[i] + y_data[i];
      if (fabsf(z_data[i] - expected) > 1e-6f) {
        fprintf(stderr, "step %d: z[%d] = %g, expected %g\n", step, i, z_data[i], expected);
        goto done;
      }
    }
    printf("step %d: z = [%g, %g, ..., %g] (written in place)\n", step, z_data[0], z_data[1], z_data[BATCH - 1]);
  }
  rc = 0;

done:
  nxrt_release_io_binding(binding);
  nxrt_release_tensor(z);
  nxrt_release_tensor(y);
  nxrt_release_tensor(x);
  nxrt_release_session(session);
  nxrt_release_session_options(options);
  return rc;
}
