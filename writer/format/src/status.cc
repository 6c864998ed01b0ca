// Status helpers: names, formatting and errno mapping.
#include "litmus/status.h"

#include <cerrno>
#include <cstring>

namespace litmus {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kOutOfRange: return "OutOfRange";
    case StatusCode::kDataLoss: return "DataLoss";
    case StatusCode::kUnavailable: return "Unavailable";
    case StatusCode::kFailedPrecondition: return "FailedPrecondition";
    case StatusCode::kInternal: return "Internal";
    case StatusCode::kUnimplemented: return "Unimplemented";
    case StatusCode::kAlreadyExists: return "AlreadyExists";
    case StatusCode::kResourceExhausted: return "ResourceExhausted";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string message(context);
  message += ": ";
  message += message_;
  return Status(code_, std::move(message), subcode_);
}

Status ErrnoToStatus(int err, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return NotFoundError(std::move(message));
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return ResourceExhaustedError(std::move(message));
    case EACCES:
    case EPERM:
    case EROFS:
      return FailedPreconditionError(std::move(message));
    case EEXIST:
      return AlreadyExistsError(std::move(message));
    default:
      return UnavailableError(std::move(message));
  }
}

}  // namespace litmus
