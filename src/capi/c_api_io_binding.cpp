// C API: IO binding and nxrt_session_run_with_binding (the engine side is PreparedRun, which has run_bound's
// contract and keeps its run state between runs).
#include <algorithm>
#include <string>
#include <vector>

#include "capi/c_api_internal.h"
#include "session/io_binding.h"

using nxrt::capi::guard;
using nxrt::capi::make_c_status;

namespace {

// Index of `name` in `names`, appending it (with an empty slot in `slots`) when absent.
template <class Slot>
size_t slot_for(std::vector<std::string>& names, std::vector<Slot>& slots, const char* name) {
  const auto found = std::find(names.begin(), names.end(), name);
  if (found != names.end()) return static_cast<size_t>(found - names.begin());
  names.emplace_back(name);
  slots.emplace_back();
  return names.size() - 1;
}

NxrtStatus* check_output_name(const char* function, const NxrtIoBinding* binding, const char* name) {
  const auto& outputs = binding->session->session->outputs();
  const bool known = std::any_of(outputs.begin(), outputs.end(), [&](const nxrt::ValueDesc& desc) {
    return desc.name == name;
  });
  if (known) return nullptr;
  return make_c_status(NXRT_INVALID_ARGUMENT, std::string(function) + ": the model has no output named '" + name + "'");
}

NxrtStatus* result_index_error(const char* function, const NxrtIoBinding* binding, size_t index) {
  return make_c_status(NXRT_INVALID_ARGUMENT, std::string(function) + ": output index " + std::to_string(index) +
                                                  " is out of range (" + std::to_string(binding->results.size()) +
                                                  " outputs from the last run)");
}

void forget_results(NxrtIoBinding* binding) {
  binding->results.clear();
  binding->written_in_place.clear();
}

// Bindings whose names or outputs changed: the next run prepares again.
void forget_prepared(NxrtIoBinding* binding) {
  binding->prepared.reset();
  forget_results(binding);
}

NxrtStatus* prepare(const NxrtSession* session, NxrtIoBinding* binding) {
  std::vector<nxrt::Tensor> unbound;
  const bool all_outputs = binding->output_names.empty();
  if (all_outputs) unbound.resize(session->session->outputs().size());
  std::vector<nxrt::Device> devices = binding->output_devices;
  devices.resize(binding->bound_outputs.size());
  auto prepared = nxrt::PreparedRun::create(*session->session, binding->input_names, binding->inputs,
                                            binding->output_names, all_outputs ? unbound : binding->bound_outputs,
                                            all_outputs ? std::span<const nxrt::Device>() : devices);
  if (!prepared) return nxrt::capi::to_c_status(prepared.status());
  binding->prepared = std::move(*prepared);
  binding->result_names.clear();
  if (all_outputs) {
    for (const nxrt::ValueDesc& desc : session->session->outputs()) binding->result_names.push_back(desc.name);
  } else {
    binding->result_names = binding->output_names;
  }
  return nullptr;
}

NxrtStatus* run_binding(const NxrtSession* session, const NxrtRunOptions* run_options, NxrtIoBinding* binding) {
  if (binding->session != session) {
    return make_c_status(NXRT_INVALID_ARGUMENT,
                         "nxrt_session_run_with_binding: the binding was created for another session");
  }
  forget_results(binding);
  nxrt::RunOptions options;
  if (run_options != nullptr) {
    options.terminate = &run_options->terminate;
    options.tag = run_options->tag;
    options.run_timeout_ms = run_options->timeout_ms.load();
  }
  if (!binding->prepared) {
    if (NxrtStatus* error = prepare(session, binding)) return error;
  }
  const nxrt::Status status = binding->prepared->run(options);
  if (!status.is_ok()) return nxrt::capi::to_c_status(status);
  const std::vector<nxrt::Tensor>& outputs = binding->prepared->outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].dtype() == nxrt::DataType::kString) {
      return make_c_status(NXRT_NOT_IMPLEMENTED, "nxrt_session_run_with_binding: output " + std::to_string(i) +
                                                     " is a string tensor, which the C API does not support");
    }
  }
  binding->results.assign(outputs.begin(), outputs.end());
  binding->written_in_place.resize(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) binding->written_in_place[i] = binding->prepared->written_in_place(i);
  return nullptr;
}

}  // namespace

extern "C" {

NxrtStatus* nxrt_create_io_binding(const NxrtSession* session, NxrtIoBinding** out) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    auto* binding = new NxrtIoBinding{};
    binding->session = session;
    *out = binding;
    return nullptr;
  });
}

void nxrt_release_io_binding(NxrtIoBinding* binding) { delete binding; }

