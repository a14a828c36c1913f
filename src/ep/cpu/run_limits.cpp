#include "ep/cpu/run_limits.h"

#include <string>

#include "core/shape.h"

namespace nxrt::cpu {

namespace {

thread_local const RunLimits* current_limits = nullptr;

}  // namespace

RunLimits::RunLimits(const std::atomic<bool>* terminate, int64_t timeout_ms, size_t max_tensor_bytes)
    : terminate_(terminate),
      has_deadline_(timeout_ms > 0),
      timeout_ms_(timeout_ms > 0 ? timeout_ms : 0),
      max_tensor_bytes_(max_tensor_bytes) {
  if (has_deadline_) deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
}

bool RunLimits::poll() const {
  Stop reason = Stop::kNone;
  if (terminate_ != nullptr && terminate_->load(std::memory_order_relaxed)) {
    reason = Stop::kTerminated;
  } else if (has_deadline_ && std::chrono::steady_clock::now() >= deadline_) {
    reason = Stop::kTimedOut;
  }
  if (reason == Stop::kNone) return false;
  Stop expected = Stop::kNone;
  stop_.compare_exchange_strong(expected, reason, std::memory_order_relaxed);
  return true;
}

Status RunLimits::stop_status(std::string_view where) const {
  switch (stop_.load(std::memory_order_relaxed)) {
    case Stop::kNone: return Status::ok();
    case Stop::kTerminated: return Status(StatusCode::kFail, std::string(kTerminateMessage));
    case Stop::kTimedOut: break;
  }
  std::string message = "Exiting because the run exceeded run_timeout_ms (" + std::to_string(timeout_ms_) + " ms)";
  if (!where.empty()) message += " " + std::string(where);
  return Status(StatusCode::kFail, message + ".");
}

std::optional<size_t> tensor_storage_bytes(DataType dtype, std::span<const int64_t> shape) {
  const std::optional<int64_t> count = checked_numel(shape);
  return count ? checked_storage_bytes(dtype, *count) : std::nullopt;
}

Status RunLimits::check_tensor_bytes(DataType dtype, std::span<const int64_t> shape, std::string_view what) const {
  const std::optional<size_t> bytes = tensor_storage_bytes(dtype, shape);
  if (!bytes) {
    return make_error(StatusCode::kInvalidArgument, what, ": a ", data_type_name(dtype), " tensor of shape ",
                      shape_to_string(shape), " has more elements or bytes than 64 bits can count");
  }
  if (max_tensor_bytes_ != 0 && *bytes > max_tensor_bytes_) {
    return make_error(StatusCode::kInvalidArgument, what, ": a ", data_type_name(dtype), " tensor of shape ",
                      shape_to_string(shape), " needs ", *bytes, " bytes, more than max_tensor_bytes (",
                      max_tensor_bytes_, ")");
  }
  return Status::ok();
}

Status RunLimits::check_bytes(size_t bytes, std::string_view what) const {
  if (max_tensor_bytes_ != 0 && bytes > max_tensor_bytes_) {
    return make_error(StatusCode::kInvalidArgument, what, " needs ", bytes, " bytes, more than max_tensor_bytes (",
                      max_tensor_bytes_, ")");
  }
  return Status::ok();
}

const RunLimits* current_run_limits() { return current_limits; }

RunLimitsScope::RunLimitsScope(const RunLimits& limits) : previous_(current_limits) { current_limits = &limits; }

RunLimitsScope::~RunLimitsScope() { current_limits = previous_; }

}  // namespace nxrt::cpu
