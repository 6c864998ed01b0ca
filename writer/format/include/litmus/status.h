// litmus::Status and litmus::StatusOr<T>: error values used across litmus instead of exceptions
// for expected outcomes (Abseil-like, reduced to what litmus needs). Value types; thread-compatible.
// Messages name the path, offset, step or tensor involved, so one line is enough for a user.
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace litmus {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,   // bad input from a caller or a user (names, parameters, shapes)
  kNotFound = 2,          // a file, tensor, step or worker that does not exist
  kOutOfRange = 3,        // data not there *yet*: clean end of file, partial record; poll again
  kDataLoss = 4,          // corruption: bad CRC, torn record in a final file, bad payload
  kUnavailable = 5,       // transient I/O failure; retrying may help
  kFailedPrecondition = 6,// operation not allowed in the current state (e.g. write after close)
  kInternal = 7,          // a litmus bug or an unexpected library failure
  kUnimplemented = 8,     // a valid request litmus does not support (e.g. an unsupported dtype)
  kAlreadyExists = 9,     // refusing to overwrite something (e.g. a folder that holds a trial)
  kResourceExhausted = 10,// disk full, memory budget exceeded
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  // `subcode` refines the code for one library's callers (e.g. litmus::TrialError); 0 = none.
  Status(StatusCode code, std::string message, int32_t subcode)
      : code_(code), subcode_(subcode), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  int32_t subcode() const { return subcode_; }
  const std::string& message() const { return message_; }
  // "DataLoss: events/…: bad length CRC at offset 12"; "OK" for success.
  std::string ToString() const;

  // Prepends context ("reading step 7: ") to the message; no-op for OK.
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.subcode_ == b.subcode_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  int32_t subcode_ = 0;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status OutOfRangeError(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status FailedPreconditionError(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status UnimplementedError(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status AlreadyExistsError(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status ResourceExhaustedError(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }

// Status from errno after a failed system call: ENOENT -> NotFound, ENOSPC/EDQUOT ->
// ResourceExhausted, EACCES/EROFS -> FailedPrecondition, otherwise Unavailable.
// The message is "<what>: <strerror>".
Status ErrnoToStatus(int err, std::string_view what);

// Either a T or a non-OK Status. Accessing value() of an error is a bug (asserts).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok() && "StatusOr constructed from OK status without a value");
    if (status_.ok()) status_ = InternalError("StatusOr constructed from OK status");
  }
  StatusOr(Status&& status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok() && "StatusOr constructed from OK status without a value");
    if (status_.ok()) status_ = InternalError("StatusOr constructed from OK status");
  }
  StatusOr(const T& value) : value_(value) {}        // NOLINT(google-explicit-constructor)
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  template <typename U>
    requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, T> &&
             !std::is_same_v<std::decay_t<U>, Status>)
  StatusOr(U&& value) : value_(std::forward<U>(value)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;  // OK iff value_ holds a value
  std::optional<T> value_;
};

}  // namespace litmus

#define LITMUS_STATUS_CONCAT_INNER_(a, b) a##b
#define LITMUS_STATUS_CONCAT_(a, b) LITMUS_STATUS_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define LITMUS_RETURN_IF_ERROR(expr)                  \
  do {                                                \
    ::litmus::Status litmus_status_ = (expr);         \
    if (!litmus_status_.ok()) return litmus_status_;  \
  } while (0)

// `LITMUS_ASSIGN_OR_RETURN(auto x, F());` declares x from a StatusOr or returns its error.
#define LITMUS_ASSIGN_OR_RETURN(lhs, expr) \
  LITMUS_ASSIGN_OR_RETURN_IMPL_(LITMUS_STATUS_CONCAT_(litmus_statusor_, __LINE__), lhs, expr)
#define LITMUS_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
