// Definitions behind the opaque handles of include/nxrt/nxrt.h, shared by the C API translation units.
#pragma once

#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "core/value.h"
#include "nxrt/nxrt.h"
#include "session/prepared_run.h"
#include "session/session.h"

struct NxrtStatus {
  NxrtStatusCode code;
  std::string message;
  std::string formatted;  // "[ONNXRuntimeError] : ..." built once at creation
  bool is_static = false;  // the preallocated out-of-memory status; never deleted
};

struct NxrtSessionOptions {
  nxrt::SessionOptions options;
};

struct NxrtRunOptions {
  std::atomic<bool> terminate{false};
  std::string tag;
  std::atomic<int64_t> timeout_ms{0};  // read when a run starts
};

struct NxrtSession {
  std::unique_ptr<nxrt::Session> session;
  // onnxruntime's spelling of each input's / output's type (nxrt_session_get_input_type), made at creation.
  std::vector<std::string> input_types;
  std::vector<std::string> output_types;
};

struct NxrtValue {
  nxrt::Value value;
};

struct NxrtTensor {
  nxrt::Tensor tensor;
};

struct NxrtMemoryInfo {
  nxrt::Device device;
};

struct NxrtThreadPool {
  std::shared_ptr<nxrt::ThreadPool> pool;
};

// Bound names keep binding order; a name bound again replaces its entry in place.
struct NxrtIoBinding {
  const NxrtSession* session = nullptr;
  std::vector<std::string> input_names;
  std::vector<nxrt::Tensor> inputs;
  std::vector<std::string> output_names;
  std::vector<nxrt::Tensor> bound_outputs;  // invalid Tensor: the runtime allocates the output
  std::vector<nxrt::Device> output_devices;  // per output name: where an unbound output is allocated
  // The run these bindings describe, prepared at the first run after a bind or clear that changed names or outputs
  // and repeated while they stay (rebinding an input keeps it): a repeated run allocates nothing in the engine.
  std::unique_ptr<nxrt::PreparedRun> prepared;
  std::vector<std::string> result_names;  // set with `prepared`
  std::vector<nxrt::Tensor> results;      // of the last run; empty after a failed run or a change of bindings
  std::vector<bool> written_in_place;
};

namespace nxrt::capi {

// Converts an engine Status; nullptr for OK.
NxrtStatus* to_c_status(const Status& status);
NxrtStatus* make_c_status(NxrtStatusCode code, const std::string& message);
// A status for `std::bad_alloc` that needs no allocation.
NxrtStatus* out_of_memory_status();

// INVALID_ARGUMENT "<function>: argument '<name>' is NULL".
NxrtStatus* null_argument(const char* function, const char* argument);

// Runs `body` (returning NxrtStatus*) and turns std::bad_alloc, the only exception that can reach the
// boundary, into a status.
template <class Body>
NxrtStatus* guard(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return out_of_memory_status();
  }
}

// The names of a C array of `count` strings.
std::vector<std::string> copy_names(const char* const* names, size_t count);

// The engine's options for a run with `run_options` (NULL: the defaults); the terminate flag is shared.
RunOptions engine_run_options(const NxrtRunOptions* run_options);

// INVALID_ARGUMENT, worded for `function`, for a NULL input name or input, a NULL output name, or NULL
// output_names (every graph output) with an output_count other than the session's output count.
template <class Input>
NxrtStatus* check_run_arguments(const char* function, const NxrtSession* session, const char* const* input_names,
                                const Input* const* inputs, size_t input_count, const char* const* output_names,
                                size_t output_count) {
  const std::string prefix = std::string(function) + ": ";
  for (size_t i = 0; i < input_count; ++i) {
    if (input_names[i] == nullptr) {
      return make_c_status(NXRT_INVALID_ARGUMENT, prefix + "input_names[" + std::to_string(i) + "] is NULL");
    }
    if (inputs[i] == nullptr) {
      return make_c_status(NXRT_INVALID_ARGUMENT, prefix + "inputs[" + std::to_string(i) + "] (for input '" +
                                                      input_names[i] + "') is NULL");
    }
  }
  const size_t graph_outputs = session->session->outputs().size();
  if (output_names == nullptr && output_count != graph_outputs) {
    return make_c_status(NXRT_INVALID_ARGUMENT, prefix + "output_names is NULL (all outputs) but output_count is " +
                                                    std::to_string(output_count) + " while the model has " +
                                                    std::to_string(graph_outputs) + " outputs");
  }
  for (size_t i = 0; output_names != nullptr && i < output_count; ++i) {
    if (output_names[i] == nullptr) {
      return make_c_status(NXRT_INVALID_ARGUMENT, prefix + "output_names[" + std::to_string(i) + "] is NULL");
    }
  }
  return nullptr;
}

// Moves each result into a new handle (Handle{result}) and stores them in outputs[0 .. results.size()): all of
// them, or none when an allocation fails (std::bad_alloc propagates to guard()).
template <class Handle, class Result>
void hand_out(std::vector<Result>& results, Handle** outputs) {
  std::vector<Handle*> created;
  created.reserve(results.size());
  try {
    for (Result& result : results) created.push_back(new Handle{std::move(result)});
  } catch (const std::bad_alloc&) {
    for (Handle* handle : created) delete handle;
    throw;
  }
  for (size_t i = 0; i < created.size(); ++i) outputs[i] = created[i];
}

}  // namespace nxrt::capi

#define NXRT_CHECK_ARG(arg)                                                     \
  do {                                                                         \
    if ((arg) == nullptr) return ::nxrt::capi::null_argument(__func__, #arg);  \
  } while (0)
