// SaturatedActivation: per selected tanh/sigmoid layer at a step, the share of saturated units
// (docs/rules/SaturatedActivation.md), with both spellings of the active ranges ([CONFLICT] DOC-2020 tuples
// threshold_tanh/threshold_sigmoid vs DOC-2023 split keys).
#include "saturated_activation.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "litmus_builtin/regex_check.hpp"
#include "litmus_builtin/unit_activity.hpp"
#include "litmus_builtin/param_checks.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {
namespace {

// "(min, max)" or "min,max" -> {min, max}; nullopt for anything else.
std::optional<std::pair<double, double>> ParseRangeTuple(std::string_view text) {
  text = litmus::params::TrimAscii(text);
  if (!text.empty() && text.front() == '(') {
    if (text.back() != ')') return std::nullopt;
    text = text.substr(1, text.size() - 2);
  }
  const size_t comma = text.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  const std::optional<double> min = litmus::params::ParseDouble(text.substr(0, comma));
  const std::optional<double> max = litmus::params::ParseDouble(text.substr(comma + 1));
  if (!min || !max) return std::nullopt;
  return std::pair(*min, *max);
}

bool NameContains(std::string_view name, std::string_view word) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find(word) != std::string::npos;
}

}  // namespace

SaturatedActivation::SaturatedActivation(const litmus::RuleArgs& args)
    : Rule(args),
      selection_(TensorSelection::FromParams(*this, kCollectionNames.name, kTensorRegex.name)),
      tanh_(ReadRange(kThresholdTanh, kThresholdTanhMin, kThresholdTanhMax)),
      sigmoid_(ReadRange(kThresholdSigmoid, kThresholdSigmoidMin, kThresholdSigmoidMax)),
      threshold_inactivity_(PercentParam(*this, kThresholdInactivity)),
      threshold_layer_(PercentParam(*this, kThresholdLayer)) {
  // "None" or "" for both is "not set": the documented default applies, never "every tensor".
  if (selection_.empty()) selection_.regexes = {std::string(kDefaultRegex)};
  CheckRegexes(*this, kTensorRegex.name, selection_.regexes);
  report_threshold(kSeries, threshold_layer_, litmus::Fires::kAbove);
  report_recommendation(
      "Saturated tanh/sigmoid units pass almost no gradient: normalize the layer inputs (batch "
      "normalization), lower the learning rate, or use ReLU-like activations.");
}

// A split key wins when given. The host passes every declared parameter to the rule, the default
// text when the user gave none, so "given" can only mean "differs from the default text": a split
// key given with exactly its default text is taken as not given (see docs/rules/SaturatedActivation.md).
SaturatedActivation::ActiveRange SaturatedActivation::ReadRange(
    const litmus::ParamSpec& tuple_spec, const litmus::ParamSpec& min_spec,
    const litmus::ParamSpec& max_spec) const {
  std::optional<std::pair<double, double>> tuple;
  if (const std::optional<std::string> text = param_optional_string(tuple_spec.name)) {
    tuple = ParseRangeTuple(*text);
    if (!tuple) ThrowInvalidParam(*this, tuple_spec, "expected \"min,max\" with optional parentheses");
  }
  auto given = [&](const litmus::ParamSpec& spec) {
    return litmus::params::TrimAscii(param_raw(spec.name).value_or("")) != spec.default_value;
  };
  const bool min_from_tuple = tuple && !given(min_spec);
  const bool max_from_tuple = tuple && !given(max_spec);
  ActiveRange range;
  range.min = min_from_tuple ? tuple->first : param_float(min_spec.name);
  range.max = max_from_tuple ? tuple->second : param_float(max_spec.name);
  if (!(range.min < range.max)) {
    const std::string min_key(min_from_tuple ? tuple_spec.name : min_spec.name);
    const std::string max_key(max_from_tuple ? tuple_spec.name : max_spec.name);
    throw litmus::InvalidConfig(min_key + (min_key == max_key ? "" : "/" + max_key) +
                                ": the minimum (" + JsonNumber(range.min) +
                                ") must be below the maximum (" + JsonNumber(range.max) + ")");
  }
  return range;
}

void SaturatedActivation::set_required_tensors(int64_t step) {
  for (const std::string& name : selection_.Names(base_trial(), step)) {
    if (NameContains(name, "tanh") || NameContains(name, "sigmoid")) {
      req_tensors().add(name, {step});
    } else if (unknown_kind_.insert(name).second) {
      log_warning("tensor ", name, " is selected but its name says neither tanh nor sigmoid; skipped");
    }
  }
}

bool SaturatedActivation::invoke_at_step(int64_t step) {
  int64_t violations = 0;
  for (const litmus::Tensor& tensor : req_tensors().get()) {
    // [INFERRED] the kind comes from the name; set_required_tensors kept only tanh/sigmoid names.
    const ActiveRange range = NameContains(tensor.name(), "tanh") ? tanh_ : sigmoid_;
    const litmus::TensorView value = tensor.value(step);
    const std::optional<LayerActivity> activity = MeasureLayerActivity(
        value, threshold_inactivity_, [range](double x) { return range.min < x && x < range.max; });
    if (!activity) {
      if (non_numeric_.insert(tensor.name()).second) {
        log_warning("tensor ", tensor.name(), " holds no real numbers; skipped");
      }
      continue;
    }
    if (activity->units == 0) continue;
    const double saturated_percent = activity->inactive_percent();
    report_series(kSeries, tensor.name(), step, saturated_percent);
    if (saturated_percent > threshold_layer_) {
      ++violations;
      report_detail(tensor.name(), saturated_percent);
      log_info("step ", step, ": ", activity->inactive_units, " of ", activity->units, " units of ",
               tensor.name(), " are saturated (", saturated_percent, "% > threshold_layer ",
               threshold_layer_, "%)");
    }
  }
  if (violations > 0) report_violations(violations);
  return violations > 0;
}

}  // namespace litmus_builtin
