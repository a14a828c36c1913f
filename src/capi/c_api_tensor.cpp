// C API: tensors and nxrt_session_run.
#include <cstring>
#include <string>
#include <vector>

#include "capi/c_api_internal.h"
#include "core/data_type.h"
#include "core/shape.h"

using nxrt::capi::guard;
using nxrt::capi::copy_names;
using nxrt::capi::make_c_status;

namespace {

// Validates element type and dims shared by both tensor constructors.
NxrtStatus* check_tensor_spec(const char* function, NxrtElementType type, const int64_t* dims, size_t rank,
                              nxrt::DataType* data_type, nxrt::Shape* shape) {
  std::optional<nxrt::DataType> parsed = nxrt::data_type_from_int(type);
  if (!parsed || *parsed == nxrt::DataType::kUndefined) {
    return make_c_status(NXRT_INVALID_ARGUMENT, std::string(function) + ": invalid element type " +
                                                    std::to_string(static_cast<int>(type)));
  }
  if (*parsed == nxrt::DataType::kString) {
    return make_c_status(NXRT_INVALID_ARGUMENT,
                         std::string(function) + ": string tensors are made with nxrt_create_string_tensor");
  }
  if (rank > 0 && dims == nullptr) return nxrt::capi::null_argument(function, "dims");
  shape->assign(dims, dims + rank);
  if (!nxrt::checked_numel(*shape)) {
    return make_c_status(NXRT_INVALID_ARGUMENT, std::string(function) + ": invalid shape " +
                                                    nxrt::shape_to_string(*shape) +
                                                    " (dims must be >= 0 and the element count must fit int64)");
  }
  *data_type = *parsed;
  return nullptr;
}

bool shares_buffer(const nxrt::Tensor& output, const std::vector<nxrt::Tensor>& inputs) {
  if (!output.buffer()) return false;
  for (const nxrt::Tensor& input : inputs) {
    if (input.buffer() == output.buffer()) return true;
  }
  return false;
}

NxrtStatus* run_session(const NxrtSession* session, const NxrtRunOptions* run_options,
                        const char* const* input_names, const NxrtTensor* const* inputs, size_t input_count,
                        const char* const* output_names, size_t output_count, NxrtTensor** outputs) {
  if (NxrtStatus* error = nxrt::capi::check_run_arguments("nxrt_session_run", session, input_names, inputs,
                                                          input_count, output_names, output_count)) {
    return error;
  }
  std::vector<nxrt::Tensor> feeds;
  feeds.reserve(input_count);
  for (size_t i = 0; i < input_count; ++i) feeds.push_back(inputs[i]->tensor);
  const std::vector<std::string> fetch_names =
      output_names != nullptr ? copy_names(output_names, output_count) : std::vector<std::string>{};
  nxrt::Expected<std::vector<nxrt::Tensor>> results = session->session->run(
      copy_names(input_names, input_count), feeds, fetch_names, nxrt::capi::engine_run_options(run_options));
  if (!results) return nxrt::capi::to_c_status(results.status());
  std::vector<nxrt::Tensor>& values = results.value();
  if (values.size() != output_count) {
    return make_c_status(NXRT_FAIL, "nxrt_session_run: the session returned " + std::to_string(values.size()) +
                                        " outputs, expected " + std::to_string(output_count));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].is_valid()) {
      return make_c_status(NXRT_INVALID_ARGUMENT, "nxrt_session_run: output " + std::to_string(i) +
                                                      " is not a tensor: run with nxrt_session_run_values");
    }
    // Views of an input (Identity, Reshape) would alias caller memory; outputs are promised independent.
    if (shares_buffer(values[i], feeds)) {
      nxrt::Expected<nxrt::Tensor> copy = nxrt::Tensor::copy_of(values[i]);
      if (!copy) return nxrt::capi::to_c_status(copy.status());
      values[i] = std::move(copy).value();
    }
  }
  nxrt::capi::hand_out(values, outputs);
  return nullptr;
}

}  // namespace

extern "C" {

NxrtStatus* nxrt_create_tensor_with_data(NxrtElementType type, const int64_t* dims, size_t rank, void* data,
                                         size_t data_bytes, NxrtTensor** out) {
  return nxrt_create_tensor_with_device_data(nullptr, type, dims, rank, data, data_bytes, out);
}

NxrtStatus* nxrt_create_tensor_with_device_data(const NxrtMemoryInfo* memory_info, NxrtElementType type,
                                                const int64_t* dims, size_t rank, void* data, size_t data_bytes,
                                                NxrtTensor** out) {
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    nxrt::DataType data_type;
    nxrt::Shape shape;
    if (NxrtStatus* error = check_tensor_spec(__func__, type, dims, rank, &data_type, &shape)) return error;
    const size_t needed = nxrt::data_type_storage_bytes(data_type, nxrt::shape_numel(shape));
    if (data_bytes < needed) {
      return make_c_status(NXRT_INVALID_ARGUMENT, "nxrt_create_tensor_with_data: a " +
                                                      std::string(nxrt::data_type_name(data_type)) +
                                                      " tensor of shape " + nxrt::shape_to_string(shape) +
                                                      " needs " + std::to_string(needed) + " bytes, got " +
                                                      std::to_string(data_bytes));
    }
    if (needed > 0 && data == nullptr) return nxrt::capi::null_argument("nxrt_create_tensor_with_data", "data");
    const nxrt::Device device = memory_info ? memory_info->device : nxrt::Device{};
    *out = new NxrtTensor{nxrt::Tensor::wrap(data_type, std::move(shape), data, device)};
    return nullptr;
  });
}

