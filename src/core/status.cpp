#include "core/status.h"

namespace nxrt {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kFail: return "FAIL";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kNoSuchFile: return "NO_SUCHFILE";
    case StatusCode::kNoModel: return "NO_MODEL";
    case StatusCode::kEngineError: return "ENGINE_ERROR";
    case StatusCode::kRuntimeException: return "RUNTIME_EXCEPTION";
    case StatusCode::kInvalidProtobuf: return "INVALID_PROTOBUF";
    case StatusCode::kModelLoaded: return "MODEL_LOADED";
    case StatusCode::kNotImplemented: return "NOT_IMPLEMENTED";
    case StatusCode::kInvalidGraph: return "INVALID_GRAPH";
    case StatusCode::kEpFail: return "EP_FAIL";
  }
  return "UNKNOWN";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) state_ = std::make_shared<const State>(State{code, std::move(message)});
}

const std::string& Status::message() const {
  static const std::string empty;
  return state_ ? state_->message : empty;
}

std::string Status::to_string() const {
  if (is_ok()) return "OK";
  return "[ONNXRuntimeError] : " + std::to_string(static_cast<int>(code())) + " : " +
         std::string(status_code_name(code())) + " : " + message();
}

Status Status::with_context(std::string_view context) const {
  if (is_ok()) return *this;
  return Status(code(), std::string(context) + message());
}

}  // namespace nxrt
