// C API: library info, status objects, session and run options, session creation and introspection.
// Tensors and nxrt_session_run live in c_api_tensor.cpp.
#include <algorithm>
#include <cstdint>
#include <string>

#include "capi/c_api_internal.h"
#include "core/data_type.h"

#ifndef NXRT_VERSION
#define NXRT_VERSION "0.0.0"
#endif

using nxrt::capi::guard;
using nxrt::capi::make_c_status;

namespace nxrt::capi {

NxrtStatus* make_c_status(NxrtStatusCode code, const std::string& message) {
  auto* status = new NxrtStatus{code, message, {}, false};
  status->formatted = Status(static_cast<StatusCode>(code), message).to_string();
  return status;
}

NxrtStatus* to_c_status(const Status& status) {
  if (status.is_ok()) return nullptr;
  return make_c_status(static_cast<NxrtStatusCode>(status.code()), status.message());
}

namespace {
// Built at load time so that reporting an allocation failure never allocates.
NxrtStatus out_of_memory{NXRT_RUNTIME_EXCEPTION, "out of memory",
                         "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : out of memory", true};
}  // namespace

NxrtStatus* out_of_memory_status() { return &out_of_memory; }

NxrtStatus* null_argument(const char* function, const char* argument) {
  return guard([&] {
    return make_c_status(NXRT_INVALID_ARGUMENT,
                         std::string(function) + ": argument '" + argument + "' is NULL");
  });
}

}  // namespace nxrt::capi

