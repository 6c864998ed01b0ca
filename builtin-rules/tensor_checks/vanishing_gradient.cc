// VanishingGradient: mean |g| of every gradient saved at the step against the threshold
// (docs/rules/VanishingGradient.md).
#include "vanishing_gradient.h"

#include <optional>
#include <string>

#include "litmus_builtin/param_checks.hpp"
#include "litmus_builtin/reduction.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {

VanishingGradient::VanishingGradient(const litmus::RuleArgs& args)
    : Rule(args), threshold_(FiniteParam(*this, kThreshold)) {
  report_threshold(kSeries, threshold_, litmus::Fires::kBelow);
  report_recommendation(
      "Gradients this small stop the network from learning: check the initialization (e.g. He/Xavier), "
      "use ReLU-like activations, batch normalization or residual connections, or raise the learning rate.");
}

void VanishingGradient::set_required_tensors(int64_t step) {
  // Only gradients saved at this step: EVAL steps usually have none and are simply "not met".
  for (const std::string& name : base_trial().tensor_names({.collection = kCollection, .step = step})) {
    // A saved abs_mean is enough (docs/rules/semantics.md §1.4; ABI 1.2).
    req_tensors().add(name, {step}, {.reductions_only = true});
  }
}

bool VanishingGradient::invoke_at_step(int64_t step) {
  // Every gradient is checked (smdebug's analysis.md example returns after the first one: a bug
  // the spec tells us not to copy).
  int64_t violations = 0;
  std::string first;  // the first violating tensor, for the log line
  for (const litmus::Tensor& tensor : req_tensors().get()) {
    std::string why;
    const std::optional<double> abs_mean =
        ReductionIfDefined(tensor, step, litmus::Reduction::kMean, /*abs=*/true, &why);
    if (!abs_mean) {
      if (undefined_.insert(tensor.name()).second) {
        log_warning("tensor ", tensor.name(), ": mean absolute value undefined (", why, "); skipped");
      }
      continue;
    }
    report_series(kSeries, tensor.name(), step, *abs_mean);
    // NaN (an empty or exploded gradient) compares false: never "vanished".
    if (*abs_mean < threshold_) {
      if (violations++ == 0) first = tensor.name() + " (" + JsonNumber(*abs_mean) + ")";
      report_detail(tensor.name(), *abs_mean);
    }
  }
  if (violations == 0) return false;
  report_violations(violations);
  report_detail(kThreshold.name, threshold_);
  log_info("step ", step, ": mean |gradient| below threshold ", threshold_, " in ", violations,
           " tensor(s), first ", first);
  return true;
}

}  // namespace litmus_builtin
