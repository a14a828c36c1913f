/* Versioned table of the nxrt C API, for programs that load libnxrt at run time or must keep working with
 * newer libraries: `const NxrtApi* api = nxrt_get_api(NXRT_API_VERSION);` then `api->create_session(...)`.
 * Each member has the contract of the plain function it is named after (nxrt_<member>).
 *
 * Compatibility: members are only ever appended, and NXRT_API_VERSION grows by one with each addition; a
 * program built against version N keeps working with every library whose version is >= N. */
#ifndef NXRT_NXRT_API_H_
#define NXRT_NXRT_API_H_

#include "nxrt/nxrt.h"

#define NXRT_API_VERSION 4u

#ifdef __cplusplus
extern "C" {
#endif

typedef struct NxrtApi {
  const char* (*version_string)(void);
  const char* (*element_type_name)(NxrtElementType type);
  NxrtStatusCode (*status_code)(const NxrtStatus* status);
  const char* (*status_message)(const NxrtStatus* status);
  const char* (*status_string)(const NxrtStatus* status);
  const char* (*status_code_name)(NxrtStatusCode code);
  void (*release_status)(NxrtStatus* status);
  NxrtStatus* (*create_session_options)(NxrtSessionOptions** out);
  void (*release_session_options)(NxrtSessionOptions* options);
  NxrtStatus* (*session_options_set_intra_op_threads)(NxrtSessionOptions* options, int num_threads);
  NxrtStatus* (*session_options_set_thread_pool)(NxrtSessionOptions* options, NxrtThreadPool* pool);
  NxrtStatus* (*session_options_append_execution_provider)(NxrtSessionOptions* options, const char* provider_name,
      const char* const* option_keys, const char* const* option_values, size_t option_count);
  NxrtStatus* (*get_available_providers)(const char* const** names, size_t* count);
  NxrtStatus* (*create_thread_pool)(int num_threads, NxrtThreadPool** out);
  void (*release_thread_pool)(NxrtThreadPool* pool);
  NxrtStatus* (*thread_pool_get_num_threads)(const NxrtThreadPool* pool, int* out);
  NxrtStatus* (*session_options_set_graph_optimization_level)(NxrtSessionOptions* options,
      NxrtGraphOptimizationLevel level);
  NxrtStatus* (*session_options_add_free_dimension_override)(NxrtSessionOptions* options, const char* dim_name,
      int64_t value);
  NxrtStatus* (*create_run_options)(NxrtRunOptions** out);
  void (*release_run_options)(NxrtRunOptions* options);
  NxrtStatus* (*run_options_set_terminate)(NxrtRunOptions* options, int terminate);
  NxrtStatus* (*run_options_set_tag)(NxrtRunOptions* options, const char* tag);
  NxrtStatus* (*run_options_get_tag)(const NxrtRunOptions* options, const char** out);
  NxrtStatus* (*create_session)(const char* model_path, const NxrtSessionOptions* options, NxrtSession** out);
  NxrtStatus* (*create_session_from_bytes)(const void* model_data, size_t model_size, const NxrtSessionOptions* options,
      NxrtSession** out);
  void (*release_session)(NxrtSession* session);
  NxrtStatus* (*session_get_input_count)(const NxrtSession* session, size_t* out);
  NxrtStatus* (*session_get_output_count)(const NxrtSession* session, size_t* out);
  NxrtStatus* (*session_get_input_name)(const NxrtSession* session, size_t index, const char** out);
  NxrtStatus* (*session_get_output_name)(const NxrtSession* session, size_t index, const char** out);
  NxrtStatus* (*session_get_input_element_type)(const NxrtSession* session, size_t index, NxrtElementType* out);
  NxrtStatus* (*session_get_output_element_type)(const NxrtSession* session, size_t index, NxrtElementType* out);
  NxrtStatus* (*session_get_input_rank)(const NxrtSession* session, size_t index, int64_t* out);
  NxrtStatus* (*session_get_output_rank)(const NxrtSession* session, size_t index, int64_t* out);
  NxrtStatus* (*session_get_input_dims)(const NxrtSession* session, size_t index, int64_t* dims, size_t capacity);
  NxrtStatus* (*session_get_output_dims)(const NxrtSession* session, size_t index, int64_t* dims, size_t capacity);
  NxrtStatus* (*session_get_input_dim_name)(const NxrtSession* session, size_t index, size_t dim_index,
      const char** out);
  NxrtStatus* (*session_get_output_dim_name)(const NxrtSession* session, size_t index, size_t dim_index,
      const char** out);
  NxrtStatus* (*session_get_num_threads)(const NxrtSession* session, int* out);
  NxrtStatus* (*session_get_metadata)(const NxrtSession* session, NxrtMetadataField field, const char** out);
  NxrtStatus* (*session_get_model_version)(const NxrtSession* session, int64_t* out);
  NxrtStatus* (*session_get_custom_metadata_count)(const NxrtSession* session, size_t* out);
  NxrtStatus* (*session_get_custom_metadata)(const NxrtSession* session, size_t index, const char** key,
      const char** value);
  NxrtStatus* (*session_lookup_custom_metadata)(const NxrtSession* session, const char* key, const char** value);
  NxrtStatus* (*session_run)(const NxrtSession* session, const NxrtRunOptions* run_options,
      const char* const* input_names, const NxrtTensor* const* inputs, size_t input_count,
      const char* const* output_names, size_t output_count, NxrtTensor** outputs);
  NxrtStatus* (*create_tensor_with_data)(NxrtElementType type, const int64_t* dims, size_t rank, void* data,
      size_t data_bytes, NxrtTensor** out);
  NxrtStatus* (*create_tensor_with_device_data)(const NxrtMemoryInfo* memory_info, NxrtElementType type,
      const int64_t* dims, size_t rank, void* data, size_t data_bytes, NxrtTensor** out);
  NxrtStatus* (*create_tensor)(NxrtElementType type, const int64_t* dims, size_t rank, NxrtTensor** out);
  void (*release_tensor)(NxrtTensor* tensor);
  NxrtStatus* (*tensor_get_data)(const NxrtTensor* tensor, void** out);
  NxrtStatus* (*tensor_get_element_type)(const NxrtTensor* tensor, NxrtElementType* out);
  NxrtStatus* (*tensor_get_rank)(const NxrtTensor* tensor, size_t* out);
  NxrtStatus* (*tensor_get_dims)(const NxrtTensor* tensor, int64_t* dims, size_t capacity);
  NxrtStatus* (*tensor_get_element_count)(const NxrtTensor* tensor, int64_t* out);
  NxrtStatus* (*tensor_get_byte_size)(const NxrtTensor* tensor, size_t* out);
  NxrtStatus* (*tensor_get_memory_info)(const NxrtTensor* tensor, NxrtMemoryInfo** out);
  NxrtStatus* (*create_memory_info)(NxrtDeviceType device_type, int device_id, NxrtMemoryInfo** out);
  NxrtStatus* (*create_cpu_memory_info)(NxrtMemoryInfo** out);
  void (*release_memory_info)(NxrtMemoryInfo* memory_info);
  NxrtStatus* (*memory_info_get_device_type)(const NxrtMemoryInfo* memory_info, NxrtDeviceType* out);
  NxrtStatus* (*memory_info_get_vendor_id)(const NxrtMemoryInfo* memory_info, uint32_t* out);
  NxrtStatus* (*memory_info_get_device_id)(const NxrtMemoryInfo* memory_info, int* out);
  NxrtStatus* (*create_io_binding)(const NxrtSession* session, NxrtIoBinding** out);
  void (*release_io_binding)(NxrtIoBinding* binding);
  NxrtStatus* (*io_binding_bind_input)(NxrtIoBinding* binding, const char* name, const NxrtTensor* tensor);
  NxrtStatus* (*io_binding_bind_output)(NxrtIoBinding* binding, const char* name, const NxrtTensor* tensor);
  NxrtStatus* (*io_binding_bind_output_to_device)(NxrtIoBinding* binding, const char* name,
      const NxrtMemoryInfo* memory_info);
  void (*io_binding_clear_inputs)(NxrtIoBinding* binding);
  void (*io_binding_clear_outputs)(NxrtIoBinding* binding);
  NxrtStatus* (*session_run_with_binding)(const NxrtSession* session, const NxrtRunOptions* run_options,
      NxrtIoBinding* binding);
  NxrtStatus* (*io_binding_get_output_count)(const NxrtIoBinding* binding, size_t* out);
  NxrtStatus* (*io_binding_get_output_name)(const NxrtIoBinding* binding, size_t index, const char** out);
  NxrtStatus* (*io_binding_get_output)(const NxrtIoBinding* binding, size_t index, NxrtTensor** out);
  NxrtStatus* (*io_binding_output_was_written_in_place)(const NxrtIoBinding* binding, size_t index, int* out);
  /* Version 2. */
  NxrtStatus* (*session_options_set_run_timeout_ms)(NxrtSessionOptions* options, int64_t timeout_ms);
  NxrtStatus* (*session_options_set_max_tensor_bytes)(NxrtSessionOptions* options, uint64_t max_bytes);
  NxrtStatus* (*run_options_set_timeout_ms)(NxrtRunOptions* options, int64_t timeout_ms);
  /* Version 3. */
  NxrtStatus* (*session_options_add_config_entry)(NxrtSessionOptions* options, const char* key, const char* value);
  /* Version 4: string tensors and values of every ONNX type. */
  NxrtStatus* (*create_string_tensor)(const int64_t* dims, size_t rank, const char* const* strings,
      const size_t* lengths, NxrtTensor** out);
  NxrtStatus* (*tensor_get_string)(const NxrtTensor* tensor, int64_t index, const char** data, size_t* length);
  NxrtStatus* (*create_tensor_value)(const NxrtTensor* tensor, NxrtValue** out);
  NxrtStatus* (*create_tensor_sequence_value)(const NxrtTensor* const* tensors, size_t count,
      NxrtElementType element_type, NxrtValue** out);
  NxrtStatus* (*create_map_value)(const NxrtTensor* keys, const NxrtTensor* values, NxrtValue** out);
  NxrtStatus* (*create_map_sequence_value)(const NxrtValue* const* maps, size_t count, NxrtElementType key_type,
      NxrtElementType value_type, NxrtValue** out);
  void (*release_value)(NxrtValue* value);
  NxrtStatus* (*value_get_kind)(const NxrtValue* value, NxrtValueKind* out);
  NxrtStatus* (*value_get_types)(const NxrtValue* value, NxrtElementType* key_type, NxrtElementType* element_type);
  NxrtStatus* (*value_get_tensor)(const NxrtValue* value, NxrtTensor** out);
  NxrtStatus* (*value_get_count)(const NxrtValue* value, size_t* out);
  NxrtStatus* (*value_get_element)(const NxrtValue* value, size_t index, NxrtValue** out);
  NxrtStatus* (*value_get_map)(const NxrtValue* value, NxrtTensor** keys, NxrtTensor** values);
  NxrtStatus* (*session_run_values)(const NxrtSession* session, const NxrtRunOptions* run_options,
      const char* const* input_names, const NxrtValue* const* inputs, size_t input_count,
      const char* const* output_names, size_t output_count, NxrtValue** outputs);
  NxrtStatus* (*session_get_input_type)(const NxrtSession* session, size_t index, const char** out);
  NxrtStatus* (*session_get_output_type)(const NxrtSession* session, size_t index, const char** out);
} NxrtApi;

/* The table for `version` (1 ... NXRT_API_VERSION of the loaded library), or NULL for a version this
 * library does not provide (0, or newer than the library). Static storage; thread-safe. */
NXRT_API const NxrtApi* nxrt_get_api(uint32_t version);

#ifdef __cplusplus
}
#endif

#endif /* NXRT_NXRT_API_H_ */
