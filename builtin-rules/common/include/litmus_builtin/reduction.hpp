// Reading one reduction of a tensor at a step when it may be undefined for that tensor, shared by
// the rules that test a reduction of every selected tensor (VanishingGradient, TensorVariance).
// The host answers from the saved reduction if the training job stored one, else computes it
// from the value (docs/rules/semantics.md §1.4). Header-only on the public SDK; stateless.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "litmus/rule.hpp"

namespace litmus_builtin {

// The reduction, or nullopt when it is undefined for the tensor's values (strings, complex values
// for non-abs reductions, min/max of an empty tensor): the host's InvalidArgument, whose text goes
// to *why. Mean, std and variance of an empty tensor are NaN, not nullopt. Everything else
// propagates; in particular TensorUnavailableForStep (neither the value nor that reduction was
// saved at the step), which skips the step.
inline std::optional<double> ReductionIfDefined(const litmus::Tensor& tensor, int64_t step,
                                                litmus::Reduction reduction, bool abs,
                                                std::string* why) {
  try {
    return tensor.reduction_value(step, reduction, abs);
  } catch (const litmus::InvalidArgument& error) {
    if (why != nullptr) *why = error.what();
    return std::nullopt;
  }
}

}  // namespace litmus_builtin
