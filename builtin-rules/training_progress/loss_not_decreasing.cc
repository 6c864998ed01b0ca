// LossNotDecreasing: selection, mode search, evaluation cadence and baseline of §3.3.
#include "loss_not_decreasing.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {
namespace {

std::optional<litmus::Mode> ParseMode(std::string_view text) {
  std::string upper;
  for (const char c : litmus::params::TrimAscii(text)) {
    upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (upper == "EVAL") return litmus::Mode::kEval;
  if (upper == "TRAIN") return litmus::Mode::kTrain;
  if (upper == "GLOBAL") return litmus::Mode::kGlobal;
  return std::nullopt;
}

double Percent(const litmus::Rule& rule, std::string_view key) {
  const double value = rule.param_float(key);
  if (!(value >= 0 && value <= 100)) {
    throw litmus::InvalidConfig(std::string(key) + ": expected a percentage between 0 and 100, got " +
                                *rule.param_raw(key));
  }
  return value;
}

}  // namespace

bool LossConditionMet(double base, double current, double diff_percent, double increase_threshold_percent) {
  if (current > base) return (current - base) / std::abs(base) * 100 > increase_threshold_percent;
  return (base - current) / std::abs(base) * 100 < diff_percent;
}

LossNotDecreasing::LossNotDecreasing(const litmus::RuleArgs& args)
    : Rule(args),
      regexes_(param_list("tensor_regex")),
      num_steps_(param_int("num_steps")),
      diff_percent_(Percent(*this, "diff_percent")),
      increase_threshold_percent_(Percent(*this, "increase_threshold_percent")) {
  if (param_bool("use_losses_collection")) collections_.emplace_back(kLossesCollection);
  for (std::string& name : param_list("collection_names")) collections_.push_back(std::move(name));
  if (num_steps_ < 1) {
    throw litmus::InvalidConfig("num_steps: expected an integer >= 1, got " + *param_raw("num_steps"));
  }
  if (const std::optional<std::string> mode = param_optional_string("mode")) {
    mode_ = ParseMode(*mode);
    if (!mode_) throw litmus::InvalidConfig("mode: expected EVAL, TRAIN or GLOBAL, got '" + *mode + "'");
  }
  // What it compares (ABI 1.3): a decrease below diff_percent, an increase above the tolerance.
  report_threshold(kSeriesDecrease, diff_percent_, litmus::Fires::kBelow);
  report_threshold(kSeriesIncrease, increase_threshold_percent_, litmus::Fires::kAbove);
  report_recommendation(
      "A loss that stops decreasing means training is stuck or diverging: lower or schedule the learning "
      "rate, check the data (labels, shuffling) and the loss function, or stop training early.");
}

std::vector<std::string> LossNotDecreasing::SelectedScalars() {
  const litmus::Trial trial = base_trial();
  std::vector<std::string> names = scalars_.Filter(trial, NamesOf(trial, collections_, regexes_));
  if (!names.empty()) return names;
  // [INFERRED from TEST]: a trial without a losses collection still fired with default arguments.
  names = scalars_.Filter(trial, trial.tensor_names());
  if (!names.empty() && !fallback_logged_) {
    log_info(
        "no scalar tensor in the losses collection, collection_names or tensor_regex: checking every "
        "scalar tensor of the trial (",
        names.size(), " now)");
    fallback_logged_ = true;
  }
  return names;
}

std::optional<litmus::Mode> LossNotDecreasing::ChosenMode(const std::vector<std::string>& names) {
  if (mode_) return mode_;
  // [1P/DOC-2020 order] EVAL, then TRAIN, then GLOBAL: decided again at every step from the steps
  // known so far, so a live job moves to EVAL once validation losses appear.
  const litmus::Trial trial = base_trial();
  // A tensor that has steps in a mode keeps them: known ones are not listed again (a list of the
  // trial's length, at every step otherwise).
  const auto has_steps = [&](litmus::Mode mode, const std::string& name) {
    if (has_steps_.contains({mode, name})) return true;
    const bool has = mode == litmus::Mode::kGlobal ? !trial.tensor_steps(name).empty()
                                                   : !trial.tensor_steps(name, mode).empty();
    if (has) has_steps_.insert({mode, name});
    return has;
  };
  for (const litmus::Mode mode : {litmus::Mode::kEval, litmus::Mode::kTrain, litmus::Mode::kGlobal}) {
    for (const std::string& name : names) {
      if (has_steps(mode, name)) return mode;
    }
  }
  return std::nullopt;
}

std::optional<bool> LossNotDecreasing::EvaluateTensor(const std::string& name, litmus::Mode mode, int64_t mode_step,
                                                      int64_t step) {
  const auto key = std::make_pair(mode, name);
  const auto last = last_eval_.find(key);
  // Cadence: evaluated again only num_steps after its last evaluation. (Checked before the
  // tensor's steps are listed: listing them costs the trial's length, at every step otherwise.)
  if (last != last_eval_.end() && mode_step < last->second + num_steps_) return std::nullopt;
  const litmus::Tensor tensor = base_trial().tensor(name);
  const std::vector<int64_t> steps = tensor.steps(mode);  // mode steps, sorted
  if (!std::binary_search(steps.begin(), steps.end(), mode_step)) return std::nullopt;
  // Baseline: the newest saved step at least num_steps back.
  const auto after = std::upper_bound(steps.begin(), steps.end(), mode_step - num_steps_);
  if (after == steps.begin()) return std::nullopt;
  const int64_t base_step = *std::prev(after);
  double base = 0, current = 0;
  try {
    base = tensor.value(base_step, mode).scalar();
    current = tensor.value(mode_step, mode).scalar();
  } catch (const litmus::TensorUnavailableForStep&) {
    return std::nullopt;  // only a reduction saved, or another worker's value: nothing to compare
  } catch (const litmus::InvalidArgument&) {
    return std::nullopt;  // a string or complex value: not a loss
  }
  if (base == 0) return std::nullopt;
  last_eval_[key] = mode_step;
  const double change_percent = (current - base) / std::abs(base) * 100;
  const bool met = LossConditionMet(base, current, diff_percent_, increase_threshold_percent_);
  // The two sides LossConditionMet compares: the decrease (loss not above its baseline) or the increase.
  report_series(kSeriesLoss, name, step, current);
  if (current > base) {
    report_series(kSeriesIncrease, name, step, (current - base) / std::abs(base) * 100);
  } else {
    report_series(kSeriesDecrease, name, step, (base - current) / std::abs(base) * 100);
  }
  report_detail(name, JsonObject()
                          .Add("base_step", base_step)
                          .Add("base", base)
                          .Add("step", mode_step)
                          .Add("value", current)
                          .Add("change_percent", change_percent)
                          .str());
  if (met) {
    log_info("loss ", name, " at ", litmus::ModeName(mode), " step ", mode_step, " is ", current, ", at step ",
             base_step, " it was ", base, ": change ", change_percent, "% (needs a decrease of at least ",
             diff_percent_, "%, tolerates an increase of at most ", increase_threshold_percent_, "%)");
  }
  return met;
}

bool LossNotDecreasing::invoke_at_step(int64_t step) {
  const std::vector<std::string> names = SelectedScalars();
  const std::optional<litmus::Mode> mode = ChosenMode(names);
  if (!mode) return false;  // no loss saved yet
  if (mode != logged_mode_) {
    log_info("checking losses saved in mode ", litmus::ModeName(*mode));
    logged_mode_ = mode;
  }
  int64_t mode_step = step;
  if (*mode != litmus::Mode::kGlobal) {
    if (base_trial().step_mode(step) != *mode) return false;  // only steps of the chosen mode
    mode_step = base_trial().mode_step(step);
  }
  int64_t violations = 0;
  for (const std::string& name : names) {
    if (EvaluateTensor(name, *mode, mode_step, step).value_or(false)) ++violations;
  }
  if (violations > 0) report_violations(violations);
  return violations > 0;
}

}  // namespace litmus_builtin
