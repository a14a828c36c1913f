/* nxrt C API: a stable C99 ABI over the nxrt runtime.
 *
 * Conventions
 * - Every fallible function returns an NxrtStatus*: NULL means success; a non-NULL status is owned by the
 *   caller and must be released with nxrt_release_status. Functions that cannot fail return values directly.
 * - Objects are opaque handles created by nxrt_create_* and released by the matching nxrt_release_*;
 *   releasing NULL is a no-op.
 * - Output parameters are written only on success, except where a function documents otherwise.
 * - Errors common to every function: a NULL required argument is INVALID_ARGUMENT (naming the function and
 *   the argument); running out of memory is RUNTIME_EXCEPTION "out of memory". No function throws or aborts.
 * - nxrt_api.h (included below) offers the same functions as a versioned table, nxrt_get_api(version).
 * - Strings returned through `const char**` are borrowed: they belong to the object they were read from and
 *   stay valid until that object is released. Never free them.
 * - A session may be run from several threads at once; every other handle must not be used concurrently
 *   with its own release.
 * - Thread safety: functions taking only const handles may run concurrently; a handle passed non-const must not
 *   be used by another thread during the call. Every function is safe to call before any other (no global init).
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

/* Where a tensor's memory lives. NXRT_DEVICE_TEST: the memory of the test execution provider
 * ("TestDeviceExecutionProvider"), ordinary host memory that sessions using that provider treat as a separate
 * device, so that device feeds, copies and IO binding can be tested on any machine. */
typedef enum NxrtDeviceType NXRT_ENUM_INT {
  NXRT_DEVICE_CPU = 0,
  NXRT_DEVICE_CUDA = 1,
  NXRT_DEVICE_TEST = 2
} NxrtDeviceType;

/* PCI vendor ids reported by nxrt_memory_info_get_vendor_id. */
#define NXRT_VENDOR_ID_NONE 0u
#define NXRT_VENDOR_ID_NVIDIA 0x10DEu

/* Model-level strings readable with nxrt_session_get_metadata. */
typedef enum NxrtMetadataField NXRT_ENUM_INT {
  NXRT_METADATA_PRODUCER_NAME = 0,
  NXRT_METADATA_PRODUCER_VERSION = 1,
  NXRT_METADATA_GRAPH_NAME = 2,
  NXRT_METADATA_DOMAIN = 3,
  NXRT_METADATA_DESCRIPTION = 4,
  NXRT_METADATA_GRAPH_DESCRIPTION = 5
} NxrtMetadataField;

typedef struct NxrtStatus NxrtStatus;
typedef struct NxrtMemoryInfo NxrtMemoryInfo;
typedef struct NxrtThreadPool NxrtThreadPool;
typedef struct NxrtIoBinding NxrtIoBinding;
typedef struct NxrtSessionOptions NxrtSessionOptions;
typedef struct NxrtRunOptions NxrtRunOptions;
typedef struct NxrtSession NxrtSession;
typedef struct NxrtTensor NxrtTensor;
typedef struct NxrtValue NxrtValue;

/* ---- library ---------------------------------------------------------------------------------------- */

/* "0.1.0". Static storage; never free. Thread-safe. */
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
/* Frees a status returned by any function; NULL is a no-op. The borrowed strings die with it. */
NXRT_API void nxrt_release_status(NxrtStatus* status);

/* ---- session options ------------------------------------------------------------------------------- */

/* Defaults: one thread per hardware core, every optimization enabled, no dimension overrides, CPU provider.
 * The caller owns *out (release with nxrt_release_session_options). Errors: INVALID_ARGUMENT for NULL `out`,
 * RUNTIME_EXCEPTION when out of memory. Options are read, never kept, by nxrt_create_session*, so they may be
 * released or changed as soon as that call returns. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_session_options(NxrtSessionOptions** out);
/* NULL is a no-op. */
NXRT_API void nxrt_release_session_options(NxrtSessionOptions* options);
/* 0: one per hardware core; 1: no worker threads; negative: INVALID_ARGUMENT. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_options_set_intra_op_threads(NxrtSessionOptions* options,
                                                                             int num_threads);
/* Sessions created with these options share `pool` (see nxrt_create_thread_pool) instead of starting their
 * own, and then ignore intra_op_threads. The options and each session keep the pool alive, so the caller
 * may release its handle at any time. NULL restores a per-session pool. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_options_set_thread_pool(NxrtSessionOptions* options,
                                                                        NxrtThreadPool* pool);
/* Requests an execution provider by name ("CPU" or "CPUExecutionProvider"; "CUDA" or "CUDAExecutionProvider";
 * for tests, "TestDevice" or "TestDeviceExecutionProvider"). Providers are tried in the order appended: each
 * node runs on the first that takes it. keys/values hold `option_count` provider options (none are defined
 * yet: any key is INVALID_ARGUMENT). A provider that this build or machine cannot run fails here with
 * NXRT_EP_FAIL, so a session never falls back to the CPU silently; an unknown name is INVALID_ARGUMENT. The CPU
 * runs the nodes no requested provider takes, unless the config entry "session.disable_cpu_ep_fallback" is
 * "1" (then such a node fails session creation, naming it). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_options_append_execution_provider(
    NxrtSessionOptions* options, const char* provider_name, const char* const* option_keys,
    const char* const* option_values, size_t option_count);

/* ---- execution providers and threads --------------------------------------------------------------- */

