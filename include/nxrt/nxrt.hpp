// Header-only C++17 wrapper over the nxrt C API (nxrt.h). RAII owners for every handle; a non-NULL status
// becomes an nxrt::cxx::Error exception (exceptions exist only in this wrapper, never inside the library).
// Lives in nxrt::cxx so it never clashes with the engine's own nxrt::Session / nxrt::Tensor.
#ifndef NXRT_NXRT_HPP_
#define NXRT_NXRT_HPP_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nxrt/nxrt.h"

namespace nxrt {
namespace cxx {

// Thrown for every failing C call; what() is the "[ONNXRuntimeError] : code : NAME : message" string.
class Error : public std::runtime_error {
 public:
  Error(NxrtStatusCode code, const std::string& what, std::string message)
      : std::runtime_error(what), code_(code), message_(std::move(message)) {}
  NxrtStatusCode code() const noexcept { return code_; }
  // The message without the "[ONNXRuntimeError]" prefix.
  const std::string& message() const noexcept { return message_; }

 private:
  NxrtStatusCode code_;
  std::string message_;
};

namespace detail {

// Takes ownership of `status`; throws when it is non-NULL.
inline void check(NxrtStatus* status) {
  if (status == nullptr) return;
  NxrtStatusCode code = nxrt_status_code(status);
  std::string what = nxrt_status_string(status);
  std::string message = nxrt_status_message(status);
  nxrt_release_status(status);
  throw Error(code, what, std::move(message));
}

template <class Handle, void (*Release)(Handle*)>
struct Deleter {
  void operator()(Handle* handle) const noexcept { Release(handle); }
};

template <class Handle, void (*Release)(Handle*)>
using Owner = std::unique_ptr<Handle, Deleter<Handle, Release>>;

}  // namespace detail

// Element type of a C++ scalar: ElementTypeOf<float>::value == NXRT_TYPE_FLOAT.
template <class T>
struct ElementTypeOf;
#define NXRT_CXX_ELEMENT_TYPE(cpp_type, enum_value) \
  template <>                                       \
  struct ElementTypeOf<cpp_type> {                  \
    static constexpr NxrtElementType value = enum_value; \
  };
NXRT_CXX_ELEMENT_TYPE(float, NXRT_TYPE_FLOAT)
NXRT_CXX_ELEMENT_TYPE(double, NXRT_TYPE_DOUBLE)
NXRT_CXX_ELEMENT_TYPE(int8_t, NXRT_TYPE_INT8)
NXRT_CXX_ELEMENT_TYPE(uint8_t, NXRT_TYPE_UINT8)
NXRT_CXX_ELEMENT_TYPE(int16_t, NXRT_TYPE_INT16)
NXRT_CXX_ELEMENT_TYPE(uint16_t, NXRT_TYPE_UINT16)
NXRT_CXX_ELEMENT_TYPE(int32_t, NXRT_TYPE_INT32)
NXRT_CXX_ELEMENT_TYPE(uint32_t, NXRT_TYPE_UINT32)
NXRT_CXX_ELEMENT_TYPE(int64_t, NXRT_TYPE_INT64)
NXRT_CXX_ELEMENT_TYPE(uint64_t, NXRT_TYPE_UINT64)
NXRT_CXX_ELEMENT_TYPE(bool, NXRT_TYPE_BOOL)
#undef NXRT_CXX_ELEMENT_TYPE

inline std::string version() { return nxrt_version_string(); }

inline std::vector<std::string> available_providers() {
  const char* const* names = nullptr;
  size_t count = 0;
  detail::check(nxrt_get_available_providers(&names, &count));
  return std::vector<std::string>(names, names + count);
}

// A thread pool that several sessions share (SessionOptions::set_thread_pool); idle workers sleep.
class ThreadPool {
 public:
  explicit ThreadPool(int num_threads) {
    NxrtThreadPool* raw = nullptr;
    detail::check(nxrt_create_thread_pool(num_threads, &raw));
    handle_.reset(raw);
  }
  int num_threads() const {
    int count = 0;
    detail::check(nxrt_thread_pool_get_num_threads(handle_.get(), &count));
    return count;
  }
  NxrtThreadPool* get() const noexcept { return handle_.get(); }

