// What bounds one session run: the caller's terminate flag, a deadline (run_timeout_ms) and the most bytes one
// tensor may take (max_tensor_bytes). The executor checks them between nodes and before allocating each output;
// kernels check should_stop() once per task of their long parallel loops, and control-flow kernels once per
// subgraph run (Loop/Scan iteration).
//
// Kernels reach the object of the run that calls them through current_run_limits(): Kernel::run receives only
// the thread pool, so the executor publishes the limits to the thread that runs the kernels (RunLimitsScope).
// A kernel reads the pointer on its calling thread and captures it in the tasks it hands to the pool.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/data_type.h"
#include "core/status.h"

namespace nxrt::cpu {

// The message of ONNX Runtime's RunOptions terminate flag (onnxruntime/core/framework/utils.cc wording).
inline constexpr std::string_view kTerminateMessage = "Exiting due to terminate flag being set to true.";

class RunLimits {
 public:
  // No limits: should_stop() is always false and every size is allowed (overflow is still an error).
  RunLimits() = default;
  // `terminate` may be null; it is read, never written, and must outlive the run. `timeout_ms` <= 0: no deadline
  // (the clock starts now). `max_tensor_bytes` 0: no limit.
  RunLimits(const std::atomic<bool>* terminate, int64_t timeout_ms, size_t max_tensor_bytes);
  RunLimits(const RunLimits&) = delete;
  RunLimits& operator=(const RunLimits&) = delete;

  // True once the run must stop: the terminate flag is set or the deadline has passed. The answer latches (later
  // calls and stopped() stay true). Thread-safe; costs one relaxed load, plus a clock read when a deadline is set.
  bool should_stop() const {
    if (stop_.load(std::memory_order_relaxed) != Stop::kNone) return true;
    if (terminate_ == nullptr && !has_deadline_) return false;
    return poll();
  }
  // True when an earlier should_stop() returned true; no clock read.
  bool stopped() const { return stop_.load(std::memory_order_relaxed) != Stop::kNone; }

  // The error a stopped run ends with (FAIL); OK while not stopped(). `where` says where the run stopped (e.g.
  // "before Add node 'add'"; empty: not known here, the caller adds it).
  Status stop_status(std::string_view where = {}) const;

  int64_t timeout_ms() const { return timeout_ms_; }
  // True when `bytes` fit in max_tensor_bytes (always, without a limit).
  bool allows_bytes(size_t bytes) const { return max_tensor_bytes_ == 0 || bytes <= max_tensor_bytes_; }
  size_t max_tensor_bytes() const { return max_tensor_bytes_; }

  // OK when a tensor of `dtype` and `shape` fits in max_tensor_bytes; INVALID_ARGUMENT naming `what` and the bytes
  // it needs when it does not, or when its element count or byte size overflows (checked even without a limit).
  Status check_tensor_bytes(DataType dtype, std::span<const int64_t> shape, std::string_view what) const;
  // As check_tensor_bytes for an already computed byte count (scratch buffers, accumulated outputs).
  Status check_bytes(size_t bytes, std::string_view what) const;

 private:
  enum class Stop : int { kNone, kTerminated, kTimedOut };
  bool poll() const;

  const std::atomic<bool>* terminate_ = nullptr;
  bool has_deadline_ = false;
  int64_t timeout_ms_ = 0;
  std::chrono::steady_clock::time_point deadline_{};
  size_t max_tensor_bytes_ = 0;
  mutable std::atomic<Stop> stop_{Stop::kNone};
};

// Bytes of a tensor of `dtype` and `shape`; nullopt when a dim is negative or the element count or the byte
// count overflows. String tensors count sizeof(std::string) per element.
std::optional<size_t> tensor_storage_bytes(DataType dtype, std::span<const int64_t> shape);

// The limits of the session run executing on this thread; null outside a run (kernel unit tests, workers of the
// pool). Valid for the duration of the kernel call that reads it.
const RunLimits* current_run_limits();

// True when `limits` is set and its run must stop: the per-task check of parallel loops. A kernel whose tasks
// return early on it may return OK; the executor turns the stopped run into its error before using any output.
inline bool run_should_stop(const RunLimits* limits) { return limits != nullptr && limits->should_stop(); }

// Publishes `limits` to current_run_limits() on this thread for the scope's lifetime (restores the previous
// value on exit, so nested scopes are allowed).
class RunLimitsScope {
 public:
  explicit RunLimitsScope(const RunLimits& limits);
  ~RunLimitsScope();
  RunLimitsScope(const RunLimitsScope&) = delete;
  RunLimitsScope& operator=(const RunLimitsScope&) = delete;

 private:
  const RunLimits* previous_;
};

}  // namespace nxrt::cpu