/* Names of the providers this build can run ("CPUExecutionProvider" first). Static storage; thread-safe. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_get_available_providers(const char* const** names, size_t* count);

/* A pool of `num_threads` threads (0: one per hardware core; negative: INVALID_ARGUMENT) that several
 * sessions can share. The calling thread of a run takes part, so N threads start N-1 workers. Workers sleep
 * on a condition variable when no run needs them: an idle pool never spins. Runs from several sessions may
 * use the pool at once; a run that finds it busy runs its parallel loops on the calling thread. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_thread_pool(int num_threads, NxrtThreadPool** out);
/* Drops the caller's reference; the workers stop when the last session using the pool is released. */
NXRT_API void nxrt_release_thread_pool(NxrtThreadPool* pool);
/* Threads a run on this pool may use, counting the calling thread. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_thread_pool_get_num_threads(const NxrtThreadPool* pool, int* out);
/* One of NxrtGraphOptimizationLevel; other values: INVALID_ARGUMENT. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_options_set_graph_optimization_level(
    NxrtSessionOptions* options, NxrtGraphOptimizationLevel level);
/* Fixes symbolic dimension `dim_name` (e.g. "batch") to `value` (>= 0) for sessions created later. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_options_add_free_dimension_override(
    NxrtSessionOptions* options, const char* dim_name, int64_t value);
/* Deadline of every run, in milliseconds from the start of the run (0, the default: none; negative:
 * INVALID_ARGUMENT). Runs check it between nodes, between Loop/Scan iterations and between the tasks of long
 * kernels (GEMM, convolution); a run past it fails with NXRT_FAIL, naming the limit and the node where it
 * stopped. nxrt_run_options_set_timeout_ms overrides it per run. ONNX Runtime has no such option: there a
 * caller's watchdog thread sets the terminate flag (nxrt_run_options_set_terminate works the same here). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_options_set_run_timeout_ms(NxrtSessionOptions* options,
                                                                           int64_t timeout_ms);
/* Most bytes one tensor may take (0, the default: no limit but what the allocator can give). Initializers and
 * tensor attributes larger than this fail session creation (INVALID_ARGUMENT naming the tensor); a node output
 * larger than this fails the run before it is allocated (INVALID_ARGUMENT naming the node, op type, output and
 * bytes). Element or byte counts that overflow 64 bits fail with or without a limit. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_options_set_max_tensor_bytes(NxrtSessionOptions* options,
                                                                             uint64_t max_bytes);
/* ONNX Runtime's session config entries (AddSessionConfigEntry). Understood: "session.disable_cpu_ep_fallback"
 * ("0" or "1"; another value is INVALID_ARGUMENT). Other keys are kept and have no effect, as in ONNX Runtime. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_options_add_config_entry(NxrtSessionOptions* options,
                                                                         const char* key, const char* value);

/* ---- run options ------------------------------------------------------------------------------------------ */

/* Per-run settings (terminate flag, tag, timeout), owned by the caller. One run options object may be shared by
 * concurrent runs; it must outlive every run using it. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_run_options(NxrtRunOptions** out);
/* NULL is a no-op; never while a run uses the options. */
NXRT_API void nxrt_release_run_options(NxrtRunOptions* options);
/* Non-zero asks runs using these options to stop at the next check (between nodes, between Loop/Scan
 * iterations, between the tasks of long kernels); they fail with NXRT_FAIL and ONNX Runtime's message "Exiting
 * due to terminate flag being set to true.". May be called from another thread while a run is in progress. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_run_options_set_terminate(NxrtRunOptions* options, int terminate);
/* > 0: deadline of runs using these options in milliseconds, instead of the session's run timeout (see
 * nxrt_session_options_set_run_timeout_ms); 0 (the default): the session's; negative: INVALID_ARGUMENT. Read
 * when a run starts. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_run_options_set_timeout_ms(NxrtRunOptions* options, int64_t timeout_ms);
/* Tag shown in logs; copied. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_run_options_set_tag(NxrtRunOptions* options, const char* tag);
/* The tag ("" by default). Borrowed from `options` until the next set_tag or release. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_run_options_get_tag(const NxrtRunOptions* options, const char** out);

/* ---- session ---------------------------------------------------------------------------------------------- */

