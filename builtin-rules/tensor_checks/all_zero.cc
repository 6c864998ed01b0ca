// AllZero: the share of zero elements of every selected tensor at the step (docs/rules/AllZero.md).
#include "all_zero.h"

#include <span>
#include <string>

#include "litmus_builtin/numeric_visit.hpp"
#include "litmus_builtin/param_checks.hpp"
#include "litmus_builtin/regex_check.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {

AllZero::AllZero(const litmus::RuleArgs& args)
    : Rule(args),
      selection_(TensorSelection::FromParams(*this, kCollectionNames.name, kTensorRegex.name)),
      threshold_(PercentParam(*this, kThreshold)) {
  CheckRegexes(*this, kTensorRegex.name, selection_.regexes);
  if (selection_.empty()) {
    // DOC says a selection is mandatory; docs/rules/semantics.md §1.3 decides for "every tensor".
    log_info("no collection_names or tensor_regex given: checking every tensor saved at each step");
  }
  report_threshold(kSeriesPercent, threshold_, litmus::Fires::kAbove);
  if (threshold_ >= 100) report_threshold(kSeriesAbsMax, 0, litmus::Fires::kBelow);
  report_recommendation(
      "An all-zero tensor carries no signal: check the data pipeline and preprocessing (inputs), dead "
      "activations (ReLU), or weights that were never updated or were zeroed by a bug.");
}

void AllZero::set_required_tensors(int64_t step) {
  // A tensor saved only as reductions is judged by them (docs/rules/semantics.md §1.4): the
  // step must not be skipped for want of a raw value (ABI 1.2).
  for (const std::string_view name : selection_.NameViews(base_trial(), step)) {
    req_tensors().add(name, {step}, {.reductions_only = true});
  }
}

bool AllZero::invoke_at_step(int64_t step) {
  int64_t violations = 0;
  std::string first;  // the first violating tensor, for the log line
  for (const litmus::Tensor& tensor : req_tensors().get()) {
    const litmus::TensorView value = tensor.value(step);
    if (value.empty()) continue;  // no elements: no share of zeros
    // At a threshold of 100 % only "every element is zero" matters: for float32/float64 that is
    // an abs-max of 0 (NaN is not zero, and makes abs-max NaN), a reduction the host computes
    // once per tensor, usually while prefetching it; a tensor that is not all zero is then done.
    if (threshold_ >= 100 &&
        (value.dtype() == litmus::DType::kFloat32 || value.dtype() == litmus::DType::kFloat64)) {
      const double abs_max = tensor.reduction_value(step, litmus::Reduction::kMax, /*abs=*/true);
      report_series(kSeriesAbsMax, tensor.name(), step, abs_max);
      if (abs_max != 0) continue;
    }
    int64_t zeros = 0;
    const bool numeric = VisitNumeric(value, [&zeros](auto elements) {
      for (const auto x : elements) zeros += x == 0 ? 1 : 0;  // -0.0 is zero, NaN is not
    });
    if (!numeric) {
      if (non_numeric_.insert(tensor.name()).second) {
        log_warning("tensor ", tensor.name(), " holds no real numbers; skipped");
      }
      continue;
    }
    const double pct_zero = 100.0 * static_cast<double>(zeros) / static_cast<double>(value.num_elements());
    report_series(kSeriesPercent, tensor.name(), step, pct_zero);
    // >= so that the default 100 means "every element is zero" [INFERRED comparison].
    if (pct_zero >= threshold_) {
      if (violations++ == 0) first = tensor.name() + " (" + JsonNumber(pct_zero) + "%)";
      report_detail(tensor.name(), pct_zero);
    }
  }
  if (violations == 0) return false;
  report_violations(violations);
  log_info("step ", step, ": ", violations, " tensor(s) at least ", threshold_, "% zero, first ", first);
  return true;
}

}  // namespace litmus_builtin
