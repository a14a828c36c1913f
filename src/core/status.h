// Status / Expected<T>: the only error channel inside the engine and across the C API.
// Codes mirror ONNX Runtime's numeric values so that callers can map them one to one.
#pragma once

#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace nxrt {

enum class StatusCode : int {
  kOk = 0,
  kFail = 1,
  kInvalidArgument = 2,
  kNoSuchFile = 3,
  kNoModel = 4,
  kEngineError = 5,
  kRuntimeException = 6,
  kInvalidProtobuf = 7,
  kModelLoaded = 8,
  kNotImplemented = 9,
  kInvalidGraph = 10,
  kEpFail = 11,
};

// Upper-case name as ONNX Runtime prints it ("INVALID_ARGUMENT").
std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message);

  static Status ok() { return Status(); }
  bool is_ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  const std::string& message() const;
  // "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : message"
  std::string to_string() const;

  // Prepends context ("while loading node 'x': ") keeping the code.
  Status with_context(std::string_view context) const;

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const State> state_;
};

// Builds a message from streamable parts: make_error(kInvalidArgument, "bad dim ", d).
template <class... Parts>
Status make_error(StatusCode code, Parts&&... parts);

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : has_value_(true) { new (&value_) T(std::move(value)); }
  Expected(Status status) : has_value_(false), status_(std::move(status)) {
    if (status_.is_ok()) status_ = Status(StatusCode::kFail, "Expected constructed from an OK status");
  }
  Expected(const Expected& other) : has_value_(other.has_value_), status_(other.status_) {
    if (has_value_) new (&value_) T(other.value_);
  }
  Expected(Expected&& other) noexcept : has_value_(other.has_value_), status_(std::move(other.status_)) {
    if (has_value_) new (&value_) T(std::move(other.value_));
  }
  Expected& operator=(Expected other) {
    destroy();
    has_value_ = other.has_value_;
    status_ = std::move(other.status_);
    if (has_value_) new (&value_) T(std::move(other.value_));
    return *this;
  }
  ~Expected() { destroy(); }

  bool has_value() const { return has_value_; }
  explicit operator bool() const { return has_value_; }
  const Status& status() const { return status_; }
  T& value() & { return value_; }
  const T& value() const& { return value_; }
  T&& value() && { return std::move(value_); }
  T& operator*() & { return value_; }
  const T& operator*() const& { return value_; }
  T* operator->() { return &value_; }
  const T* operator->() const { return &value_; }

 private:
  void destroy() {
    if (has_value_) value_.~T();
    has_value_ = false;
  }
  bool has_value_;
  Status status_;
  union {
    T value_;
  };
};

}  // namespace nxrt

#include "core/status_format.h"

#define NXRT_CONCAT_INNER(a, b) a##b
#define NXRT_CONCAT(a, b) NXRT_CONCAT_INNER(a, b)

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define TRY(expr)                                \
  do {                                           \
    ::nxrt::Status nxrt_try_status_ = (expr);    \
    if (!nxrt_try_status_.is_ok()) return nxrt_try_status_; \
  } while (0)

// `TRY_ASSIGN(auto x, make_thing());` declares x from an Expected or returns its Status.
#define TRY_ASSIGN(lhs, expr) TRY_ASSIGN_IMPL(NXRT_CONCAT(nxrt_expected_, __LINE__), lhs, expr)
#define TRY_ASSIGN_IMPL(tmp, lhs, expr)       \
  auto tmp = (expr);                          \
  if (!tmp.has_value()) return tmp.status();  \
  lhs = std::move(tmp).value()