namespace {

bool valid_status_code(NxrtStatusCode code) { return code >= NXRT_OK && code <= NXRT_EP_FAIL; }

const nxrt::ValueDesc* value_at(const NxrtSession* session, bool output, size_t index) {
  const auto& values = output ? session->session->outputs() : session->session->inputs();
  return index < values.size() ? &values[index] : nullptr;
}

NxrtStatus* index_error(const char* function, bool output, size_t index, const NxrtSession* session) {
  size_t count = output ? session->session->outputs().size() : session->session->inputs().size();
  return make_c_status(NXRT_INVALID_ARGUMENT, std::string(function) + ": " + (output ? "output" : "input") +
                                                  " index " + std::to_string(index) + " is out of range (" +
                                                  std::to_string(count) + " " + (output ? "outputs" : "inputs") +
                                                  ")");
}

NxrtStatus* get_name(const char* function, const NxrtSession* session, bool output, size_t index,
                     const char** out) {
  return guard([&]() -> NxrtStatus* {
    const nxrt::ValueDesc* value = value_at(session, output, index);
    if (!value) return index_error(function, output, index, session);
    *out = value->name.c_str();
    return nullptr;
  });
}

NxrtStatus* get_element_type(const char* function, const NxrtSession* session, bool output, size_t index,
                             NxrtElementType* out) {
  return guard([&]() -> NxrtStatus* {
    const nxrt::ValueDesc* value = value_at(session, output, index);
    if (!value) return index_error(function, output, index, session);
    *out = value->type.is_tensor() ? static_cast<NxrtElementType>(value->type.elem_type) : NXRT_TYPE_UNDEFINED;
    return nullptr;
  });
}

NxrtStatus* get_rank(const char* function, const NxrtSession* session, bool output, size_t index,
                     int64_t* out) {
  return guard([&]() -> NxrtStatus* {
    const nxrt::ValueDesc* value = value_at(session, output, index);
    if (!value) return index_error(function, output, index, session);
    *out = value->type.shape ? static_cast<int64_t>(value->type.shape->size()) : -1;
    return nullptr;
  });
}

NxrtStatus* get_dims(const char* function, const NxrtSession* session, bool output, size_t index,
                     int64_t* dims, size_t capacity) {
  return guard([&]() -> NxrtStatus* {
    const nxrt::ValueDesc* value = value_at(session, output, index);
    if (!value) return index_error(function, output, index, session);
    if (!value->type.shape) {
      return make_c_status(NXRT_INVALID_ARGUMENT,
                           std::string(function) + ": the rank of '" + value->name + "' is unknown");
    }
    const nxrt::graph::SymbolicShape& shape = *value->type.shape;
    if (capacity < shape.size()) {
      return make_c_status(NXRT_INVALID_ARGUMENT, std::string(function) + ": capacity " +
                                                      std::to_string(capacity) + " is less than the rank " +
                                                      std::to_string(shape.size()) + " of '" + value->name + "'");
    }
    if (!shape.empty() && dims == nullptr) return nxrt::capi::null_argument(function, "dims");
    for (size_t d = 0; d < shape.size(); ++d) dims[d] = shape[d].is_known() ? shape[d].value : -1;
    return nullptr;
  });
}

NxrtStatus* get_dim_name(const char* function, const NxrtSession* session, bool output, size_t index,
                         size_t dim_index, const char** out) {
  return guard([&]() -> NxrtStatus* {
    const nxrt::ValueDesc* value = value_at(session, output, index);
    if (!value) return index_error(function, output, index, session);
    size_t rank = value->type.shape ? value->type.shape->size() : 0;
    if (dim_index >= rank) {
      return make_c_status(NXRT_INVALID_ARGUMENT, std::string(function) + ": dim index " +
                                                      std::to_string(dim_index) + " is out of range for '" +
                                                      value->name + "' of rank " + std::to_string(rank));
    }
    const nxrt::graph::Dim& dim = (*value->type.shape)[dim_index];
    *out = dim.is_known() ? "" : dim.param.c_str();
    return nullptr;
  });
}

NxrtStatus* finish_session(nxrt::Expected<std::unique_ptr<nxrt::Session>> created, NxrtSession** out) {
  if (!created) return nxrt::capi::to_c_status(created.status());
  auto session = std::make_unique<NxrtSession>();
  session->session = std::move(created).value();
  for (const nxrt::ValueDesc& input : session->session->inputs()) session->input_types.push_back(input.type.to_string());
  for (const nxrt::ValueDesc& output : session->session->outputs()) {
    session->output_types.push_back(output.type.to_string());
  }
  *out = session.release();
  return nullptr;
}

NxrtStatus* get_type(const char* function, const NxrtSession* session, bool output, size_t index, const char** out) {
  return guard([&]() -> NxrtStatus* {
    const std::vector<std::string>& types = output ? session->output_types : session->input_types;
    if (index >= types.size()) return index_error(function, output, index, session);
    *out = types[index].c_str();
    return nullptr;
  });
}

}  // namespace

extern "C" {

const char* nxrt_version_string(void) { return NXRT_VERSION; }

const char* nxrt_element_type_name(NxrtElementType type) {
  std::optional<nxrt::DataType> data_type = nxrt::data_type_from_int(type);
  if (!data_type || *data_type == nxrt::DataType::kUndefined) return "undefined";
  // data_type_name returns views of string literals, so data() is NUL-terminated.
  return nxrt::data_type_name(*data_type).data();
}

NxrtStatusCode nxrt_status_code(const NxrtStatus* status) { return status ? status->code : NXRT_OK; }

const char* nxrt_status_message(const NxrtStatus* status) { return status ? status->message.c_str() : ""; }

const char* nxrt_status_string(const NxrtStatus* status) { return status ? status->formatted.c_str() : "OK"; }

const char* nxrt_status_code_name(NxrtStatusCode code) {
  if (!valid_status_code(code)) return "UNKNOWN";
  return nxrt::status_code_name(static_cast<nxrt::StatusCode>(code)).data();
}

void nxrt_release_status(NxrtStatus* status) {
  if (status && !status->is_static) delete status;
}

NxrtStatus* nxrt_create_session_options(NxrtSessionOptions** out) {
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    *out = new NxrtSessionOptions{};
    return nullptr;
  });
}

