/* Per-call overhead of running the builtin simple_add model (4 floats) through the C API, one intra-op thread.
 * usage: nxrt_capi_overhead MODEL.onnx [CALLS]
 * Prints one line per path, median over 15 rounds of CALLS calls (default 20000):
 *   run            nxrt_session_run with wrapped inputs; the output tensor is allocated and released per call
 *   run_binding    nxrt_session_run_with_binding, output bound to a caller buffer and written in place */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nxrt/nxrt.h"

#define ROUNDS 15

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static int check(NxrtStatus* status) {
  if (status == NULL) return 0;
  fprintf(stderr, "%s\n", nxrt_status_string(status));
  nxrt_release_status(status);
  return 1;
}

typedef struct Bench {
  NxrtSession* session;
  NxrtTensor* inputs[2];
  NxrtTensor* z;
  NxrtIoBinding* binding;
} Bench;

static int call_run(Bench* bench) {
  static const char* input_names[2] = {"x", "y"};
  static const char* output_names[1] = {"z"};
  NxrtTensor* z = NULL;
  if (check(nxrt_session_run(bench->session, NULL, input_names, (const NxrtTensor* const*)bench->inputs, 2,
                             output_names, 1, &z)))
    return 1;
  nxrt_release_tensor(z);
  return 0;
}

static int call_run_binding(Bench* bench) {
  return check(nxrt_session_run_with_binding(bench->session, NULL, bench->binding));
}

/* Median microseconds per call of `fn`. */
static double median_us(Bench* bench, int (*fn)(Bench*), long calls) {
  double per_call[ROUNDS];
  for (int round = 0; round < ROUNDS; ++round) {
    const double start = now_ns();
    for (long i = 0; i < calls; ++i) {
      if (fn(bench)) exit(1);
    }
    per_call[round] = (now_ns() - start) / (double)calls / 1000.0;
  }
  qsort(per_call, ROUNDS, sizeof(double), compare_doubles);
  return per_call[ROUNDS / 2];
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.onnx [CALLS]\n", argv[0]);
    return 2;
  }
  const long calls = argc > 2 ? atol(argv[2]) : 20000;
  float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, z[4] = {0, 0, 0, 0};
  const int64_t dims[1] = {4};
  Bench bench = {NULL, {NULL, NULL}, NULL, NULL};
  NxrtSessionOptions* options = NULL;
  int rc = 1;
  if (check(nxrt_create_session_options(&options))) goto done;
  if (check(nxrt_session_options_set_intra_op_threads(options, 1))) goto done;
  if (check(nxrt_create_session(argv[1], options, &bench.session))) goto done;
  if (check(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, x, sizeof(x), &bench.inputs[0]))) goto done;
  if (check(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, y, sizeof(y), &bench.inputs[1]))) goto done;
  if (check(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, z, sizeof(z), &bench.z))) goto done;
  if (check(nxrt_create_io_binding(bench.session, &bench.binding))) goto done;
  if (check(nxrt_io_binding_bind_input(bench.binding, "x", bench.inputs[0]))) goto done;
  if (check(nxrt_io_binding_bind_input(bench.binding, "y", bench.inputs[1]))) goto done;
  if (check(nxrt_io_binding_bind_output(bench.binding, "z", bench.z))) goto done;

  median_us(&bench, call_run, calls / 10 + 1);
  printf("run          %.3f us/call\n", median_us(&bench, call_run, calls));
  printf("run_binding  %.3f us/call\n", median_us(&bench, call_run_binding, calls));
  rc = z[3] == 48.0f ? 0 : 1;
  if (rc) fprintf(stderr, "wrong result z[3] = %g\n", z[3]);
done:
  nxrt_release_io_binding(bench.binding);
  nxrt_release_tensor(bench.z);
  nxrt_release_tensor(bench.inputs[1]);
  nxrt_release_tensor(bench.inputs[0]);
  nxrt_release_session(bench.session);
  nxrt_release_session_options(options);
  return rc;
}
