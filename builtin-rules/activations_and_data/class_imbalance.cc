// ClassImbalance: per-class label counts and misprediction rates accumulated across steps
// (docs/rules/ClassImbalance.md).
#include "class_imbalance.h"

#include <algorithm>
#include <limits>

#include "litmus_builtin/class_ids.hpp"
#include "litmus_builtin/regex_check.hpp"
#include "litmus_builtin/param_checks.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {

ClassImbalance::ClassImbalance(const litmus::RuleArgs& args)
    : Rule(args),
      threshold_imbalance_(FloatInRange(*this, kThresholdImbalance, 1.0,
                                        std::numeric_limits<double>::infinity(), "must be a ratio >= 1")),
      threshold_misprediction_(FractionParam(*this, kThresholdMisprediction)),
      samples_(IntAtLeast(*this, kSamples, 1)),
      argmax_(param_bool(kArgmax.name)),
      // "None" or "" is "not set": the documented default applies.
      labels_regex_(param_optional_string(kLabelsRegex.name).value_or(std::string(kDefaultLabelsRegex))),
      predictions_regex_(param_optional_string(kPredictionsRegex.name)
                             .value_or(std::string(kDefaultPredictionsRegex))) {
  CheckRegexes(*this, kLabelsRegex.name, {labels_regex_});
  CheckRegexes(*this, kPredictionsRegex.name, {predictions_regex_});
  report_threshold(kSeriesRatio, threshold_imbalance_, litmus::Fires::kAbove);
  report_recommendation(
      "Imbalanced classes bias the model toward the frequent ones: resample or reweight the classes "
      "(weighted loss), collect more data for rare classes, and judge the model per class.");
}

ClassImbalance::StepPairs ClassImbalance::Pairs(int64_t step) {
  std::vector<std::string> labels = base_trial().tensor_names({.regex = labels_regex_, .step = step});
  std::vector<std::string> predictions =
      base_trial().tensor_names({.regex = predictions_regex_, .step = step});
  std::sort(labels.begin(), labels.end());
  std::sort(predictions.begin(), predictions.end());
  StepPairs out{.pairs = {}, .labels = labels.size(), .predictions = predictions.size()};
  for (size_t i = 0; i < std::min(labels.size(), predictions.size()); ++i) {
    out.pairs.emplace_back(labels[i], predictions[i]);
  }
  return out;
}

void ClassImbalance::set_required_tensors(int64_t step) {
  for (const auto& [labels, predictions] : Pairs(step).pairs) {
    req_tensors().add(labels, {step});
    req_tensors().add(predictions, {step});
  }
}

bool ClassImbalance::invoke_at_step(int64_t step) {
  const StepPairs found = Pairs(step);
  if (found.pairs.empty()) return false;  // a step without both labels and predictions adds nothing
  if (found.labels != found.predictions && !warned_unpaired_) {
    warned_unpaired_ = true;
    log_warning("step ", step, ": ", found.labels, " labels tensors but ", found.predictions,
                " predictions tensors; pairing the first ", found.pairs.size(), " of each by sorted name");
  }

  // Accumulate into copies and commit only when the whole step converted: a bad tensor or a
  // failed read skips the step without leaving part of it counted.
  std::map<int64_t, int64_t> count = count_;
  std::map<int64_t, int64_t> correct = correct_;
  int64_t total = total_;
  const ClassIdConversion prediction_conversion =
      argmax_ ? ClassIdConversion::kArgmaxLastAxis : ClassIdConversion::kRound;
  for (const auto& [labels, predictions] : found.pairs) {
    const ClassIdPairs ids =
        PairClassIds(base_trial().tensor(labels).value(step), ClassIdConversion::kTruncate,
                     base_trial().tensor(predictions).value(step), prediction_conversion);
    if (!ids.ok()) {
      log_warning("step ", step, " skipped: ", ids.error);
      return false;
    }
    for (size_t i = 0; i < ids.labels.size(); ++i) {
      ++count[ids.labels[i]];
      if (ids.predictions[i] == ids.labels[i]) ++correct[ids.labels[i]];
    }
    total += static_cast<int64_t>(ids.labels.size());
  }
  count_ = std::move(count);
  correct_ = std::move(correct);
  total_ = total;

  JsonObject counts;
  for (const auto& [label, n] : count_) counts.Add(std::to_string(label), n);
  report_detail("counts", counts.str());
  report_detail("samples_seen", total_);
  report_series(kSeriesSamples, step, static_cast<double>(total_));
  if (total_ < samples_) return false;

  int64_t violations = 0;
  int64_t most = 0;
  int64_t least = std::numeric_limits<int64_t>::max();
  JsonObject misprediction;
  for (const auto& [label, n] : count_) {
    most = std::max(most, n);
    least = std::min(least, n);
    const auto hit = correct_.find(label);
    const double rate = 1.0 - static_cast<double>(hit == correct_.end() ? 0 : hit->second) / static_cast<double>(n);
    misprediction.Add(std::to_string(label), rate);
    const std::string series = std::string(kSeriesMispredictionPrefix) + std::to_string(label);
    report_series(series, step, rate);
    report_threshold(series, threshold_misprediction_, litmus::Fires::kAbove);
    if (rate > threshold_misprediction_) {
      ++violations;
      log_info("step ", step, ": class ", label, " is mispredicted for ", rate * 100.0, "% of its ", n,
               " samples (> threshold_misprediction ", threshold_misprediction_, ")");
    }
  }
  report_detail("misprediction_rate", misprediction.str());
  const double ratio = static_cast<double>(most) / static_cast<double>(least);
  report_detail("imbalance_ratio", ratio);
  report_series(kSeriesRatio, step, ratio);
  if (ratio > threshold_imbalance_) {
    ++violations;
    log_info("step ", step, ": the largest class has ", most, " samples, the smallest ", least,
             " (ratio ", ratio, " > threshold_imbalance ", threshold_imbalance_, ")");
  }
  if (violations > 0) report_violations(violations);
  return violations > 0;
}

}  // namespace litmus_builtin
