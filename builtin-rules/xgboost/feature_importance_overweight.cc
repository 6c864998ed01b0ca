// FeatureImportanceOverweight: see feature_importance_overweight.h. The decision and its
// [INFERRED] choices are explained for users in docs/rules/FeatureImportanceOverweight.md.
#include "feature_importance_overweight.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "litmus_builtin/regex_check.hpp"

namespace litmus_builtin {
namespace {

struct FeatureShare {
  std::string name;
  double share;
};

// A finite double as JSON text (shortest round-trip form).
std::string JsonNumber(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

// [["feature_importance/weight/f3",0.5],...]
std::string TopFeaturesJson(const std::vector<FeatureShare>& shares, size_t count) {
  std::string json = "[";
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) json += ',';
    json += '[';
    json += litmus::JsonString(shares[i].name);
    json += ',';
    json += JsonNumber(shares[i].share);
    json += ']';
  }
  return json + "]";
}

// The importance held by a one-element numeric tensor, if it is a usable share (finite, >= 0).
std::optional<double> ImportanceOf(const litmus::TensorView& view) {
  if (view.is_string() || view.num_elements() != 1 || view.dtype() == litmus::DType::kComplex64 ||
      view.dtype() == litmus::DType::kComplex128) {
    return std::nullopt;
  }
  const double value = view.scalar();
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

}  // namespace

FeatureImportanceOverweight::FeatureImportanceOverweight(const litmus::RuleArgs& args)
    : Rule(args),
      threshold_(param_float(kThreshold.name)),
      nfeatures_(param_int(kNFeatures.name)),
      // "None" or "" mean not set (docs/rules/semantics.md §1.2): the default regex then applies.
      tensor_regex_(param_optional_string(kTensorRegex.name).value_or(std::string(kDefaultTensorRegex))) {
  if (!(threshold_ >= 0 && threshold_ <= 1)) {  // NaN fails both comparisons
    throw litmus::InvalidConfig("threshold: expected a fraction between 0 and 1, got '" +
                                param_raw(kThreshold.name).value_or("") + "'");
  }
  if (nfeatures_ < 1) {
    throw litmus::InvalidConfig("nfeatures: expected an integer of at least 1, got '" +
                                param_raw(kNFeatures.name).value_or("") + "'");
  }
  // A pattern the host's regex engine refuses is a configuration error now, not a rule failure
  // at the first step.
  CheckRegexes(*this, kTensorRegex.name, {tensor_regex_});
  report_threshold(kSeries, threshold_, litmus::Fires::kAbove);
  report_recommendation(
      "A few features dominate the model: check them for target leakage, and consider subsampling "
      "features (colsample_bytree) or stronger regularization.");
}

void FeatureImportanceOverweight::set_required_tensors(int64_t step) {
  for (const std::string& name : base_trial().tensor_names({.regex = tensor_regex_, .step = step})) {
    req_tensors().add(name, {step});
  }
}

bool FeatureImportanceOverweight::invoke_at_step(int64_t step) {
  std::vector<FeatureShare> shares;
  double total = 0;
  for (const litmus::Tensor& tensor : req_tensors().get()) {
    const std::optional<double> importance = ImportanceOf(tensor.value(step));
    if (!importance) {
      if (!logged_unusable_value_) {
        log_warning("tensor ", tensor.name(), " at step ", step,
                    " is not a finite, non-negative scalar; tensors like it are left out (is "
                    "tensor_regex selecting only feature_importance/<type>/<feature> scalars?)");
        logged_unusable_value_ = true;
      }
      continue;
    }
    shares.push_back({tensor.name(), *importance});
    total += *importance;
  }
  // Nothing selected at this step, or no importance at all: nothing can be overweight (§1.5).
  if (shares.empty() || !(total > 0)) return false;

  // The hook saves each type already normalised to sum 1; renormalising guards against a regex
  // that selects a subset of the features or several importance types.
  for (FeatureShare& feature : shares) feature.share /= total;
  std::sort(shares.begin(), shares.end(), [](const FeatureShare& a, const FeatureShare& b) {
    return a.share != b.share ? a.share > b.share : a.name < b.name;
  });
  const size_t top = std::min(shares.size(), static_cast<size_t>(nfeatures_));
  double share_sum = 0;
  for (size_t i = 0; i < top; ++i) share_sum += shares[i].share;
  if (top == shares.size()) {
    // Every feature is in the top: the share is the whole importance, exactly 1 (not a sum
    // rounded below it), so the rule fires at every step whenever threshold < 1.
    share_sum = 1.0;
    if (!logged_all_features_) {
      log_warning("nfeatures (", nfeatures_, ") >= the number of features selected at step ", step,
                  " (", shares.size(), "): the top features hold all the importance, so the rule ",
                  "fires whenever threshold < 1");
      logged_all_features_ = true;
    }
  }

  report_series(kSeries, step, share_sum);
  const bool met = share_sum > threshold_;
  if (met || !fired_) {
    report_detail("step", step);
    report_detail("top_features", TopFeaturesJson(shares, top));
    report_detail("share_sum", share_sum);
    report_detail("threshold", threshold_);
    report_detail("features", static_cast<int64_t>(shares.size()));
  }
  if (met) {
    report_violations(static_cast<int64_t>(top));  // the (tensor, step) pairs of the top features
    fired_ = true;
  }
  return met;
}

}  // namespace litmus_builtin