/* Loads an ONNX model file. `options` may be NULL (defaults) and may be released right after the call.
 * Errors: NO_SUCHFILE (cannot open), INVALID_PROTOBUF (not a model), INVALID_GRAPH, NOT_IMPLEMENTED, ... */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_session(const char* model_path, const NxrtSessionOptions* options,
                                                         NxrtSession** out);
/* Same from serialized ModelProto bytes; the bytes are copied, the caller's buffer may be freed at once. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_session_from_bytes(const void* model_data, size_t model_size,
                                                                    const NxrtSessionOptions* options,
                                                                    NxrtSession** out);
/* NULL is a no-op. Must not race a run of the session, and every IO binding of the session must be released
 * (or no longer used) first. */
NXRT_API void nxrt_release_session(NxrtSession* session);

/* Graph inputs without an initializer / graph outputs, in declaration order. Thread-safe. */
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

/* Threads a run of this session may use (its own pool's size, or the shared pool's). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_num_threads(const NxrtSession* session, int* out);

/* ---- model metadata (all strings borrowed from the session) ------------------------------------------- */

/* One of NxrtMetadataField ("" when the model leaves it empty); other values: INVALID_ARGUMENT. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_metadata(const NxrtSession* session, NxrtMetadataField field,
                                                               const char** out);
/* ModelProto.model_version (0 when unset). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_model_version(const NxrtSession* session, int64_t* out);
/* ModelProto.metadata_props: count, then entry `index` (< count) in key order. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_custom_metadata_count(const NxrtSession* session,
                                                                          size_t* out);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_custom_metadata(const NxrtSession* session, size_t index,
                                                                    const char** key, const char** value);
/* Value stored under `key`, or NULL (and success) when there is none. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_lookup_custom_metadata(const NxrtSession* session,
                                                                       const char* key, const char** value);

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
/* As nxrt_create_tensor_with_data for memory described by `memory_info` (NULL: host memory). Device memory
 * is never read or written by this call; a session that cannot use that device rejects the tensor when it
 * is fed or bound (INVALID_ARGUMENT for inputs, EP_FAIL for outputs). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_tensor_with_device_data(const NxrtMemoryInfo* memory_info,
                                                                         NxrtElementType type, const int64_t* dims,
                                                                         size_t rank, void* data, size_t data_bytes,
                                                                         NxrtTensor** out);
/* Allocates zero-filled storage owned by the tensor. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_tensor(NxrtElementType type, const int64_t* dims, size_t rank,
                                                        NxrtTensor** out);
/* NULL is a no-op. Wrapped caller memory is not freed; runtime storage is freed when no binding or other
 * handle shares it. */
NXRT_API void nxrt_release_tensor(NxrtTensor* tensor);

/* First element; borrowed from the tensor (caller memory for wrapped tensors). May be NULL when empty. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_data(const NxrtTensor* tensor, void** out);
/* Element type, rank, dims and element count as given at creation (or computed by the run). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_element_type(const NxrtTensor* tensor,
                                                                  NxrtElementType* out);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_rank(const NxrtTensor* tensor, size_t* out);
/* Writes rank dims; `capacity` must be >= rank. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_dims(const NxrtTensor* tensor, int64_t* dims,
                                                          size_t capacity);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_element_count(const NxrtTensor* tensor, int64_t* out);
/* Packed storage size in bytes. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_byte_size(const NxrtTensor* tensor, size_t* out);
/* Where the tensor's memory lives: a new memory info owned by the caller. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_memory_info(const NxrtTensor* tensor, NxrtMemoryInfo** out);

/* ---- memory info ---------------------------------------------------------------------------------------- */

