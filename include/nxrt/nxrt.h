/* nxrt C API: a stable C99 ABI over the nxrt runtime.
 *
 * Conventions
 * - Every fallible function returns an NxrtStatus*: NULL means success; a non-NULL status is owned by the
 *   caller and must be released with nxrt_release_status. Functions that cannot fail return values directly.
 * - Objects are opaque handles created by nxrt_create_* and released by the matching nxrt_release_*;
 *   releasing NULL is a no-op.
 * - Output parameters are written only on success, except where a function documents otherwise.
 * - Strings returned through `const char**` are borrowed: they belong to the object they were read from and
 *   stay valid until that object is released. Never free them.
 * - A session may be run from several threads at once; every other handle must not be used concurrently
 *   with its own release.
 * - String tensors are not supported by the C API yet: creating one, or running a model whose requested
 *   output is a string tensor, fails with NXRT_NOT_IMPLEMENTED.
 */
#ifndef NXRT_NXRT_H_
#define NXRT_NXRT_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#if defined(NXRT_BUILDING_LIBRARY)
#define NXRT_API __declspec(dllexport)
#else
#define NXRT_API __declspec(dllimport)
#endif
#else
#define NXRT_API __attribute__((visibility("default")))
#endif

/* A returned status must be looked at (and released) or it leaks. */
#if defined(__GNUC__) || defined(__clang__)
#define NXRT_MUST_CHECK __attribute__((warn_unused_result))
#else
#define NXRT_MUST_CHECK
#endif

/* In C++ the enums get `int` as fixed underlying type, so any int a C caller passes is a valid value (and
 * the library can reject it) while the size matches C's int-sized enums. */
#ifdef __cplusplus
#define NXRT_ENUM_INT : int
#else
#define NXRT_ENUM_INT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Numeric values match ONNX Runtime's OrtErrorCode. */
typedef enum NxrtStatusCode NXRT_ENUM_INT {
  NXRT_OK = 0,
  NXRT_FAIL = 1,
  NXRT_INVALID_ARGUMENT = 2,
  NXRT_NO_SUCHFILE = 3,
  NXRT_NO_MODEL = 4,
  NXRT_ENGINE_ERROR = 5,
  NXRT_RUNTIME_EXCEPTION = 6,
  NXRT_INVALID_PROTOBUF = 7,
  NXRT_MODEL_LOADED = 8,
  NXRT_NOT_IMPLEMENTED = 9,
  NXRT_INVALID_GRAPH = 10,
  NXRT_EP_FAIL = 11
} NxrtStatusCode;

/* Numeric values match onnx.TensorProto.DataType. */
typedef enum NxrtElementType NXRT_ENUM_INT {
  NXRT_TYPE_UNDEFINED = 0,
  NXRT_TYPE_FLOAT = 1,
  NXRT_TYPE_UINT8 = 2,
  NXRT_TYPE_INT8 = 3,
  NXRT_TYPE_UINT16 = 4,
  NXRT_TYPE_INT16 = 5,
  NXRT_TYPE_INT32 = 6,
  NXRT_TYPE_INT64 = 7,
  NXRT_TYPE_STRING = 8,
  NXRT_TYPE_BOOL = 9,
  NXRT_TYPE_FLOAT16 = 10,
  NXRT_TYPE_DOUBLE = 11,
  NXRT_TYPE_UINT32 = 12,
  NXRT_TYPE_UINT64 = 13,
  NXRT_TYPE_COMPLEX64 = 14,
  NXRT_TYPE_COMPLEX128 = 15,
  NXRT_TYPE_BFLOAT16 = 16,
  NXRT_TYPE_FLOAT8E4M3FN = 17,
  NXRT_TYPE_FLOAT8E4M3FNUZ = 18,
  NXRT_TYPE_FLOAT8E5M2 = 19,
  NXRT_TYPE_FLOAT8E5M2FNUZ = 20,
  NXRT_TYPE_UINT4 = 21,
  NXRT_TYPE_INT4 = 22,
  NXRT_TYPE_FLOAT4E2M1 = 23,
  NXRT_TYPE_FLOAT8E8M0 = 24,
  NXRT_TYPE_UINT2 = 25,
  NXRT_TYPE_INT2 = 26
} NxrtElementType;