void nxrt_release_session_options(NxrtSessionOptions* options) { delete options; }

NxrtStatus* nxrt_session_options_set_intra_op_threads(NxrtSessionOptions* options, int num_threads) {
  NXRT_CHECK_ARG(options);
  if (num_threads < 0) {
    return guard([&] {
      return make_c_status(NXRT_INVALID_ARGUMENT,
                           "intra_op_num_threads must be >= 0, got " + std::to_string(num_threads));
    });
  }
  options->options.intra_op_num_threads = num_threads;
  return nullptr;
}

NxrtStatus* nxrt_session_options_set_graph_optimization_level(NxrtSessionOptions* options,
                                                              NxrtGraphOptimizationLevel level) {
  NXRT_CHECK_ARG(options);
  if (level != NXRT_DISABLE_ALL && level != NXRT_ENABLE_BASIC && level != NXRT_ENABLE_EXTENDED &&
      level != NXRT_ENABLE_ALL) {
    return guard([&] {
      return make_c_status(NXRT_INVALID_ARGUMENT, "graph optimization level must be 0, 1, 2 or 99, got " +
                                                      std::to_string(static_cast<int>(level)));
    });
  }
  options->options.graph_optimization_level = static_cast<int>(level);
  return nullptr;
}

NxrtStatus* nxrt_session_options_add_free_dimension_override(NxrtSessionOptions* options, const char* dim_name,
                                                             int64_t value) {
  NXRT_CHECK_ARG(options);
  NXRT_CHECK_ARG(dim_name);
  return guard([&]() -> NxrtStatus* {
    if (dim_name[0] == '\0') return make_c_status(NXRT_INVALID_ARGUMENT, "free dimension name is empty");
    if (value < 0) {
      return make_c_status(NXRT_INVALID_ARGUMENT, std::string("free dimension override for '") + dim_name +
                                                      "' must be >= 0, got " + std::to_string(value));
    }
    options->options.free_dimension_overrides[dim_name] = value;
    return nullptr;
  });
}

NxrtStatus* nxrt_session_options_set_run_timeout_ms(NxrtSessionOptions* options, int64_t timeout_ms) {
  NXRT_CHECK_ARG(options);
  if (timeout_ms < 0) {
    return guard([&] {
      return make_c_status(NXRT_INVALID_ARGUMENT,
                           "run_timeout_ms must be >= 0 (0: no deadline), got " + std::to_string(timeout_ms));
    });
  }
  options->options.run_timeout_ms = timeout_ms;
  return nullptr;
}

NxrtStatus* nxrt_session_options_set_max_tensor_bytes(NxrtSessionOptions* options, uint64_t max_bytes) {
  NXRT_CHECK_ARG(options);
  options->options.max_tensor_bytes = static_cast<size_t>(std::min<uint64_t>(max_bytes, SIZE_MAX));
  return nullptr;
}

NxrtStatus* nxrt_create_run_options(NxrtRunOptions** out) {
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    *out = new NxrtRunOptions{};
    return nullptr;
  });
}

void nxrt_release_run_options(NxrtRunOptions* options) { delete options; }

NxrtStatus* nxrt_run_options_set_terminate(NxrtRunOptions* options, int terminate) {
  NXRT_CHECK_ARG(options);
  options->terminate.store(terminate != 0);
  return nullptr;
}

NxrtStatus* nxrt_run_options_set_timeout_ms(NxrtRunOptions* options, int64_t timeout_ms) {
  NXRT_CHECK_ARG(options);
  if (timeout_ms < 0) {
    return guard([&] {
      return make_c_status(NXRT_INVALID_ARGUMENT,
                           "run timeout_ms must be >= 0 (0: the session's), got " + std::to_string(timeout_ms));
    });
  }
  options->timeout_ms.store(timeout_ms);
  return nullptr;
}