 private:
  detail::Owner<NxrtThreadPool, nxrt_release_thread_pool> handle_;
};

class MemoryInfo {
 public:
  explicit MemoryInfo(NxrtDeviceType device_type = NXRT_DEVICE_CPU, int device_id = 0) {
    NxrtMemoryInfo* raw = nullptr;
    detail::check(nxrt_create_memory_info(device_type, device_id, &raw));
    handle_.reset(raw);
  }
  // Takes ownership of a C handle.
  explicit MemoryInfo(NxrtMemoryInfo* handle) noexcept : handle_(handle) {}
  NxrtDeviceType device_type() const {
    NxrtDeviceType type = NXRT_DEVICE_CPU;
    detail::check(nxrt_memory_info_get_device_type(handle_.get(), &type));
    return type;
  }
  int device_id() const {
    int id = 0;
    detail::check(nxrt_memory_info_get_device_id(handle_.get(), &id));
    return id;
  }
  uint32_t vendor_id() const {
    uint32_t id = 0;
    detail::check(nxrt_memory_info_get_vendor_id(handle_.get(), &id));
    return id;
  }
  const NxrtMemoryInfo* get() const noexcept { return handle_.get(); }

 private:
  detail::Owner<NxrtMemoryInfo, nxrt_release_memory_info> handle_;
};

class RunOptions {
 public:
  RunOptions() {
    NxrtRunOptions* raw = nullptr;
    detail::check(nxrt_create_run_options(&raw));
    handle_.reset(raw);
  }
  // May be called from another thread while a run with these options is in progress.
  RunOptions& set_terminate(bool terminate) {
    detail::check(nxrt_run_options_set_terminate(handle_.get(), terminate ? 1 : 0));
    return *this;
  }
  RunOptions& set_tag(const std::string& tag) {
    detail::check(nxrt_run_options_set_tag(handle_.get(), tag.c_str()));
    return *this;
  }
  // > 0: this run's deadline in milliseconds instead of the session's; 0: the session's.
  RunOptions& set_timeout_ms(int64_t timeout_ms) {
    detail::check(nxrt_run_options_set_timeout_ms(handle_.get(), timeout_ms));
    return *this;
  }
  std::string tag() const {
    const char* tag = nullptr;
    detail::check(nxrt_run_options_get_tag(handle_.get(), &tag));
    return tag;
  }
  NxrtRunOptions* get() const noexcept { return handle_.get(); }

 private:
  detail::Owner<NxrtRunOptions, nxrt_release_run_options> handle_;
};

class SessionOptions {
 public:
  SessionOptions() {
    NxrtSessionOptions* raw = nullptr;
    detail::check(nxrt_create_session_options(&raw));
    handle_.reset(raw);
  }
  SessionOptions& set_intra_op_threads(int num_threads) {
    detail::check(nxrt_session_options_set_intra_op_threads(handle_.get(), num_threads));
    return *this;
  }
  SessionOptions& set_graph_optimization_level(NxrtGraphOptimizationLevel level) {
    detail::check(nxrt_session_options_set_graph_optimization_level(handle_.get(), level));
    return *this;
  }
  SessionOptions& add_free_dimension_override(const std::string& dim_name, int64_t value) {
    detail::check(nxrt_session_options_add_free_dimension_override(handle_.get(), dim_name.c_str(), value));
    return *this;
  }
  // Deadline of every run in milliseconds (0: none); see nxrt_session_options_set_run_timeout_ms.
  SessionOptions& set_run_timeout_ms(int64_t timeout_ms) {
    detail::check(nxrt_session_options_set_run_timeout_ms(handle_.get(), timeout_ms));
    return *this;
  }
  // Most bytes one tensor may take (0: no limit); see nxrt_session_options_set_max_tensor_bytes.
  SessionOptions& set_max_tensor_bytes(uint64_t max_bytes) {
    detail::check(nxrt_session_options_set_max_tensor_bytes(handle_.get(), max_bytes));
    return *this;
  }
  // Throws with code NXRT_EP_FAIL when the provider cannot run here (no silent CPU fallback).
  SessionOptions& append_execution_provider(const std::string& name) {
    detail::check(nxrt_session_options_append_execution_provider(handle_.get(), name.c_str(), nullptr, nullptr, 0));
    return *this;
  }
  // ONNX Runtime's session config entries; see nxrt_session_options_add_config_entry.
  SessionOptions& add_config_entry(const std::string& key, const std::string& value) {
    detail::check(nxrt_session_options_add_config_entry(handle_.get(), key.c_str(), value.c_str()));
    return *this;
  }
  // The options and the sessions created from them keep `pool` alive.
  SessionOptions& set_thread_pool(const ThreadPool& pool) {
    detail::check(nxrt_session_options_set_thread_pool(handle_.get(), pool.get()));
    return *this;
  }
  const NxrtSessionOptions* get() const noexcept { return handle_.get(); }

