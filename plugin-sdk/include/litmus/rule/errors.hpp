/// \file
/// litmus/rule/errors.hpp — part of litmus/rule.hpp (include that): the exceptions of the C++
/// layer, one per smdebug exception, each carrying the ABI status the SDK's thunks return for it.
/// Rule code throws them (or lets host calls throw them); nothing ever crosses the C boundary.
/// Thread-safety: plain exception objects.
#ifndef LITMUS_RULE_ERRORS_HPP_
#define LITMUS_RULE_ERRORS_HPP_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "litmus/rule/types.hpp"
#include "litmus/rule_abi.h"

namespace litmus {

// ---- Exceptions: what smdebug raises, mapped to ABI statuses by the SDK thunks -----------------
// Throw them from rule code (or let the SDK throw them from host calls); the thunk that called the
// rule turns them into the status below and passes the text to host->set_error. Any other
// exception becomes LITMUS_INTERNAL with its what() text. Nothing ever crosses the C boundary.

/// The base of every SDK exception: a message and the ABI status (`LITMUS_*` of litmus/rule_abi.h)
/// the thunk that called the rule returns for it. Throw the derived classes to say what smdebug's
/// exceptions say; throw Error itself for any other failure of the rule.
class Error : public std::runtime_error {
 public:
  /// A generic rule failure: LITMUS_INTERNAL.
  explicit Error(const std::string& message) : Error(message, LITMUS_INTERNAL) {}

  /// The status the host receives.
  litmus_status_t status() const noexcept { return status_; }
  /// True when the text was already recorded by the host (the exception comes unchanged from a
  /// failed host call): the thunk then leaves the host's own, usually more precise, message alone.
  bool host_reported() const noexcept { return host_reported_; }

 protected:
  /// For the derived classes: `message` with `status`.
  Error(const std::string& message, litmus_status_t status)
      : std::runtime_error(message), status_(status) {}

 private:
  friend class Rule;  // marks host-originated errors
  litmus_status_t status_;
  bool host_reported_ = false;
};

/// The tensor was not saved at that step: the host skips the step
/// (LITMUS_TENSOR_UNAVAILABLE_FOR_STEP).
class TensorUnavailableForStep : public Error {
 public:
  /// smdebug's text: "Value for tensor T is not available for step S with mode M as it was not
  /// saved."
  TensorUnavailableForStep(std::string_view tensor, int64_t step, Mode mode = Mode::kGlobal)
      : Error("Value for tensor " + std::string(tensor) + " is not available for step " +
                  std::to_string(step) + " with mode " + std::string(ModeName(mode)) +
                  " as it was not saved.",
              LITMUS_TENSOR_UNAVAILABLE_FOR_STEP) {}
};

/// The tensor was never saved: the host skips the step (LITMUS_TENSOR_UNAVAILABLE).
class TensorUnavailable : public Error {
 public:
  /// smdebug's text: "Tensor T was not saved."
  explicit TensorUnavailable(std::string_view tensor)
      : Error("Tensor " + std::string(tensor) + " was not saved.", LITMUS_TENSOR_UNAVAILABLE) {}
};

/// The step was not saved: the host skips the step (LITMUS_STEP_UNAVAILABLE).
class StepUnavailable : public Error {
 public:
  /// smdebug's text: "Step S of mode M is not available as it was not saved".
  StepUnavailable(int64_t step, Mode mode)
      : Error("Step " + std::to_string(step) + " of mode " + std::string(ModeName(mode)) +
                  " is not available as it was not saved",
              LITMUS_STEP_UNAVAILABLE) {}
};

/// The data is not there yet, a future step was asked for (LITMUS_NOT_YET_AVAILABLE).
class StepNotYetAvailable : public Error {
 public:
  /// smdebug's text: "Step S of mode M not yet available".
  StepNotYetAvailable(int64_t step, Mode mode)
      : Error("Step " + std::to_string(step) + " of mode " + std::string(ModeName(mode)) +
                  " not yet available",
              LITMUS_NOT_YET_AVAILABLE) {}
};

/// Training ended; nothing more to evaluate. Ends the rule normally (LITMUS_NO_MORE_DATA).
class NoMoreData : public Error {
 public:
  /// With a text of the rule's own.
  explicit NoMoreData(const std::string& message) : Error(message, LITMUS_NO_MORE_DATA) {}
  /// smdebug's text: "Looking for step S of mode M and reached end of training. Max step
  /// available is L".
  NoMoreData(int64_t step, Mode mode, int64_t last_step)
      : NoMoreData("Looking for step " + std::to_string(step) + " of mode " +
                   std::string(ModeName(mode)) +
                   " and reached end of training. Max step available is " +
                   std::to_string(last_step)) {}
};

/// Bad parameters or configuration (LITMUS_INVALID_CONFIG; from the constructor: the job ends as
/// a client error). The parameter accessors of Rule throw it as "name: what is wrong".
class InvalidConfig : public Error {
 public:
  /// One line saying what is wrong, best starting with the parameter's name.
  explicit InvalidConfig(const std::string& message) : Error(message, LITMUS_INVALID_CONFIG) {}
};

/// A call was misused: bad trial index, unknown reduction, out-of-range element...
/// (LITMUS_INVALID_ARGUMENT).
class InvalidArgument : public Error {
 public:
  /// One line saying what was wrong with the call.
  explicit InvalidArgument(const std::string& message) : Error(message, LITMUS_INVALID_ARGUMENT) {}
};

/// That worker did not write the step (LITMUS_INVALID_WORKER).
class InvalidWorker : public Error {
 public:
  /// smdebug's text: "Invalid Worker: W".
  explicit InvalidWorker(std::string_view worker)
      : Error("Invalid Worker: " + std::string(worker), LITMUS_INVALID_WORKER) {}
};

}  // namespace litmus

#endif  // LITMUS_RULE_ERRORS_HPP_
