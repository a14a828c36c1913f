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

}  // namespace nxrt::capi

#define NXRT_CHECK_ARG(arg)                                                     \
  do {                                                                         \
    if ((arg) == nullptr) return ::nxrt::capi::null_argument(__func__, #arg);  \
  } while (0)