/* Values match ONNX Runtime's GraphOptimizationLevel. */
typedef enum NxrtGraphOptimizationLevel NXRT_ENUM_INT {
  NXRT_DISABLE_ALL = 0,
  NXRT_ENABLE_BASIC = 1,
  NXRT_ENABLE_EXTENDED = 2,
  NXRT_ENABLE_ALL = 99
} NxrtGraphOptimizationLevel;

typedef struct NxrtStatus NxrtStatus;
typedef struct NxrtSessionOptions NxrtSessionOptions;
typedef struct NxrtRunOptions NxrtRunOptions;
typedef struct NxrtSession NxrtSession;
typedef struct NxrtTensor NxrtTensor;

/* ---- library ---------------------------------------------------------------------------------------- */

/* "0.1.0". Static storage; never free. */
NXRT_API const char* nxrt_version_string(void);

/* ONNX spelling of an element type ("float", "int64", "bfloat16"); "undefined" for unknown values.
 * Static storage; never free. */
NXRT_API const char* nxrt_element_type_name(NxrtElementType type);

/* ---- status ------------------------------------------------------------------------------------------- */

/* NXRT_OK for NULL. */
NXRT_API NxrtStatusCode nxrt_status_code(const NxrtStatus* status);
/* The message without decoration; "" for NULL. Borrowed from `status`. */
NXRT_API const char* nxrt_status_message(const NxrtStatus* status);
/* "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : message", or "OK" for NULL. Borrowed from `status`. */
NXRT_API const char* nxrt_status_string(const NxrtStatus* status);
/* Upper-case code name as ONNX Runtime prints it ("NO_SUCHFILE"). Static storage. */
NXRT_API const char* nxrt_status_code_name(NxrtStatusCode code);
NXRT_API void nxrt_release_status(NxrtStatus* status);

/* ---- session options ------------------------------------------------------------------------------- */

/* Defaults: one thread per hardware core, every optimization enabled, no dimension overrides. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_session_options(NxrtSessionOptions** out);
NXRT_API void nxrt_release_session_options(NxrtSessionOptions* options);
/* 0: one per hardware core; 1: no worker threads; negative: INVALID_ARGUMENT. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_options_set_intra_op_threads(NxrtSessionOptions* options,
                                                                             int num_threads);
/* One of NxrtGraphOptimizationLevel; other values: INVALID_ARGUMENT. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_options_set_graph_optimization_level(
    NxrtSessionOptions* options, NxrtGraphOptimizationLevel level);
/* Fixes symbolic dimension `dim_name` (e.g. "batch") to `value` (>= 0) for sessions created later. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_options_add_free_dimension_override(
    NxrtSessionOptions* options, const char* dim_name, int64_t value);

/* ---- run options ------------------------------------------------------------------------------------------ */

NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_run_options(NxrtRunOptions** out);
NXRT_API void nxrt_release_run_options(NxrtRunOptions* options);
/* Non-zero asks runs using these options to stop at the next node boundary (they fail); may be called from
 * another thread while a run is in progress. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_run_options_set_terminate(NxrtRunOptions* options, int terminate);
/* Tag shown in logs; copied. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_run_options_set_tag(NxrtRunOptions* options, const char* tag);

/* ---- session ---------------------------------------------------------------------------------------------- */

/* Loads an ONNX model file. `options` may be NULL (defaults) and may be released right after the call.
 * Errors: NO_SUCHFILE (cannot open), INVALID_PROTOBUF (not a model), INVALID_GRAPH, NOT_IMPLEMENTED, ... */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_session(const char* model_path, const NxrtSessionOptions* options,
                                                         NxrtSession** out);
