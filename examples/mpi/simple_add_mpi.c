/* Scaling past one machine with MPI: every rank loads the model, runs it on its shard of a batch through an
 * IO binding (in place, on its own buffers), and rank 0 gathers the shards and checks the whole batch.
 * usage: mpirun -np N example_mpi_simple_add_mpi MODEL.onnx   (the builtin "simple_add": z = 2 * x + y)
 * Every rank exits non-zero when rank 0 finds a wrong value or a rank fails. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "nxrt/nxrt.h"

#define ROWS_PER_RANK 4

static int failed(NxrtStatus* status, int rank, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "rank %d: %s failed: %s\n", rank, what, nxrt_status_string(status));
  nxrt_release_status(status);
  return 1;
}

static float x_of(int row) { return 0.25f * (float)row; }
static float y_of(int row) { return (float)(row % 7); }

/* Runs simple_add on rows [first_row, first_row + ROWS_PER_RANK) into z; returns 0 on success. */
static int run_shard(const char* model_path, int rank, int first_row, float* z) {
  int rc = 1;
  NxrtSessionOptions* options = NULL;
  NxrtSession* session = NULL;
  NxrtIoBinding* binding = NULL;
  NxrtTensor* tensors[3] = {NULL, NULL, NULL};
  float x[ROWS_PER_RANK], y[ROWS_PER_RANK];
  const int64_t dims[1] = {ROWS_PER_RANK};
  for (int i = 0; i < ROWS_PER_RANK; ++i) {
    x[i] = x_of(first_row + i);
    y[i] = y_of(first_row + i);
  }
  /* One intra-op thread per rank: ranks already use the cores. */
  if (failed(nxrt_create_session_options(&options), rank, "create options")) goto done;
  if (failed(nxrt_session_options_set_intra_op_threads(options, 1), rank, "set threads")) goto done;
  if (failed(nxrt_create_session(model_path, options, &session), rank, "create session")) goto done;
  if (failed(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, x, sizeof(x), &tensors[0]), rank, "wrap x"))
    goto done;
  if (failed(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, y, sizeof(y), &tensors[1]), rank, "wrap y"))
    goto done;
  if (failed(nxrt_create_tensor_with_data(NXRT_TYPE_FLOAT, dims, 1, z, ROWS_PER_RANK * sizeof(float), &tensors[2]),
             rank, "wrap z"))
    goto done;
  if (failed(nxrt_create_io_binding(session, &binding), rank, "create binding")) goto done;
  if (failed(nxrt_io_binding_bind_input(binding, "x", tensors[0]), rank, "bind x")) goto done;
  if (failed(nxrt_io_binding_bind_input(binding, "y", tensors[1]), rank, "bind y")) goto done;
  if (failed(nxrt_io_binding_bind_output(binding, "z", tensors[2]), rank, "bind z")) goto done;
  if (failed(nxrt_session_run_with_binding(session, NULL, binding), rank, "run")) goto done;
  rc = 0;
done:
  nxrt_release_io_binding(binding);
  for (int i = 0; i < 3; ++i) nxrt_release_tensor(tensors[i]);
  nxrt_release_session(session);
  nxrt_release_session_options(options);
  return rc;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np N %s MODEL.onnx\n", argv[0]);
    MPI_Finalize();
    return 2;
  }

  float shard[ROWS_PER_RANK];
  int local_failed = run_shard(argv[1], rank, rank * ROWS_PER_RANK, shard);
  int any_failed = 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  float* batch = NULL;
  if (rank == 0) batch = malloc(sizeof(float) * ROWS_PER_RANK * (size_t)size);
  MPI_Gather(shard, ROWS_PER_RANK, MPI_FLOAT, batch, ROWS_PER_RANK, MPI_FLOAT, 0, MPI_COMM_WORLD);

  int wrong = any_failed;
  if (rank == 0 && !any_failed) {
    for (int row = 0; row < ROWS_PER_RANK * size; ++row) {
      const float expected = 2.0f * x_of(row) + y_of(row);
      if (fabsf(batch[row] - expected) > 1e-6f) {
        fprintf(stderr, "row %d: z = %g, expected %g\n", row, batch[row], expected);
        wrong = 1;
      }
    }
    printf("%d ranks computed %d rows; gathered on rank 0: %s\n", size, ROWS_PER_RANK * size, wrong ? "WRONG" : "ok");
  }
  MPI_Bcast(&wrong, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(batch);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
