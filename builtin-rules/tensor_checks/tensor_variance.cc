// TensorVariance: the population variance (ddof 0) of every selected tensor at the step against the
// optional bounds (docs/rules/TensorVariance.md). A variance the training job saved as a reduction is
// used as saved.
#include "tensor_variance.h"

#include <string>

#include "litmus_builtin/param_checks.hpp"
#include "litmus_builtin/reduction.hpp"
#include "litmus_builtin/regex_check.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {

TensorVariance::TensorVariance(const litmus::RuleArgs& args)
    : Rule(args),
      selection_(TensorSelection::FromParams(*this, kCollectionNames.name, kTensorRegex.name)),
      max_threshold_(OptionalFiniteParam(*this, kMaxThreshold)),
      min_threshold_(OptionalFiniteParam(*this, kMinThreshold)) {
  CheckRegexes(*this, kTensorRegex.name, selection_.regexes);
  if (max_threshold_ && min_threshold_ && *min_threshold_ > *max_threshold_) {
    throw litmus::InvalidConfig("min_threshold: must not exceed max_threshold (" +
                                param_raw(kMaxThreshold.name).value_or("") + "), got '" +
                                param_raw(kMinThreshold.name).value_or("") + "'");
  }
  if (!max_threshold_ && !min_threshold_) {
    log_warning("neither max_threshold nor min_threshold is set: this rule can never fire");
  }
  if (selection_.empty()) {
    // DOC says a selection is mandatory; docs/rules/semantics.md §1.3 decides for "every tensor".
    log_info("no collection_names or tensor_regex given: checking every tensor saved at each step");
  }
  if (max_threshold_) report_threshold(kSeries, *max_threshold_, litmus::Fires::kAbove);
  if (min_threshold_) report_threshold(kSeries, *min_threshold_, litmus::Fires::kBelow);
  report_recommendation(
      "A variance that grows without bound points to exploding values (lower the learning rate, clip "
      "gradients); one that collapses to a constant points to dead units or saturated activations.");
}

void TensorVariance::set_required_tensors(int64_t step) {
  // Nothing to decide without a bound: declare nothing, so that no tensor is read.
  if (!max_threshold_ && !min_threshold_) return;
  // A tensor saved only as reductions is judged by them (docs/rules/semantics.md §1.4): the
  // step must not be skipped for want of a raw value (ABI 1.2).
  for (const std::string_view name : selection_.NameViews(base_trial(), step)) {
    req_tensors().add(name, {step}, {.reductions_only = true});
  }
}

bool TensorVariance::invoke_at_step(int64_t step) {
  int64_t violations = 0;
  std::string first;  // the first violating tensor, for the log line
  for (const litmus::Tensor& tensor : req_tensors().get()) {
    std::string why;
    const std::optional<double> variance =
        ReductionIfDefined(tensor, step, litmus::Reduction::kVariance, /*abs=*/false, &why);
    if (!variance) {
      if (undefined_.insert(tensor.name()).second) {
        log_warning("tensor ", tensor.name(), ": variance undefined (", why, "); skipped");
      }
      continue;
    }
    report_series(kSeries, tensor.name(), step, *variance);
    // NaN (empty or non-finite values) compares false against both bounds.
    const bool too_high = max_threshold_ && *variance > *max_threshold_;
    const bool too_low = min_threshold_ && *variance < *min_threshold_;
    if (!too_high && !too_low) continue;
    if (violations++ == 0) {
      first = tensor.name() + " (" + JsonNumber(*variance) + (too_high ? " > max_threshold)" : " < min_threshold)");
    }
    report_detail(tensor.name(), *variance);
  }
  if (violations == 0) return false;
  report_violations(violations);
  log_info("step ", step, ": variance out of bounds in ", violations, " tensor(s), first ", first);
  return true;
}

}  // namespace litmus_builtin
