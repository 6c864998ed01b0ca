// WeightUpdateRatio (docs/rules/WeightUpdateRatio.md): fires when, for a weight (collection `weights`), the
// update ratio ||w_s - w_p|| / (||w_p|| + epsilon) against an earlier saved step p is above
// large_threshold or below small_threshold. Only TRAIN steps are used when the trial has any,
// else every step. Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "litmus/rule.hpp"
#include "litmus_builtin/saved_steps.hpp"

namespace litmus_builtin {

class WeightUpdateRatio : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "WeightUpdateRatio";
  static constexpr std::string_view kDescription =
      "Fires when the relative size of a weight update (collection weights, TRAIN steps if any) is "
      "above large_threshold or below small_threshold";
  static constexpr std::string_view kCollection = "weights";
  static constexpr litmus::ParamSpec kNumSteps = litmus::IntParam(
      "num_steps", "None",
      "compare step s with the earliest saved step >= s - num_steps (None: the previous saved "
      "step)");
  static constexpr litmus::ParamSpec kLargeThreshold = litmus::FloatParam(
      "large_threshold", "10.0", "an update ratio above this fires the rule");
  static constexpr litmus::ParamSpec kSmallThreshold = litmus::FloatParam(
      "small_threshold", "0.00000001", "an update ratio below this fires the rule");
  static constexpr litmus::ParamSpec kEpsilon = litmus::FloatParam(
      "epsilon", "0.000000001", "added to the norm of the earlier weights (avoids dividing by 0)");

  // The series it publishes (ABI 1.3): the ratio it compares with both thresholds, per weight.
  static constexpr std::string_view kSeries = "update ratio";

  explicit WeightUpdateRatio(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  // The mode whose steps the rule compares at global step `step`, or nullopt if it does not
  // evaluate that step: TRAIN when the trial has TRAIN steps (then only TRAIN steps count), else
  // GLOBAL (every step).
  std::optional<litmus::Mode> ModeAt(int64_t step);

  std::optional<int64_t> num_steps_;
  double large_threshold_;
  double small_threshold_;
  double epsilon_;
  SavedStepsCache saved_steps_;
  // Whether the trial has had TRAIN steps: once it has, it always will (a trial only grows), so
  // the step list is not asked for again at every EVAL step.
  bool trains_ = false;
  std::set<std::string> skipped_;  // tensors that cannot be compared, warned about once
};

}  // namespace litmus_builtin
