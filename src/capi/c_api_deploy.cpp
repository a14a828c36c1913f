// C API for deployment settings: memory info, execution providers, shared thread pools, model metadata and
// the run-options tag.
#include <string>

#include "capi/c_api_internal.h"
#include "ep/provider_factory.h"

using nxrt::capi::guard;
using nxrt::capi::make_c_status;

namespace {

// ep::available_providers() of this build (the test provider is created by name, never listed).
constexpr const char* kAvailableProviders[] = {"CPUExecutionProvider"};

const std::string* metadata_field(const nxrt::ModelMetadata& metadata, NxrtMetadataField field) {
  switch (field) {
    case NXRT_METADATA_PRODUCER_NAME: return &metadata.producer_name;
    case NXRT_METADATA_PRODUCER_VERSION: return &metadata.producer_version;
    case NXRT_METADATA_GRAPH_NAME: return &metadata.graph_name;
    case NXRT_METADATA_DOMAIN: return &metadata.domain;
    case NXRT_METADATA_DESCRIPTION: return &metadata.description;
    case NXRT_METADATA_GRAPH_DESCRIPTION: return &metadata.graph_description;
  }
  return nullptr;
}

}  // namespace

extern "C" {

NxrtStatus* nxrt_create_memory_info(NxrtDeviceType device_type, int device_id, NxrtMemoryInfo** out) {
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    if (device_type != NXRT_DEVICE_CPU && device_type != NXRT_DEVICE_CUDA && device_type != NXRT_DEVICE_TEST) {
      return make_c_status(NXRT_INVALID_ARGUMENT,
                           "nxrt_create_memory_info: unknown device type " + std::to_string(device_type));
    }
    const nxrt::Device device{static_cast<nxrt::DeviceType>(device_type), device_id};
    if (device_id < 0 || (device_type != NXRT_DEVICE_CUDA && device_id != 0)) {
      return make_c_status(NXRT_INVALID_ARGUMENT, "nxrt_create_memory_info: invalid device id " +
                                                      std::to_string(device_id) + " for " + nxrt::device_name(device));
    }
    *out = new NxrtMemoryInfo{device};
    return nullptr;
  });
}

NxrtStatus* nxrt_create_cpu_memory_info(NxrtMemoryInfo** out) {
  return nxrt_create_memory_info(NXRT_DEVICE_CPU, 0, out);
}

void nxrt_release_memory_info(NxrtMemoryInfo* memory_info) { delete memory_info; }

NxrtStatus* nxrt_memory_info_get_device_type(const NxrtMemoryInfo* memory_info, NxrtDeviceType* out) {
  NXRT_CHECK_ARG(memory_info);
  NXRT_CHECK_ARG(out);
  *out = static_cast<NxrtDeviceType>(memory_info->device.type);
  return nullptr;
}

NxrtStatus* nxrt_memory_info_get_vendor_id(const NxrtMemoryInfo* memory_info, uint32_t* out) {
  NXRT_CHECK_ARG(memory_info);
  NXRT_CHECK_ARG(out);
  *out = memory_info->device.type == nxrt::DeviceType::kCuda ? NXRT_VENDOR_ID_NVIDIA : NXRT_VENDOR_ID_NONE;
  return nullptr;
}

NxrtStatus* nxrt_memory_info_get_device_id(const NxrtMemoryInfo* memory_info, int* out) {
  NXRT_CHECK_ARG(memory_info);
  NXRT_CHECK_ARG(out);
  *out = memory_info->device.id;
  return nullptr;
}

NxrtStatus* nxrt_get_available_providers(const char* const** names, size_t* count) {
  NXRT_CHECK_ARG(names);
  NXRT_CHECK_ARG(count);
  *names = kAvailableProviders;
  *count = sizeof(kAvailableProviders) / sizeof(kAvailableProviders[0]);
  return nullptr;
}

NxrtStatus* nxrt_session_options_append_execution_provider(NxrtSessionOptions* options, const char* provider_name,
                                                           const char* const* option_keys,
                                                           const char* const* option_values, size_t option_count) {
  NXRT_CHECK_ARG(options);
  NXRT_CHECK_ARG(provider_name);
  if (option_count > 0) {
    NXRT_CHECK_ARG(option_keys);
    NXRT_CHECK_ARG(option_values);
  }
  return guard([&]() -> NxrtStatus* {
    auto provider = nxrt::ep::create_provider(provider_name);
    if (!provider) return nxrt::capi::to_c_status(provider.status());
    const std::string name((*provider)->name());
    if (option_count > 0) {
      const char* key = option_keys[0] ? option_keys[0] : "(null)";
      return make_c_status(NXRT_INVALID_ARGUMENT, name + " takes no options, got '" + key + "'");
    }
    options->options.execution_providers.push_back(name);
    return nullptr;
  });
}