 private:
  detail::Owner<NxrtSessionOptions, nxrt_release_session_options> handle_;
};

// A tensor: either wrapping caller memory (zero-copy; the memory must outlive the Tensor) or owning storage.
class Tensor {
 public:
  Tensor() = default;
  // Takes ownership of a C handle.
  explicit Tensor(NxrtTensor* handle) noexcept : handle_(handle) {}

  static Tensor wrap(NxrtElementType type, void* data, size_t data_bytes, const std::vector<int64_t>& shape) {
    NxrtTensor* raw = nullptr;
    detail::check(nxrt_create_tensor_with_data(type, shape.data(), shape.size(), data, data_bytes, &raw));
    return Tensor(raw);
  }
  template <class T>
  static Tensor wrap(T* data, size_t count, const std::vector<int64_t>& shape) {
    return wrap(ElementTypeOf<std::remove_const_t<T>>::value, const_cast<std::remove_const_t<T>*>(data),
                count * sizeof(T), shape);
  }
  template <class T>
  static Tensor wrap(std::vector<T>& values, const std::vector<int64_t>& shape) {
    return wrap(values.data(), values.size(), shape);
  }
  // Zero-filled storage owned by the tensor.
  static Tensor allocate(NxrtElementType type, const std::vector<int64_t>& shape) {
    NxrtTensor* raw = nullptr;
    detail::check(nxrt_create_tensor(type, shape.data(), shape.size(), &raw));
    return Tensor(raw);
  }
  template <class T>
  static Tensor allocate(const std::vector<int64_t>& shape) {
    return allocate(ElementTypeOf<T>::value, shape);
  }
  // A string tensor holding copies of `strings` (row-major, as many as the shape's elements).
  static Tensor strings(const std::vector<std::string>& strings, const std::vector<int64_t>& shape) {
    std::vector<const char*> data;
    std::vector<size_t> lengths;
    for (const std::string& s : strings) {
      data.push_back(s.data());
      lengths.push_back(s.size());
    }
    NxrtTensor* raw = nullptr;
    detail::check(nxrt_create_string_tensor(shape.data(), shape.size(), data.data(), lengths.data(), &raw));
    return Tensor(raw);
  }
  // Element `index` of a string tensor.
  std::string string_at(int64_t index) const {
    const char* data = nullptr;
    size_t length = 0;
    detail::check(nxrt_tensor_get_string(handle_.get(), index, &data, &length));
    return std::string(data, length);
  }

  explicit operator bool() const noexcept { return handle_ != nullptr; }
  NxrtTensor* get() const noexcept { return handle_.get(); }
  NxrtTensor* release() noexcept { return handle_.release(); }

  NxrtElementType element_type() const {
    NxrtElementType type = NXRT_TYPE_UNDEFINED;
    detail::check(nxrt_tensor_get_element_type(handle_.get(), &type));
    return type;
  }
  std::vector<int64_t> shape() const {
    size_t rank = 0;
    detail::check(nxrt_tensor_get_rank(handle_.get(), &rank));
    std::vector<int64_t> dims(rank);
    detail::check(nxrt_tensor_get_dims(handle_.get(), dims.data(), dims.size()));
    return dims;
  }
  int64_t element_count() const {
    int64_t count = 0;
    detail::check(nxrt_tensor_get_element_count(handle_.get(), &count));
    return count;
  }
  void* raw_data() const {
    void* data = nullptr;
    detail::check(nxrt_tensor_get_data(handle_.get(), &data));
    return data;
  }
  // Typed access; throws INVALID_ARGUMENT when T does not match the element type.
  template <class T>
  T* data() const {
    if (element_type() != ElementTypeOf<T>::value) {
      std::string message = std::string("tensor holds ") + nxrt_element_type_name(element_type()) +
                            ", not " + nxrt_element_type_name(ElementTypeOf<T>::value);
      throw Error(NXRT_INVALID_ARGUMENT, "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : " + message, message);
    }
    return static_cast<T*>(raw_data());
  }
  template <class T>
  std::vector<T> to_vector() const {
    const T* values = data<T>();
    return std::vector<T>(values, values + element_count());
  }

