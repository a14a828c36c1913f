// libFuzzer entry point: the model loader (wire reader + parser) and session creation on arbitrary bytes.
// Any input must yield a model or a Status; crashes, leaks and sanitizer reports are bugs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "onnx/model_proto.h"
#include "session/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto model = nxrt::onnx::parse_model(bytes);
  if (model.has_value() && model->graph) {
    for (const auto& tensor : model->graph->initializer) {
      if (tensor.has_raw_data && !tensor.raw_data.empty()) {
        volatile char first = tensor.raw_data.front();
        volatile char last = tensor.raw_data.back();
        (void)first;
        (void)last;
      }
    }
  }
  nxrt::SessionOptions options;
  options.intra_op_num_threads = 1;
  auto session = nxrt::Session::create_from_bytes(bytes, options);
  (void)session;
  return 0;
}
