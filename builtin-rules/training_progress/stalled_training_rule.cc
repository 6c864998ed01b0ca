// StalledTrainingRule: a wall-clock timer reset by every newly discovered step (§3.20).
#include "stalled_training_rule.h"

#include <string>
#include <vector>

#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {

StalledTrainingRule::StalledTrainingRule(const litmus::RuleArgs& args)
    : Rule(args), threshold_s_(param_int("threshold")), last_progress_(Clock::now()) {
  if (threshold_s_ < 0) throw litmus::InvalidConfig("threshold: expected seconds >= 0, got " + *param_raw("threshold"));
  report_threshold(kSeries, static_cast<double>(threshold_s_), litmus::Fires::kAbove);
  report_recommendation(
      "No new step was saved for too long: the training job may hang (a deadlock, a stuck data loader, "
      "a lost worker). Check its logs and resource use; stop it if it does not recover.");
  if (!param_bool("stop_training_on_fire")) return;
  const std::optional<std::string> prefix = param_optional_string("training_job_name_prefix");
  if (!prefix) {
    throw litmus::InvalidConfig("training_job_name_prefix: required when stop_training_on_fire is True");
  }
  // Same algorithm as the StopTraining action (contract §8): the host runs it when this rule fires.
  add_action(JsonObject().Add("name", litmus::JsonString("stoptraining")).Add("training_job_prefix", litmus::JsonString(*prefix)).str());
}

void StalledTrainingRule::SawStep(int64_t step) {
  if (step <= newest_step_) return;
  newest_step_ = step;
  last_progress_ = Clock::now();
}

bool StalledTrainingRule::invoke_at_step(int64_t step) {
  SawStep(step);
  return false;
}

bool StalledTrainingRule::on_poll(int64_t last_step) {
  // The step list as the host's last poll found it: a step not yet evaluated is progress too.
  const std::vector<int64_t> steps = base_trial().steps();
  if (!steps.empty()) SawStep(steps.back());
  const double seconds = std::chrono::duration<double>(Clock::now() - last_progress_).count();
  report_series(kSeries, last_step >= 0 ? last_step : 0, seconds);
  if (seconds <= static_cast<double>(threshold_s_)) return false;
  report_detail("seconds_since_progress", seconds);
  report_detail("last_step", newest_step_ >= 0 ? std::to_string(newest_step_) : std::string("null"));
  log_info("no new step for ", seconds, " s (threshold ", threshold_s_,
           " s); last step seen: ", newest_step_ >= 0 ? std::to_string(newest_step_) : std::string("none"),
           ", reported at step ", last_step >= 0 ? last_step : 0);
  last_progress_ = Clock::now();  // with --keep-going: fire again only after another quiet period
  return true;
}

}  // namespace litmus_builtin