NxrtStatus* nxrt_create_tensor(NxrtElementType type, const int64_t* dims, size_t rank, NxrtTensor** out) {
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    nxrt::DataType data_type;
    nxrt::Shape shape;
    if (NxrtStatus* error = check_tensor_spec(__func__, type, dims, rank, &data_type, &shape)) return error;
    nxrt::Expected<nxrt::Tensor> tensor = nxrt::Tensor::allocate(data_type, std::move(shape));
    if (!tensor) return nxrt::capi::to_c_status(tensor.status());
    if (tensor->storage_bytes() > 0) std::memset(tensor->raw_data(), 0, tensor->storage_bytes());
    *out = new NxrtTensor{std::move(tensor).value()};
    return nullptr;
  });
}

void nxrt_release_tensor(NxrtTensor* tensor) { delete tensor; }

NxrtStatus* nxrt_tensor_get_data(const NxrtTensor* tensor, void** out) {
  NXRT_CHECK_ARG(tensor);
  NXRT_CHECK_ARG(out);
  if (tensor->tensor.dtype() == nxrt::DataType::kString) {
    return guard([] {
      return make_c_status(NXRT_INVALID_ARGUMENT,
                           "nxrt_tensor_get_data: a string tensor's elements are read with nxrt_tensor_get_string");
    });
  }
  *out = tensor->tensor.raw_data();
  return nullptr;
}

NxrtStatus* nxrt_tensor_get_element_type(const NxrtTensor* tensor, NxrtElementType* out) {
  NXRT_CHECK_ARG(tensor);
  NXRT_CHECK_ARG(out);
  *out = static_cast<NxrtElementType>(tensor->tensor.dtype());
  return nullptr;
}

NxrtStatus* nxrt_tensor_get_rank(const NxrtTensor* tensor, size_t* out) {
  NXRT_CHECK_ARG(tensor);
  NXRT_CHECK_ARG(out);
  *out = tensor->tensor.rank();
  return nullptr;
}

NxrtStatus* nxrt_tensor_get_dims(const NxrtTensor* tensor, int64_t* dims, size_t capacity) {
  NXRT_CHECK_ARG(tensor);
  const nxrt::Shape& shape = tensor->tensor.shape();
  if (capacity < shape.size()) {
    return guard([&] {
      return make_c_status(NXRT_INVALID_ARGUMENT, "nxrt_tensor_get_dims: capacity " + std::to_string(capacity) +
                                                      " is less than the rank " + std::to_string(shape.size()));
    });
  }
  if (!shape.empty()) NXRT_CHECK_ARG(dims);
  for (size_t d = 0; d < shape.size(); ++d) dims[d] = shape[d];
  return nullptr;
}

NxrtStatus* nxrt_tensor_get_element_count(const NxrtTensor* tensor, int64_t* out) {
  NXRT_CHECK_ARG(tensor);
  NXRT_CHECK_ARG(out);
  *out = tensor->tensor.numel();
  return nullptr;
}

NxrtStatus* nxrt_tensor_get_byte_size(const NxrtTensor* tensor, size_t* out) {
  NXRT_CHECK_ARG(tensor);
  NXRT_CHECK_ARG(out);
  *out = tensor->tensor.storage_bytes();
  return nullptr;
}

NxrtStatus* nxrt_tensor_get_memory_info(const NxrtTensor* tensor, NxrtMemoryInfo** out) {
  NXRT_CHECK_ARG(tensor);
  NXRT_CHECK_ARG(out);
  return guard([&]() -> NxrtStatus* {
    *out = new NxrtMemoryInfo{tensor->tensor.device()};
    return nullptr;
  });
}

NxrtStatus* nxrt_session_run(const NxrtSession* session, const NxrtRunOptions* run_options,
                             const char* const* input_names, const NxrtTensor* const* inputs, size_t input_count,
                             const char* const* output_names, size_t output_count, NxrtTensor** outputs) {
  NXRT_CHECK_ARG(session);
  if (output_count > 0) NXRT_CHECK_ARG(outputs);
  for (size_t i = 0; i < output_count; ++i) outputs[i] = nullptr;
  if (input_count > 0) {
    NXRT_CHECK_ARG(input_names);
    NXRT_CHECK_ARG(inputs);
  }
  return guard([&] {
    return run_session(session, run_options, input_names, inputs, input_count, output_names, output_count,
                       outputs);
  });
}

}  // extern "C"

namespace nxrt::capi {

std::vector<std::string> copy_names(const char* const* names, size_t count) {
  std::vector<std::string> result;
  result.reserve(count);
  for (size_t i = 0; i < count; ++i) result.emplace_back(names[i]);
  return result;
}

RunOptions engine_run_options(const NxrtRunOptions* run_options) {
  RunOptions options;
  if (run_options != nullptr) {
    options.terminate = &run_options->terminate;
    options.tag = run_options->tag;
    options.run_timeout_ms = run_options->timeout_ms.load();
  }
  return options;
}

}  // namespace nxrt::capi