NxrtStatus* nxrt_run_options_set_tag(NxrtRunOptions* options, const char* tag) {
  NXRT_CHECK_ARG(options);
  NXRT_CHECK_ARG(tag);
  return guard([&]() -> NxrtStatus* {
    options->tag = tag;
    return nullptr;
  });
}

NxrtStatus* nxrt_create_session(const char* model_path, const NxrtSessionOptions* options, NxrtSession** out) {
  NXRT_CHECK_ARG(model_path);
  NXRT_CHECK_ARG(out);
  return guard([&] {
    nxrt::SessionOptions defaults;
    return finish_session(nxrt::Session::create_from_file(model_path, options ? options->options : defaults), out);
  });
}

NxrtStatus* nxrt_create_session_from_bytes(const void* model_data, size_t model_size,
                                           const NxrtSessionOptions* options, NxrtSession** out) {
  NXRT_CHECK_ARG(model_data);
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    if (model_size == 0) return make_c_status(NXRT_INVALID_PROTOBUF, "model bytes are empty");
    nxrt::SessionOptions defaults;
    std::string_view bytes(static_cast<const char*>(model_data), model_size);
    return finish_session(nxrt::Session::create_from_bytes(bytes, options ? options->options : defaults), out);
  });
}

void nxrt_release_session(NxrtSession* session) { delete session; }

NxrtStatus* nxrt_session_get_input_count(const NxrtSession* session, size_t* out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  *out = session->session->inputs().size();
  return nullptr;
}

NxrtStatus* nxrt_session_get_output_count(const NxrtSession* session, size_t* out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  *out = session->session->outputs().size();
  return nullptr;
}

NxrtStatus* nxrt_session_get_input_name(const NxrtSession* session, size_t index, const char** out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  return get_name(__func__, session, false, index, out);
}

NxrtStatus* nxrt_session_get_output_name(const NxrtSession* session, size_t index, const char** out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  return get_name(__func__, session, true, index, out);
}

NxrtStatus* nxrt_session_get_input_type(const NxrtSession* session, size_t index, const char** out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  return get_type(__func__, session, false, index, out);
}

NxrtStatus* nxrt_session_get_output_type(const NxrtSession* session, size_t index, const char** out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  return get_type(__func__, session, true, index, out);
}

NxrtStatus* nxrt_session_get_input_element_type(const NxrtSession* session, size_t index, NxrtElementType* out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  return get_element_type(__func__, session, false, index, out);
}

NxrtStatus* nxrt_session_get_output_element_type(const NxrtSession* session, size_t index,
                                                 NxrtElementType* out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  return get_element_type(__func__, session, true, index, out);
}

NxrtStatus* nxrt_session_get_input_rank(const NxrtSession* session, size_t index, int64_t* out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  return get_rank(__func__, session, false, index, out);
}

NxrtStatus* nxrt_session_get_output_rank(const NxrtSession* session, size_t index, int64_t* out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  return get_rank(__func__, session, true, index, out);
}

NxrtStatus* nxrt_session_get_input_dims(const NxrtSession* session, size_t index, int64_t* dims,
                                        size_t capacity) {
  NXRT_CHECK_ARG(session);
  return get_dims(__func__, session, false, index, dims, capacity);
}

NxrtStatus* nxrt_session_get_output_dims(const NxrtSession* session, size_t index, int64_t* dims,
                                         size_t capacity) {
  NXRT_CHECK_ARG(session);
  return get_dims(__func__, session, true, index, dims, capacity);
}

NxrtStatus* nxrt_session_get_input_dim_name(const NxrtSession* session, size_t index, size_t dim_index,
                                            const char** out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  return get_dim_name(__func__, session, false, index, dim_index, out);
}

NxrtStatus* nxrt_session_get_output_dim_name(const NxrtSession* session, size_t index, size_t dim_index,
                                             const char** out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  return get_dim_name(__func__, session, true, index, dim_index, out);
}

}  // extern "C"
