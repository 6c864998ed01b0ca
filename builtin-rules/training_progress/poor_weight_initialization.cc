// PoorWeightInitialization: the three checks of §3.11 inside the first `steps` steps.
#include "poor_weight_initialization.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "litmus_builtin/loss_series.hpp"

namespace litmus_builtin {

double Percentile(std::vector<double>& values, double q) {
  const double position = q / 100 * static_cast<double>(values.size() - 1);
  const size_t low = static_cast<size_t>(std::floor(position));
  const size_t high = std::min(low + 1, values.size() - 1);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(low), values.end());
  const double low_value = values[low];
  // The next order statistic is the smallest of the values after `low`.
  const double high_value =
      high == low ? low_value : *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(high), values.end());
  return low_value + (high_value - low_value) * (position - static_cast<double>(low));
}

PoorWeightInitialization::PoorWeightInitialization(const litmus::RuleArgs& args)
    : Rule(args),
      activation_regexes_(param_list("activation_inputs_regex")),
      threshold_(param_float("threshold")),
      distribution_range_(param_float("distribution_range")),
      patience_(param_int("patience")),
      steps_(param_int("steps")) {
  if (!(threshold_ > 0)) {
    throw litmus::InvalidConfig("threshold: expected a number > 0, got " + *param_raw("threshold"));
  }
  if (!(distribution_range_ >= 0)) {
    throw litmus::InvalidConfig("distribution_range: expected a number >= 0, got " + *param_raw("distribution_range"));
  }
  if (patience_ < 1) throw litmus::InvalidConfig("patience: expected an integer >= 1, got " + *param_raw("patience"));
  if (steps_ < 0) throw litmus::InvalidConfig("steps: expected an integer >= 0, got " + *param_raw("steps"));
  report_threshold(kSeriesVarianceRatio, threshold_, litmus::Fires::kAbove);
  report_threshold(kSeriesGradientSpread, distribution_range_, litmus::Fires::kBelow);
  report_recommendation(
      "Poorly initialized weights slow or stall training: use an initialization suited to the "
      "activations (He for ReLU, Xavier/Glorot for tanh), or add batch normalization.");
}

std::optional<double> PoorWeightInitialization::VarianceRatio(int64_t step) {
  std::optional<double> smallest, largest;
  for (const std::string& name : NamesOf(base_trial(), {}, activation_regexes_, step)) {
    double variance = 0;
    try {
      variance = base_trial().tensor(name).reduction_value(step, litmus::Reduction::kVariance);
    } catch (const litmus::TensorUnavailableForStep&) {
      continue;
    } catch (const litmus::InvalidArgument&) {
      continue;  // no variance (strings, an empty tensor)
    }
    if (!(variance > 0) || std::isinf(variance)) continue;  // dead layers and NaN say nothing about the spread
    smallest = std::min(smallest.value_or(variance), variance);
    largest = std::max(largest.value_or(variance), variance);
  }
  if (!smallest) return std::nullopt;
  return *largest / *smallest;
}

std::optional<double> PoorWeightInitialization::MinGradientSpread(int64_t step) {
  std::optional<double> smallest;
  std::vector<double> values;
  for (const std::string& name : NamesOf(base_trial(), {"gradients"}, {}, step)) {
    values.clear();
    try {
      const litmus::TensorView view = base_trial().tensor(name).value(step);
      if (view.is_string()) continue;
      values.reserve(view.size());
      for (int64_t i = 0; i < view.num_elements(); ++i) values.push_back(view.at_double(i));
    } catch (const litmus::TensorUnavailableForStep&) {
      continue;
    } catch (const litmus::InvalidArgument&) {
      continue;  // complex values: no order, no percentiles
    }
    // [INFERRED] One value has no distribution; NaN makes the percentiles undefined.
    if (values.size() < 2 || std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) {
      continue;
    }
    const double p5 = Percentile(values, 5);
    const double spread = Percentile(values, 95) - p5;
    smallest = std::min(smallest.value_or(spread), spread);
  }
  return smallest;
}

std::optional<std::pair<double, bool>> PoorWeightInitialization::LossTrend(int64_t step) {
  const litmus::Trial trial = base_trial();
  // The training loss: TRAIN steps, or every step of a trial without modes.
  const litmus::Mode mode = trial.step_mode(step);
  if (mode != litmus::Mode::kTrain && mode != litmus::Mode::kGlobal) return std::nullopt;
  const std::optional<double> loss =
      MeanScalarAt(trial, NamesOf(trial, {std::string(kLossesCollection)}, {}, step), step);
  if (!loss) return std::nullopt;
  losses_.push_back(*loss);
  if (losses_.size() <= static_cast<size_t>(patience_)) return std::nullopt;
  const double reference = losses_[losses_.size() - 1 - static_cast<size_t>(patience_)];
  const bool decreased = std::any_of(losses_.end() - patience_, losses_.end(), [&](double v) { return v < reference; });
  return std::make_pair(losses_.back() - reference, !decreased);
}

bool PoorWeightInitialization::invoke_at_step(int64_t step) {
  if (step >= steps_) {
    if (!window_end_logged_) {
      log_info("step ", step, " is past the analyzed window (steps ", steps_, "): the rule no longer checks");
      window_end_logged_ = true;
    }
    return false;
  }
  const std::optional<double> variance_ratio = VarianceRatio(step);
  const std::optional<double> min_gradient_spread = MinGradientSpread(step);
  const std::optional<std::pair<double, bool>> loss = LossTrend(step);
  const bool spread_met = variance_ratio && *variance_ratio > threshold_;
  const bool narrow_met = min_gradient_spread && *min_gradient_spread < distribution_range_;
  const bool loss_met = loss && loss->second;
  if (variance_ratio) report_series(kSeriesVarianceRatio, step, *variance_ratio);
  if (min_gradient_spread) report_series(kSeriesGradientSpread, step, *min_gradient_spread);
  if (loss) report_series(kSeriesLossTrend, step, loss->first);
  if (variance_ratio) report_detail("variance_ratio", *variance_ratio);
  if (min_gradient_spread) report_detail("min_gradient_spread", *min_gradient_spread);
  if (loss) report_detail("loss_trend", loss->first);
  if (spread_met) {
    log_info("step ", step, ": layer input variances spread by a factor ", *variance_ratio, " > threshold ",
             threshold_);
  }
  if (narrow_met) {
    log_info("step ", step, ": a gradient's values span only ", *min_gradient_spread,
             " (p95 - p5) < distribution_range ", distribution_range_);
  }
  if (loss_met) {
    log_info("step ", step, ": the training loss has not decreased over the last ", patience_, " saved steps (change ",
             loss->first, ")");
  }
  const int64_t violations = (spread_met ? 1 : 0) + (narrow_met ? 1 : 0) + (loss_met ? 1 : 0);
  if (violations > 0) report_violations(violations);
  return violations > 0;
}

}  // namespace litmus_builtin