NxrtStatus* nxrt_io_binding_bind_input(NxrtIoBinding* binding, const char* name, const NxrtTensor* tensor) {
  NXRT_CHECK_ARG(binding);
  NXRT_CHECK_ARG(name);
  NXRT_CHECK_ARG(tensor);
  return guard([&]() -> NxrtStatus* {
    const size_t count = binding->inputs.size();
    const size_t slot = slot_for(binding->input_names, binding->inputs, name);
    binding->inputs[slot] = tensor->tensor;
    forget_results(binding);
    // A new tensor for a bound name keeps the prepared run (it checks the feed now, as a run would).
    if (slot < count && binding->prepared) {
      const nxrt::Status status = binding->prepared->set_input(slot, tensor->tensor);
      if (!status.is_ok()) binding->prepared.reset();
      return nullptr;
    }
    binding->prepared.reset();
    return nullptr;
  });
}

NxrtStatus* nxrt_io_binding_bind_output(NxrtIoBinding* binding, const char* name, const NxrtTensor* tensor) {
  NXRT_CHECK_ARG(binding);
  NXRT_CHECK_ARG(name);
  NXRT_CHECK_ARG(tensor);
  return guard([&]() -> NxrtStatus* {
    if (NxrtStatus* error = check_output_name(__func__, binding, name)) return error;
    if (tensor->tensor.device().type == nxrt::DeviceType::kCuda) {
      return make_c_status(NXRT_EP_FAIL, std::string(__func__) + ": output '" + name + "' is bound to " +
                                             nxrt::device_name(tensor->tensor.device()) +
                                             " memory, which this build cannot write");
    }
    const size_t slot = slot_for(binding->output_names, binding->bound_outputs, name);
    binding->bound_outputs[slot] = tensor->tensor;
    binding->output_devices.resize(binding->bound_outputs.size());
    binding->output_devices[slot] = tensor->tensor.device();
    forget_prepared(binding);
    return nullptr;
  });
}

NxrtStatus* nxrt_io_binding_bind_output_to_device(NxrtIoBinding* binding, const char* name,
                                                  const NxrtMemoryInfo* memory_info) {
  NXRT_CHECK_ARG(binding);
  NXRT_CHECK_ARG(name);
  NXRT_CHECK_ARG(memory_info);
  return guard([&]() -> NxrtStatus* {
    if (NxrtStatus* error = check_output_name(__func__, binding, name)) return error;
    if (memory_info->device.type == nxrt::DeviceType::kCuda) {
      return make_c_status(NXRT_EP_FAIL, std::string(__func__) + ": cannot allocate output '" + name + "' on " +
                                             nxrt::device_name(memory_info->device) +
                                             ": this build of nxrt has no CUDA support");
    }
    const size_t slot = slot_for(binding->output_names, binding->bound_outputs, name);
    binding->bound_outputs[slot] = nxrt::Tensor();
    binding->output_devices.resize(binding->bound_outputs.size());
    binding->output_devices[slot] = memory_info->device;
    forget_prepared(binding);
    return nullptr;
  });
}

void nxrt_io_binding_clear_inputs(NxrtIoBinding* binding) {
  if (!binding) return;
  binding->input_names.clear();
  binding->inputs.clear();
  forget_prepared(binding);
}

void nxrt_io_binding_clear_outputs(NxrtIoBinding* binding) {
  if (!binding) return;
  binding->output_names.clear();
  binding->bound_outputs.clear();
  binding->output_devices.clear();
  forget_prepared(binding);
}

NxrtStatus* nxrt_session_run_with_binding(const NxrtSession* session, const NxrtRunOptions* run_options,
                                          NxrtIoBinding* binding) {
  NXRT_CHECK_ARG(session);
  NXRT_CHECK_ARG(binding);
  return guard([&] { return run_binding(session, run_options, binding); });
}

NxrtStatus* nxrt_io_binding_get_output_count(const NxrtIoBinding* binding, size_t* out) {
  NXRT_CHECK_ARG(binding);
  NXRT_CHECK_ARG(out);
  *out = binding->results.size();
  return nullptr;
}

NxrtStatus* nxrt_io_binding_get_output_name(const NxrtIoBinding* binding, size_t index, const char** out) {
  NXRT_CHECK_ARG(binding);
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    if (index >= binding->results.size()) return result_index_error(__func__, binding, index);
    *out = binding->result_names[index].c_str();
    return nullptr;
  });
}

NxrtStatus* nxrt_io_binding_get_output(const NxrtIoBinding* binding, size_t index, NxrtTensor** out) {
  NXRT_CHECK_ARG(binding);
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    if (index >= binding->results.size()) return result_index_error(__func__, binding, index);
    *out = new NxrtTensor{binding->results[index]};
    return nullptr;
  });
}

NxrtStatus* nxrt_io_binding_output_was_written_in_place(const NxrtIoBinding* binding, size_t index, int* out) {
  NXRT_CHECK_ARG(binding);
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    if (index >= binding->results.size()) return result_index_error(__func__, binding, index);
    *out = binding->written_in_place[index] ? 1 : 0;
    return nullptr;
  });
}

}  // extern "C"
