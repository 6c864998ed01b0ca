// Overtraining: best-so-far and since-best counters per series (§3.5).
#include "overtraining.h"

#include <string>
#include <utility>
#include <vector>

namespace litmus_builtin {

void Overtraining::Series::Observe(double value, double delta) {
  observed = true;
  if (value < best - delta) {  // an absolute improvement of more than delta (the first value always is)
    best = value;
    since_best = 0;
  } else {
    ++since_best;
  }
}

Overtraining::Overtraining(const litmus::RuleArgs& args)
    : Rule(args),
      patience_train_(param_int("patience_train")),
      patience_validation_(param_int("patience_validation")),
      delta_(param_float("delta")) {
  for (const auto& [key, value] :
       {std::pair{"patience_train", patience_train_}, std::pair{"patience_validation", patience_validation_}}) {
    if (value < 1) throw litmus::InvalidConfig(std::string(key) + ": expected an integer >= 1, got " + *param_raw(key));
  }
  if (!(delta_ >= 0)) throw litmus::InvalidConfig("delta: expected a number >= 0, got " + *param_raw("delta"));
  report_threshold(kSeriesSinceTrain, static_cast<double>(patience_train_), litmus::Fires::kAbove);
  report_threshold(kSeriesSinceValidation, static_cast<double>(patience_validation_), litmus::Fires::kAbove);
  report_recommendation(
      "The losses no longer improve: further training wastes compute and may overfit. Stop training "
      "(early stopping), or change the learning rate schedule.");
}

bool Overtraining::invoke_at_step(int64_t step) {
  const litmus::Trial trial = base_trial();
  // The losses collection (no selection parameter is documented), else XGBoost's metrics.
  const StepLosses losses = LossesAt(trial, LossNamesAt(trial, {}, step), step);
  if (!losses.train && !losses.validation) return false;
  if (losses.train) train_.Observe(*losses.train, delta_);
  if (losses.validation) validation_.Observe(*losses.validation, delta_);
  if (losses.train) {
    report_series(kSeriesTrain, step, *losses.train);
    report_series(kSeriesSinceTrain, step, static_cast<double>(train_.since_best));
  }
  if (losses.validation) {
    report_series(kSeriesValidation, step, *losses.validation);
    report_series(kSeriesSinceValidation, step, static_cast<double>(validation_.since_best));
  }
  if (const auto best = train_.best_or_none()) report_detail("best_train", *best);
  report_detail("since_train", train_.since_best);
  if (const auto best = validation_.best_or_none()) report_detail("best_val", *best);
  report_detail("since_val", validation_.since_best);
  const bool train_stalled = train_.since_best >= patience_train_;
  const bool validation_stalled = validation_.since_best >= patience_validation_;
  if (!train_stalled && !validation_stalled) return false;
  if (train_stalled) {
    log_info("step ", step, ": training loss has not improved by more than ", delta_, " on its best ", train_.best,
             " for ", train_.since_best, " saved steps (patience_train ", patience_train_, ")");
  }
  if (validation_stalled) {
    log_info("step ", step, ": validation loss has not improved by more than ", delta_, " on its best ",
             validation_.best, " for ", validation_.since_best, " saved steps (patience_validation ",
             patience_validation_, ")");
  }
  report_violations((train_stalled ? 1 : 0) + (validation_stalled ? 1 : 0));
  return true;
}

}  // namespace litmus_builtin
