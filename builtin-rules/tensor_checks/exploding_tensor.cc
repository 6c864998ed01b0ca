// ExplodingTensor: NaN / infinity counts of every selected tensor at the step, from the value or,
// when the training job saved only reductions, from those (docs/rules/ExplodingTensor.md).
#include "exploding_tensor.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "litmus_builtin/regex_check.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {
namespace {

// Whether any element of a non-empty float32 or float64 value is NaN or infinite, from its
// computed abs-max (NaN if any element is NaN, inf if any is infinite): the host computes that
// reduction once per tensor, usually while prefetching it, and AllZero asks for the same one, so
// the common all-finite case costs no pass over the data here. nullopt for other dtypes.
std::optional<bool> AnyNonFinite(const litmus::Tensor& tensor, const litmus::TensorView& value, int64_t step) {
  if (value.empty() || (value.dtype() != litmus::DType::kFloat32 && value.dtype() != litmus::DType::kFloat64)) {
    return std::nullopt;
  }
  return !std::isfinite(tensor.reduction_value(step, litmus::Reduction::kMax, /*abs=*/true));
}

}  // namespace

ExplodingTensor::ExplodingTensor(const litmus::RuleArgs& args)
    : Rule(args),
      selection_(TensorSelection::FromParams(*this, kCollectionNames.name, kTensorRegex.name)),
      only_nan_(param_bool(kOnlyNan.name)) {
  CheckRegexes(*this, kTensorRegex.name, selection_.regexes);
  if (selection_.empty()) {
    log_info("no collection_names or tensor_regex given: checking every tensor saved at each step");
  }
  report_threshold(kSeriesNan, 0, litmus::Fires::kAbove);
  if (!only_nan_) report_threshold(kSeriesInf, 0, litmus::Fires::kAbove);
  report_recommendation(
      "NaN or infinite values usually mean a diverging optimization: lower the learning rate, clip "
      "gradients, check the loss for log(0) or division by zero, and the inputs for invalid values.");
}

void ExplodingTensor::set_required_tensors(int64_t step) {
  // A tensor saved only as reductions is judged by them (docs/rules/semantics.md §1.4): the
  // step must not be skipped for want of a raw value (ABI 1.2).
  for (const std::string_view name : selection_.NameViews(base_trial(), step)) {
    req_tensors().add(name, {step}, {.reductions_only = true});
  }
}

ExplodingTensor::Counts ExplodingTensor::CountNonFinite(const litmus::Tensor& tensor,
                                                        int64_t step) const {
  Counts counts;
  try {
    const litmus::TensorView value = tensor.value(step);
    // One pass in the common, all-finite case; the split only when something is non-finite.
    const std::optional<bool> any = AnyNonFinite(tensor, value, step);
    if (any ? *any : value.count_nan_or_inf() > 0) {
      counts.nan = value.count_nan();
      counts.inf = value.count_inf();
    }
    return counts;
  } catch (const litmus::TensorUnavailableForStep&) {
    // No raw value at this step: the training job saved reductions only (reduction_config
    // without save_raw_tensor). A reduction over NaN/Inf data is itself non-finite [INFERRED].
  }
  counts.from_reductions = true;
  bool any_saved = false;
  for (const litmus::Reduction reduction :
       {litmus::Reduction::kMin, litmus::Reduction::kMax, litmus::Reduction::kMean,
        litmus::Reduction::kStd, litmus::Reduction::kVariance, litmus::Reduction::kSum,
        litmus::Reduction::kProd, litmus::Reduction::kL1, litmus::Reduction::kL2}) {
    for (const bool abs : {false, true}) {
      try {
        const double saved = tensor.reduction_value(step, reduction, abs);
        any_saved = true;
        if (std::isnan(saved)) ++counts.nan;
        if (std::isinf(saved)) ++counts.inf;
      } catch (const litmus::TensorUnavailableForStep&) {
        // Not one of the saved reductions.
      }
    }
  }
  // Neither a value nor any reduction: the step is skipped (docs/rules/semantics.md §1.5).
  if (!any_saved) throw litmus::TensorUnavailableForStep(tensor.name(), step);
  return counts;
}

bool ExplodingTensor::invoke_at_step(int64_t step) {
  int64_t violations = 0;
  std::string first;  // the first violating tensor, for the log line
  for (const litmus::Tensor& tensor : req_tensors().get()) {
    const Counts counts = CountNonFinite(tensor, step);
    report_series(kSeriesNan, tensor.name(), step, static_cast<double>(counts.nan));
    if (!only_nan_) report_series(kSeriesInf, tensor.name(), step, static_cast<double>(counts.inf));
    if (counts.nan == 0 && (only_nan_ || counts.inf == 0)) continue;
    JsonObject detail;
    detail.Add("nan_count", counts.nan).Add("inf_count", counts.inf);
    if (counts.from_reductions) detail.Add("from_saved_reductions", std::string_view("true"));
    report_detail(tensor.name(), detail.str());
    if (violations++ == 0) first = tensor.name() + " " + detail.str();
  }
  if (violations == 0) return false;
  report_violations(violations);
  log_info("step ", step, ": ", violations, " tensor(s) hold ", only_nan_ ? "NaN" : "NaN or infinite",
           " values, first ", first);
  return true;
}

}  // namespace litmus_builtin
