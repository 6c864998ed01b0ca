// TrialError subcodes and StepState names (trial.h).
#include "litmus/engine/trial.h"

namespace litmus {

std::string_view StepStateName(StepState state) {
  switch (state) {
    case StepState::kAvailable: return "AVAILABLE";
    case StepState::kNotYetAvailable: return "NOT_YET_AVAILABLE";
    case StepState::kUnavailable: return "UNAVAILABLE";
    case StepState::kNoMoreData: return "NO_MORE_DATA";
  }
  return "UNKNOWN";
}

std::optional<TrialError> GetTrialError(const Status& status) {
  if (status.ok()) return std::nullopt;
  const int32_t sub = status.subcode();
  if (sub < static_cast<int32_t>(TrialError::kTensorUnavailable) ||
      sub > static_cast<int32_t>(TrialError::kNoMoreData)) {
    return std::nullopt;
  }
  return static_cast<TrialError>(sub);
}

Status TrialErrorStatus(TrialError error, std::string message) {
  StatusCode code = StatusCode::kNotFound;
  switch (error) {
    case TrialError::kTensorUnavailable:
    case TrialError::kTensorUnavailableForStep:
    case TrialError::kInvalidWorker:
      code = StatusCode::kNotFound;
      break;
    case TrialError::kStepNotYetAvailable:
      code = StatusCode::kOutOfRange;
      break;
    case TrialError::kStepUnavailable:
    case TrialError::kNoMoreData:
      code = StatusCode::kFailedPrecondition;
      break;
  }
  return Status(code, std::move(message), static_cast<int32_t>(error));
}

}  // namespace litmus
