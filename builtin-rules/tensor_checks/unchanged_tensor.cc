// UnchangedTensor: each selected tensor is required at its last num_steps saved steps; the rule
// fires when every consecutive pair of them is all-close (docs/rules/UnchangedTensor.md).
#include "unchanged_tensor.h"

#include <string>
#include <vector>

#include "litmus_builtin/param_checks.hpp"
#include "litmus_builtin/regex_check.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {

UnchangedTensor::UnchangedTensor(const litmus::RuleArgs& args)
    : Rule(args),
      selection_(TensorSelection::FromParams(*this, kCollectionNames.name, kTensorRegex.name)),
      // One step alone is trivially "unchanged": at least two are compared [OURS].
      num_steps_(IntAtLeast(*this, kNumSteps, 2)),
      tolerance_{.rtol = NonNegativeParam(*this, kRtol),
                 .atol = NonNegativeParam(*this, kAtol),
                 .equal_nan = param_bool(kEqualNan.name)} {
  CheckRegexes(*this, kTensorRegex.name, selection_.regexes);
  if (selection_.empty()) {
    // DOC says a selection is mandatory; docs/rules/semantics.md §1.3 decides for "every tensor".
    log_info("no collection_names or tensor_regex given: checking every tensor saved at each step");
  }
  report_threshold(kSeries, 0.5, litmus::Fires::kAbove);
  report_recommendation(
      "A tensor that no longer changes is not being trained: check that its layer is not frozen by "
      "mistake, that the learning rate is not zero, and that its gradients reach it.");
}

void UnchangedTensor::set_required_tensors(int64_t step) {
  const litmus::Trial trial = base_trial();
  for (const std::string_view name : selection_.NameViews(trial, step)) {
    // The last num_steps saved steps up to this one; they need not be consecutive ("if s-1 isn't
    // available, it checks the last available step along with s"). Fewer: not evaluated yet.
    const std::vector<int64_t> window =
        LastStepsUpTo(saved_steps_.Get(trial, name, litmus::Mode::kGlobal, step), step,
                      static_cast<size_t>(num_steps_));
    if (window.size() == static_cast<size_t>(num_steps_)) req_tensors().add(name, window);
  }
}

bool UnchangedTensor::invoke_at_step(int64_t step) {
  int64_t violations = 0;
  std::string first;  // the first violating tensor, for the log line
  for (const litmus::Tensor& tensor : req_tensors().get()) {
    const std::vector<int64_t> window = req_tensors().get_tensor_steps(tensor.name());
    bool unchanged = true;
    for (size_t i = 1; i < window.size() && unchanged; ++i) {
      // numpy.allclose(older, newer): the newer value is the reference of the relative tolerance.
      const Comparison comparison =
          CompareValues(tensor.value(window[i - 1]), tensor.value(window[i]), tolerance_);
      if (comparison == Comparison::kIncomparable) {
        if (incomparable_.insert(tensor.name()).second) {
          log_warning("tensor ", tensor.name(), " holds complex values, which cannot be compared; skipped");
        }
      }
      unchanged = comparison == Comparison::kClose;
    }
    report_series(kSeries, tensor.name(), step, unchanged ? 1.0 : 0.0);
    if (!unchanged) continue;
    std::vector<std::string> steps;
    for (const int64_t s : window) steps.push_back(JsonNumber(s));
    report_detail(tensor.name(), JsonArray(steps));
    if (violations++ == 0) first = tensor.name() + " " + JsonArray(steps);
  }
  if (violations == 0) return false;
  report_violations(violations);
  log_info("step ", step, ": ", violations, " tensor(s) unchanged over their last ", num_steps_,
           " saved steps, first ", first);
  return true;
}

}  // namespace litmus_builtin