NxrtStatus* nxrt_session_options_add_config_entry(NxrtSessionOptions* options, const char* key, const char* value) {
  NXRT_CHECK_ARG(options);
  NXRT_CHECK_ARG(key);
  NXRT_CHECK_ARG(value);
  return guard([&]() -> NxrtStatus* {
    const std::string entry = key;
    const std::string setting = value;
    if (entry == "session.disable_cpu_ep_fallback") {
      if (setting != "0" && setting != "1") {
        return make_c_status(NXRT_INVALID_ARGUMENT,
                             "session.disable_cpu_ep_fallback must be \"0\" or \"1\", got \"" + setting + "\"");
      }
      options->options.disable_cpu_fallback = setting == "1";
    }
    return nullptr;
  });
}

NxrtStatus* nxrt_create_thread_pool(int num_threads, NxrtThreadPool** out) {
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    if (num_threads < 0) {
      return make_c_status(NXRT_INVALID_ARGUMENT,
                           "nxrt_create_thread_pool: num_threads must be >= 0, got " + std::to_string(num_threads));
    }
    *out = new NxrtThreadPool{std::make_shared<nxrt::ThreadPool>(num_threads)};
    return nullptr;
  });
}

void nxrt_release_thread_pool(NxrtThreadPool* pool) { delete pool; }

NxrtStatus* nxrt_thread_pool_get_num_threads(const NxrtThreadPool* pool, int* out) {
  NXRT_CHECK_ARG(pool);
  NXRT_CHECK_ARG(out);
  *out = pool->pool->num_threads();
  return nullptr;
}

NxrtStatus* nxrt_session_options_set_thread_pool(NxrtSessionOptions* options, NxrtThreadPool* pool) {
  NXRT_CHECK_ARG(options);
  options->options.shared_thread_pool = pool ? pool->pool : nullptr;
  return nullptr;
}

NxrtStatus* nxrt_session_get_num_threads(const NxrtSession* session, int* out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  *out = session->session->num_threads();
  return nullptr;
}

NxrtStatus* nxrt_run_options_get_tag(const NxrtRunOptions* options, const char** out) {
  NXRT_CHECK_ARG(options);
  NXRT_CHECK_ARG(out);
  *out = options->tag.c_str();
  return nullptr;
}

NxrtStatus* nxrt_session_get_metadata(const NxrtSession* session, NxrtMetadataField field, const char** out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  const std::string* value = metadata_field(session->session->metadata(), field);
  if (!value) {
    return guard([&] {
      return make_c_status(NXRT_INVALID_ARGUMENT,
                           "nxrt_session_get_metadata: unknown metadata field " + std::to_string(field));
    });
  }
  *out = value->c_str();
  return nullptr;
}

NxrtStatus* nxrt_session_get_model_version(const NxrtSession* session, int64_t* out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  *out = session->session->metadata().version;
  return nullptr;
}

NxrtStatus* nxrt_session_get_custom_metadata_count(const NxrtSession* session, size_t* out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  *out = session->session->metadata().custom_metadata.size();
  return nullptr;
}

NxrtStatus* nxrt_session_get_custom_metadata(const NxrtSession* session, size_t index, const char** key,
                                             const char** value) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(key);
  NXRT_CHECK_ARG(value);
  const auto& entries = session->session->metadata().custom_metadata;
  if (index >= entries.size()) {
    return guard([&] {
      return make_c_status(NXRT_INVALID_ARGUMENT, "nxrt_session_get_custom_metadata: index " + std::to_string(index) +
                                                      " is out of range (" + std::to_string(entries.size()) +
                                                      " entries)");
    });
  }
  auto entry = std::next(entries.begin(), static_cast<std::ptrdiff_t>(index));
  *key = entry->first.c_str();
  *value = entry->second.c_str();
  return nullptr;
}

NxrtStatus* nxrt_session_lookup_custom_metadata(const NxrtSession* session, const char* key, const char** value) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(key);
  NXRT_CHECK_ARG(value);
  return guard([&]() -> NxrtStatus* {
    const auto& entries = session->session->metadata().custom_metadata;
    const auto found = entries.find(key);
    *value = found == entries.end() ? nullptr : found->second.c_str();
    return nullptr;
  });
}

}  // extern "C"