/* Describes memory on a device. CPU and TEST: `device_id` must be 0. CUDA: `device_id` >= 0; creating the
 * description works in every build (it only names memory), using it with a session needs a CUDA build.
 * Negative ids or unknown device types: INVALID_ARGUMENT. Release with nxrt_release_memory_info. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_memory_info(NxrtDeviceType device_type, int device_id,
                                                             NxrtMemoryInfo** out);
/* Host memory: same as nxrt_create_memory_info(NXRT_DEVICE_CPU, 0, out). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_cpu_memory_info(NxrtMemoryInfo** out);
/* NULL is a no-op. Tensors and bindings made from a memory info do not refer to it afterwards. */
NXRT_API void nxrt_release_memory_info(NxrtMemoryInfo* memory_info);
/* NXRT_DEVICE_CPU, NXRT_DEVICE_CUDA or NXRT_DEVICE_TEST. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_memory_info_get_device_type(const NxrtMemoryInfo* memory_info,
                                                                      NxrtDeviceType* out);
/* NXRT_VENDOR_ID_NONE for host memory, NXRT_VENDOR_ID_NVIDIA for CUDA. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_memory_info_get_vendor_id(const NxrtMemoryInfo* memory_info,
                                                                    uint32_t* out);
/* The device ordinal (0 for host memory). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_memory_info_get_device_id(const NxrtMemoryInfo* memory_info, int* out);

/* ---- IO binding ----------------------------------------------------------------------------------------- *
 * A binding names, once, the tensors a session reads and writes, so repeated runs pass no arrays and
 * allocate nothing for outputs bound to caller tensors. A binding refers to its session (it must not
 * outlive it) and to the storage of the bound tensors (the tensor handles themselves may be released right
 * after binding, their memory may not). One binding must not be used by two threads at once; use one
 * binding per thread to run a session concurrently. */

/* An empty binding for `session`, owned by the caller. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_io_binding(const NxrtSession* session, NxrtIoBinding** out);
/* NULL is a no-op. Tensor handles obtained with nxrt_io_binding_get_output stay valid. */
NXRT_API void nxrt_release_io_binding(NxrtIoBinding* binding);
/* Feeds input `name` from `tensor` (read only, never copied). Binding a name again replaces the tensor.
 * The name is checked when the binding runs. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_io_binding_bind_input(NxrtIoBinding* binding, const char* name,
                                                                const NxrtTensor* tensor);
/* Writes output `name` into `tensor`'s memory. When the tensor's element type and shape match what the
 * model computes, the producing kernel writes there directly (no copy; see
 * nxrt_io_binding_output_was_written_in_place); otherwise, e.g. for an output that is a view of an input,
 * the result is copied there after the run. A run whose result has another element type or shape fails with
 * INVALID_ARGUMENT. Unknown output names: INVALID_ARGUMENT. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_io_binding_bind_output(NxrtIoBinding* binding, const char* name,
                                                                 const NxrtTensor* tensor);
/* Lets the runtime allocate output `name` on the device `memory_info` describes (read it afterwards with
 * nxrt_io_binding_get_output). A device this build cannot allocate on: EP_FAIL; a device the session has no
 * provider for fails the run. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_io_binding_bind_output_to_device(NxrtIoBinding* binding,
                                                                           const char* name,
                                                                           const NxrtMemoryInfo* memory_info);
/* Forget every bound input / output (and the results of the last run). */
NXRT_API void nxrt_io_binding_clear_inputs(NxrtIoBinding* binding);
NXRT_API void nxrt_io_binding_clear_outputs(NxrtIoBinding* binding);

/* Runs `session` (the binding's session; another session: INVALID_ARGUMENT) on the bound inputs and
 * produces the bound outputs in binding order; with no output bound, every graph output is allocated by the
 * runtime. run_options may be NULL. Errors as for nxrt_session_run. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_run_with_binding(const NxrtSession* session,
                                                                   const NxrtRunOptions* run_options,
                                                                   NxrtIoBinding* binding);
/* Outputs of the last successful run, in binding order (0 before any run). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_io_binding_get_output_count(const NxrtIoBinding* binding, size_t* out);
/* Name of output `index`; borrowed from the binding until it is cleared or released. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_io_binding_get_output_name(const NxrtIoBinding* binding, size_t index,
                                                                     const char** out);
/* A new tensor handle (owned by the caller) sharing the storage of output `index`: the caller's memory for
 * outputs bound to tensors, runtime memory otherwise (kept alive by the handle). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_io_binding_get_output(const NxrtIoBinding* binding, size_t index,
                                                                NxrtTensor** out);
/* 1 when the last run wrote output `index` directly into its bound tensor, 0 when it copied it there or the
 * output was not bound to a tensor. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_io_binding_output_was_written_in_place(const NxrtIoBinding* binding,
                                                                                 size_t index, int* out);

/* ---- string tensors ----------------------------------------------------------------------------------- */