 private:
  detail::Owner<NxrtTensor, nxrt_release_tensor> handle_;
};

// Declared type of a model input or output. dims holds -1 for symbolic/unknown dims, whose names (if any)
// are in dim_names ("" for concrete dims). rank_known is false when the model leaves the rank open.
struct ValueInfo {
  std::string name;
  NxrtElementType element_type = NXRT_TYPE_UNDEFINED;
  bool rank_known = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;
};

class Session {
 public:
  explicit Session(const std::string& model_path, const SessionOptions* options = nullptr) {
    NxrtSession* raw = nullptr;
    detail::check(nxrt_create_session(model_path.c_str(), options ? options->get() : nullptr, &raw));
    handle_.reset(raw);
  }
  static Session from_bytes(const void* data, size_t size, const SessionOptions* options = nullptr) {
    NxrtSession* raw = nullptr;
    detail::check(nxrt_create_session_from_bytes(data, size, options ? options->get() : nullptr, &raw));
    return Session(raw);
  }
  static Session from_bytes(const std::string& bytes, const SessionOptions* options = nullptr) {
    return from_bytes(bytes.data(), bytes.size(), options);
  }

  NxrtSession* get() const noexcept { return handle_.get(); }

  size_t input_count() const {
    size_t count = 0;
    detail::check(nxrt_session_get_input_count(handle_.get(), &count));
    return count;
  }
  size_t output_count() const {
    size_t count = 0;
    detail::check(nxrt_session_get_output_count(handle_.get(), &count));
    return count;
  }
  std::vector<std::string> input_names() const { return names(false); }
  std::vector<std::string> output_names() const { return names(true); }
  ValueInfo input_info(size_t index) const { return info(false, index); }
  ValueInfo output_info(size_t index) const { return info(true, index); }

  // Runs with inputs matched by name; empty output_names means every output in declaration order.
  std::string metadata(NxrtMetadataField field) const {
    const char* value = nullptr;
    detail::check(nxrt_session_get_metadata(handle_.get(), field, &value));
    return value;
  }
  int num_threads() const {
    int count = 0;
    detail::check(nxrt_session_get_num_threads(handle_.get(), &count));
    return count;
  }

  std::vector<Tensor> run(const std::vector<std::string>& input_names,
                          const std::vector<std::reference_wrapper<const Tensor>>& inputs,
                          const std::vector<std::string>& output_names = {},
                          const RunOptions* run_options = nullptr) const {
    if (input_names.size() != inputs.size()) {
      std::string message = "run: " + std::to_string(input_names.size()) + " input names but " +
                            std::to_string(inputs.size()) + " input tensors";
      throw Error(NXRT_INVALID_ARGUMENT, "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : " + message, message);
    }
    std::vector<const char*> in_names;
    std::vector<const NxrtTensor*> in_tensors;
    for (size_t i = 0; i < inputs.size(); ++i) {
      in_names.push_back(input_names[i].c_str());
      in_tensors.push_back(inputs[i].get().get());
    }
    std::vector<const char*> out_names;
    for (const std::string& name : output_names) out_names.push_back(name.c_str());
    const size_t out_count = output_names.empty() ? output_count() : output_names.size();
    std::vector<NxrtTensor*> raw_outputs(out_count, nullptr);
    detail::check(nxrt_session_run(handle_.get(), run_options ? run_options->get() : nullptr, in_names.data(),
                                   in_tensors.data(), in_names.size(),
                                   output_names.empty() ? nullptr : out_names.data(), out_count,
                                   raw_outputs.data()));
    std::vector<Tensor> outputs;
    outputs.reserve(out_count);
    for (NxrtTensor* raw : raw_outputs) outputs.emplace_back(raw);
    return outputs;
  }

 private:
  explicit Session(NxrtSession* raw) noexcept : handle_(raw) {}

