// Overfit: TRAIN/EVAL phases (or XGBoost's paired names) and the consecutive-ratio counter of §3.4.
#include "overfit.h"

#include <numeric>

namespace litmus_builtin {
namespace {

double Mean(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace

Overfit::Overfit(const litmus::RuleArgs& args)
    : Rule(args),
      regexes_(param_list("tensor_regex")),
      start_step_(param_int("start_step")),
      patience_(param_int("patience")),
      ratio_threshold_(param_float("ratio_threshold")) {
  if (start_step_ < 0) throw litmus::InvalidConfig("start_step: expected a step >= 0, got " + *param_raw("start_step"));
  if (patience_ < 1) throw litmus::InvalidConfig("patience: expected an integer >= 1, got " + *param_raw("patience"));
  report_threshold(kSeriesRatio, ratio_threshold_, litmus::Fires::kAbove);
  report_threshold(kSeriesConsecutive, static_cast<double>(patience_), litmus::Fires::kAbove);
  report_recommendation(
      "The validation loss pulls away from the training loss: the model memorizes the training data. "
      "Add regularization (dropout, weight decay), augment or add data, or stop training earlier.");
}

bool Overfit::invoke_at_step(int64_t step) {
  if (step < start_step_) return false;
  const litmus::Trial trial = base_trial();
  const StepLosses losses = LossesAt(trial, LossNamesAt(trial, regexes_, step), step);
  const bool mode_changed = !previous_known_ || losses.mode != previous_mode_;
  previous_mode_ = losses.mode;
  previous_known_ = true;
  switch (losses.mode) {
    case litmus::Mode::kTrain:
      if (mode_changed) new_train_phase_ = true;
      if (losses.train) {
        if (new_train_phase_) train_phase_.clear();
        new_train_phase_ = false;
        train_phase_.push_back(*losses.train);
      }
      return false;
    case litmus::Mode::kEval:
      if (mode_changed) new_eval_phase_ = true;
      if (!losses.validation) return false;
      if (new_eval_phase_) eval_phase_.clear();
      new_eval_phase_ = false;
      eval_phase_.push_back(*losses.validation);
      return Evaluate(step);
    case litmus::Mode::kGlobal:
      // No modes (XGBoost): each step is a training phase and a validation phase of one value.
      if (losses.train) train_phase_ = {*losses.train};
      if (!losses.validation) return false;
      eval_phase_ = {*losses.validation};
      return Evaluate(step);
    case litmus::Mode::kPredict:
      return false;
  }
  return false;
}

bool Overfit::Evaluate(int64_t step) {
  if (train_phase_.empty()) return false;  // no training loss known yet
  const double mean_train = Mean(train_phase_);
  const double mean_val = Mean(eval_phase_);
  if (mean_train == 0) return false;
  const double ratio = (mean_val - mean_train) / mean_train;
  consecutive_ = ratio > ratio_threshold_ ? consecutive_ + 1 : 0;
  report_series(kSeriesTrain, step, mean_train);
  report_series(kSeriesValidation, step, mean_val);
  report_series(kSeriesRatio, step, ratio);
  report_series(kSeriesConsecutive, step, static_cast<double>(consecutive_));
  report_detail("mean_train", mean_train);
  report_detail("mean_val", mean_val);
  report_detail("ratio", ratio);
  report_detail("consecutive", consecutive_);
  if (consecutive_ < patience_) return false;
  log_info("step ", step, ": mean validation loss ", mean_val, " vs mean training loss ", mean_train, ": ratio ", ratio,
           " > ", ratio_threshold_, " for ", consecutive_, " consecutive evaluation(s)");
  report_violations(1);
  return true;
}

}  // namespace litmus_builtin