/* Same from serialized ModelProto bytes; the bytes are copied, the caller's buffer may be freed at once. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_session_from_bytes(const void* model_data, size_t model_size,
                                                                    const NxrtSessionOptions* options,
                                                                    NxrtSession** out);
NXRT_API void nxrt_release_session(NxrtSession* session);

NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_input_count(const NxrtSession* session, size_t* out);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_output_count(const NxrtSession* session, size_t* out);

/* Name of input/output `index` (< count, else INVALID_ARGUMENT). Borrowed from the session. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_input_name(const NxrtSession* session, size_t index,
                                                                 const char** out);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_output_name(const NxrtSession* session, size_t index,
                                                                  const char** out);

/* Element type of a tensor input/output; NXRT_TYPE_UNDEFINED for non-tensor values (sequences, maps). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_input_element_type(const NxrtSession* session,
                                                                         size_t index, NxrtElementType* out);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_output_element_type(const NxrtSession* session,
                                                                          size_t index, NxrtElementType* out);

/* Declared rank, or -1 when the model leaves the rank unknown. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_input_rank(const NxrtSession* session, size_t index,
                                                                 int64_t* out);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_output_rank(const NxrtSession* session, size_t index,
                                                                  int64_t* out);

/* Writes the declared dims into dims[0..rank): a size >= 0, or -1 for a symbolic or unknown dim.
 * `capacity` must be >= rank (INVALID_ARGUMENT otherwise); fails when the rank is unknown. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_input_dims(const NxrtSession* session, size_t index,
                                                                 int64_t* dims, size_t capacity);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_output_dims(const NxrtSession* session, size_t index,
                                                                  int64_t* dims, size_t capacity);

/* Symbolic name of dim `dim_index` ("batch"); "" for a concrete or unnamed dim. Borrowed from the session. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_input_dim_name(const NxrtSession* session, size_t index,
                                                                     size_t dim_index, const char** out);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_output_dim_name(const NxrtSession* session, size_t index,
                                                                      size_t dim_index, const char** out);

/* Runs the model.
 * - input_names[i] names the graph input fed by inputs[i], for i < input_count. Every graph input without
 *   an initializer must be fed; inputs are only read.
 * - output_names selects the outputs, in order; NULL selects every graph output in declaration order, and
 *   then output_count must equal the session's output count.
 * - outputs[0..output_count) receives new tensors owned by the caller (release each with
 *   nxrt_release_tensor). They never share memory with the inputs. On failure every outputs[i] is NULL.
 * - run_options may be NULL.
 * Errors: INVALID_ARGUMENT for a missing or unknown input, wrong element type, wrong rank or dim, unknown
 * output name, NULL arguments; RUNTIME_EXCEPTION / FAIL for failures inside kernels. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_run(const NxrtSession* session, const NxrtRunOptions* run_options,
                                                      const char* const* input_names,
                                                      const NxrtTensor* const* inputs, size_t input_count,
                                                      const char* const* output_names, size_t output_count,
                                                      NxrtTensor** outputs);

/* ---- tensors ---------------------------------------------------------------------------------------------- */

/* Wraps caller memory without copying. `data` must hold at least the packed size of the tensor
 * (`data_bytes` is checked against it) and must stay valid, unmoved, until the tensor is released; the
 * runtime reads and writes it in place. `dims` holds `rank` sizes >= 0 (may be NULL when rank is 0).
 * `data` may be NULL only when the tensor has no elements. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_tensor_with_data(NxrtElementType type, const int64_t* dims,
                                                                  size_t rank, void* data, size_t data_bytes,
                                                                  NxrtTensor** out);
/* Allocates zero-filled storage owned by the tensor. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_tensor(NxrtElementType type, const int64_t* dims, size_t rank,
                                                        NxrtTensor** out);
NXRT_API void nxrt_release_tensor(NxrtTensor* tensor);

/* First element; borrowed from the tensor (caller memory for wrapped tensors). May be NULL when empty. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_data(const NxrtTensor* tensor, void** out);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_element_type(const NxrtTensor* tensor,
                                                                  NxrtElementType* out);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_rank(const NxrtTensor* tensor, size_t* out);
/* Writes rank dims; `capacity` must be >= rank. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_dims(const NxrtTensor* tensor, int64_t* dims,
                                                          size_t capacity);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_element_count(const NxrtTensor* tensor, int64_t* out);
/* Packed storage size in bytes. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_byte_size(const NxrtTensor* tensor, size_t* out);

#ifdef __cplusplus
}
#endif

#endif /* NXRT_NXRT_H_ */