  std::vector<std::string> names(bool output) const {
    const size_t count = output ? output_count() : input_count();
    std::vector<std::string> result;
    for (size_t i = 0; i < count; ++i) {
      const char* name = nullptr;
      detail::check(output ? nxrt_session_get_output_name(handle_.get(), i, &name)
                           : nxrt_session_get_input_name(handle_.get(), i, &name));
      result.emplace_back(name);
    }
    return result;
  }

  ValueInfo info(bool output, size_t index) const {
    NxrtSession* s = handle_.get();
    ValueInfo result;
    const char* name = nullptr;
    detail::check(output ? nxrt_session_get_output_name(s, index, &name)
                         : nxrt_session_get_input_name(s, index, &name));
    result.name = name;
    detail::check(output ? nxrt_session_get_output_element_type(s, index, &result.element_type)
                         : nxrt_session_get_input_element_type(s, index, &result.element_type));
    int64_t rank = -1;
    detail::check(output ? nxrt_session_get_output_rank(s, index, &rank)
                         : nxrt_session_get_input_rank(s, index, &rank));
    result.rank_known = rank >= 0;
    if (rank <= 0) return result;
    result.dims.resize(static_cast<size_t>(rank));
    detail::check(output ? nxrt_session_get_output_dims(s, index, result.dims.data(), result.dims.size())
                         : nxrt_session_get_input_dims(s, index, result.dims.data(), result.dims.size()));
    for (size_t d = 0; d < result.dims.size(); ++d) {
      const char* dim_name = nullptr;
      detail::check(output ? nxrt_session_get_output_dim_name(s, index, d, &dim_name)
                           : nxrt_session_get_input_dim_name(s, index, d, &dim_name));
      result.dim_names.emplace_back(dim_name);
    }
    return result;
  }

  detail::Owner<NxrtSession, nxrt_release_session> handle_;
};

// Binds inputs and outputs of one session to tensors once; run() then writes bound outputs into the caller's
// memory. The binding must not outlive its session; the bound tensors' memory must outlive the runs.
class IoBinding {
 public:
  explicit IoBinding(const Session& session) : session_(session.get()) {
    NxrtIoBinding* raw = nullptr;
    detail::check(nxrt_create_io_binding(session_, &raw));
    handle_.reset(raw);
  }
  IoBinding& bind_input(const std::string& name, const Tensor& tensor) {
    detail::check(nxrt_io_binding_bind_input(handle_.get(), name.c_str(), tensor.get()));
    return *this;
  }
  IoBinding& bind_output(const std::string& name, const Tensor& tensor) {
    detail::check(nxrt_io_binding_bind_output(handle_.get(), name.c_str(), tensor.get()));
    return *this;
  }
  IoBinding& bind_output(const std::string& name, const MemoryInfo& device) {
    detail::check(nxrt_io_binding_bind_output_to_device(handle_.get(), name.c_str(), device.get()));
    return *this;
  }
  void clear_inputs() noexcept { nxrt_io_binding_clear_inputs(handle_.get()); }
  void clear_outputs() noexcept { nxrt_io_binding_clear_outputs(handle_.get()); }
  void run(const RunOptions* run_options = nullptr) {
    detail::check(nxrt_session_run_with_binding(session_, run_options ? run_options->get() : nullptr, handle_.get()));
  }
  size_t output_count() const {
    size_t count = 0;
    detail::check(nxrt_io_binding_get_output_count(handle_.get(), &count));
    return count;
  }
  // Shares the output's storage (the caller's memory for outputs bound to tensors).
  Tensor output(size_t index) const {
    NxrtTensor* raw = nullptr;
    detail::check(nxrt_io_binding_get_output(handle_.get(), index, &raw));
    return Tensor(raw);
  }
  bool written_in_place(size_t index) const {
    int flag = 0;
    detail::check(nxrt_io_binding_output_was_written_in_place(handle_.get(), index, &flag));
    return flag != 0;
  }
  NxrtIoBinding* get() const noexcept { return handle_.get(); }

 private:
  const NxrtSession* session_;
  detail::Owner<NxrtIoBinding, nxrt_release_io_binding> handle_;
};

}  // namespace cxx
}  // namespace nxrt

#include "nxrt/nxrt_values.hpp"

#endif  // NXRT_NXRT_HPP_