/* A string tensor owned by the runtime holding copies of strings[0 .. element count): strings[i] is lengths[i]
 * bytes (any bytes, NUL included), or NUL-terminated when `lengths` is NULL. Other tensor functions take it as
 * any tensor; nxrt_tensor_get_data refuses it (read elements with nxrt_tensor_get_string). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_string_tensor(const int64_t* dims, size_t rank,
                                                               const char* const* strings, const size_t* lengths,
                                                               NxrtTensor** out);
/* Element `index` (row-major, < element count) of a string tensor: its bytes, borrowed from the tensor, and
 * their count (*data is NUL-terminated after them). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_tensor_get_string(const NxrtTensor* tensor, int64_t index,
                                                            const char** data, size_t* length);

/* ---- values: tensors, sequences and maps ------------------------------------------------------------------ *
 * What a graph input or output of any ONNX type holds: a tensor, a sequence of tensors, a map(K, V) (K int64
 * or string; V float, double, int64 or string), a sequence of maps (as ZipMap returns), or an optional without
 * an element. A value shares the storage of the tensors it was made from or that a run produced; values are
 * read only. */

typedef enum NxrtValueKind NXRT_ENUM_INT {
  NXRT_VALUE_TENSOR = 1,
  NXRT_VALUE_TENSOR_SEQUENCE = 2,
  NXRT_VALUE_MAP = 3,
  NXRT_VALUE_MAP_SEQUENCE = 4,
  NXRT_VALUE_NONE = 5
} NxrtValueKind;

/* A tensor value sharing `tensor`'s storage (the tensor handle may be released afterwards). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_tensor_value(const NxrtTensor* tensor, NxrtValue** out);
/* A sequence of `count` tensors of element type `element_type` (also for count 0). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_tensor_sequence_value(const NxrtTensor* const* tensors,
                                                                       size_t count, NxrtElementType element_type,
                                                                       NxrtValue** out);
/* A map from parallel 1-D host tensors `keys` and `values` of the same length: sorted by key, a repeated key
 * keeping its last value (as onnxruntime's ordered maps). Other types or shapes: INVALID_ARGUMENT. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_map_value(const NxrtTensor* keys, const NxrtTensor* values,
                                                           NxrtValue** out);
/* A sequence of `count` map values, each of key type `key_type` and value type `value_type`. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_create_map_sequence_value(const NxrtValue* const* maps, size_t count,
                                                                    NxrtElementType key_type,
                                                                    NxrtElementType value_type, NxrtValue** out);
/* NULL is a no-op. */
NXRT_API void nxrt_release_value(NxrtValue* value);

NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_value_get_kind(const NxrtValue* value, NxrtValueKind* out);
/* The element type of a tensor, of a sequence's tensors, of a map's values; for a map (or a sequence of maps)
 * also its key type (key_type may be NULL; NXRT_TYPE_UNDEFINED for values without keys). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_value_get_types(const NxrtValue* value, NxrtElementType* key_type,
                                                          NxrtElementType* element_type);
/* A new tensor handle sharing a tensor value's storage. Other kinds: INVALID_ARGUMENT. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_value_get_tensor(const NxrtValue* value, NxrtTensor** out);
/* Elements of a sequence, entries of a map (0 for NXRT_VALUE_NONE; 1 for a tensor). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_value_get_count(const NxrtValue* value, size_t* out);
/* Element `index` (< count) of a sequence as a new value (a tensor or a map). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_value_get_element(const NxrtValue* value, size_t index,
                                                            NxrtValue** out);
/* A map's keys and values as new 1-D tensor handles (keys ascending). Other kinds: INVALID_ARGUMENT. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_value_get_map(const NxrtValue* value, NxrtTensor** keys,
                                                        NxrtTensor** values);

/* As nxrt_session_run for inputs and outputs of every kind: outputs[0..output_count) receives new values owned
 * by the caller (release each with nxrt_release_value). */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_run_values(const NxrtSession* session,
                                                             const NxrtRunOptions* run_options,
                                                             const char* const* input_names,
                                                             const NxrtValue* const* inputs, size_t input_count,
                                                             const char* const* output_names, size_t output_count,
                                                             NxrtValue** outputs);
/* The ONNX type of input / output `index` in onnxruntime's spelling ("tensor(float)", "seq(tensor(int64))",
 * "map(string,tensor(float))", "seq(map(int64,tensor(float)))"); borrowed from the session. */
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_input_type(const NxrtSession* session, size_t index,
                                                                 const char** out);
NXRT_API NXRT_MUST_CHECK NxrtStatus* nxrt_session_get_output_type(const NxrtSession* session, size_t index,
                                                                  const char** out);

#ifdef __cplusplus
}
#endif

#include "nxrt/nxrt_api.h"

#endif /* NXRT_NXRT_H_ */
