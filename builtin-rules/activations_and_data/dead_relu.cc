// DeadRelu: per selected layer at a step, the share of dead units (docs/rules/DeadRelu.md).
#include "dead_relu.h"

#include <optional>
#include <string>

#include "litmus_builtin/regex_check.hpp"
#include "litmus_builtin/unit_activity.hpp"
#include "litmus_builtin/param_checks.hpp"

namespace litmus_builtin {

DeadRelu::DeadRelu(const litmus::RuleArgs& args)
    : Rule(args),
      selection_(TensorSelection::FromParams(*this, "", kTensorRegex.name)),
      threshold_inactivity_(PercentParam(*this, kThresholdInactivity)),
      threshold_layer_(PercentParam(*this, kThresholdLayer)) {
  // "None" or "" is "not set": the documented default applies, never "every tensor".
  if (selection_.empty()) selection_.regexes = {std::string(kDefaultRegex)};
  CheckRegexes(*this, kTensorRegex.name, selection_.regexes);
  report_threshold(kSeries, threshold_layer_, litmus::Fires::kAbove);
  report_recommendation(
      "Many ReLU units output nothing for every input and no longer learn: lower the learning rate, use "
      "a leaky ReLU or ELU, or check the initialization and the input normalization.");
}

void DeadRelu::set_required_tensors(int64_t step) {
  for (const std::string_view name : selection_.NameViews(base_trial(), step)) req_tensors().add(name, {step});
}

bool DeadRelu::invoke_at_step(int64_t step) {
  int64_t violations = 0;
  for (const litmus::Tensor& tensor : req_tensors().get()) {
    const litmus::TensorView value = tensor.value(step);
    const std::optional<LayerActivity> activity =
        MeasureLayerActivity(value, threshold_inactivity_, [](double x) { return x > 0.0; });
    if (!activity) {
      if (non_numeric_.insert(tensor.name()).second) {
        log_warning("tensor ", tensor.name(), " holds no real numbers; skipped");
      }
      continue;
    }
    if (activity->units == 0) continue;
    const double dead_percent = activity->inactive_percent();
    report_series(kSeries, tensor.name(), step, dead_percent);
    if (dead_percent > threshold_layer_) {
      ++violations;
      report_detail(tensor.name(), dead_percent);
      log_info("step ", step, ": ", activity->inactive_units, " of ", activity->units, " units of ",
               tensor.name(), " are dead (", dead_percent, "% > threshold_layer ", threshold_layer_,
               "%)");
    }
  }
  if (violations > 0) report_violations(violations);
  return violations > 0;
}

}  // namespace litmus_builtin
