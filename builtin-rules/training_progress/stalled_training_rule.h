// StalledTrainingRule (docs/rules/StalledTrainingRule.md): fires when the training job produced no new step
// for `threshold` seconds. Time-based: it relies on the host calling on_poll (ABI 1.1) while no
// step arrives, also before the trial's first collections file exists. With stop_training_on_fire
// it registers a StopTraining action for training_job_name_prefix (docs/job-contract.md §8).
// Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "litmus/rule.hpp"

namespace litmus_builtin {

class StalledTrainingRule : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "StalledTrainingRule";
  static constexpr std::string_view kDescription =
      "Fires when the training job has written no new step for threshold seconds";
  static constexpr litmus::ParamSpec kThreshold =
      litmus::IntParam("threshold", "1800", "seconds without a new step after which the rule fires");
  static constexpr litmus::ParamSpec kStopTrainingOnFire = litmus::BoolParam(
      "stop_training_on_fire", "False", "stop the training job (StopTraining action) when the rule fires");
  static constexpr litmus::ParamSpec kTrainingJobNamePrefix = litmus::StringParam(
      "training_job_name_prefix", "None",
      "prefix of the training job to stop; needed with stop_training_on_fire (stops only a unique match)");

  // The series it publishes (ABI 1.3), at every poll, at the last evaluated step (0 before any):
  // the seconds since the last new step, compared with threshold.
  static constexpr std::string_view kSeries = "seconds since progress";

  explicit StalledTrainingRule(const litmus::RuleArgs& args);

  // A new step is progress.
  bool invoke_at_step(int64_t step) override;
  // No new step: progress if the trial's step list grew, else met once threshold seconds passed.
  bool on_poll(int64_t last_step) override;

 private:
  using Clock = std::chrono::steady_clock;
  void SawStep(int64_t step);

  int64_t threshold_s_;
  Clock::time_point last_progress_;  // the rule's start, then the discovery of the newest step
  int64_t newest_step_ = -1;         // newest global step seen, -1 before the first
};

}  // namespace litmus_builtin
