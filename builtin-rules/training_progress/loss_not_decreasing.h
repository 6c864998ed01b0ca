// LossNotDecreasing (docs/rules/LossNotDecreasing.md): fires when a scalar loss did not go down by at least
// diff_percent percent against its value num_steps (mode) steps earlier, or rose by more than
// increase_threshold_percent. Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus/rule.hpp"
#include "litmus_builtin/loss_series.hpp"

namespace litmus_builtin {

// The decision of step 5 of §3.3 for one loss tensor, kept in one function so that the reading
// of the two documented sentences can be flipped in one place: a loss that went up is met only
// when it rose by more than increase_threshold_percent; otherwise it is met when it went down by
// less than diff_percent. (The alternative reading, "met whenever the decrease is below
// diff_percent", differs only for rises in (0, increase_threshold_percent].)
// REQUIRES: base != 0.
bool LossConditionMet(double base, double current, double diff_percent, double increase_threshold_percent);

class LossNotDecreasing : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "LossNotDecreasing";
  static constexpr std::string_view kDescription =
      "Fires when a loss does not decrease by diff_percent percent over num_steps steps (or rises by "
      "more than increase_threshold_percent)";
  static constexpr litmus::ParamSpec kCollectionNames =
      litmus::ListParam("collection_names", "None", "collections whose scalar tensors are checked as losses");
  static constexpr litmus::ParamSpec kTensorRegex = litmus::ListParam(
      "tensor_regex", "None", "regexes (searched anywhere in the name) of scalar loss tensors to check");
  static constexpr litmus::ParamSpec kUseLossesCollection =
      litmus::BoolParam("use_losses_collection", "True", "also check the scalar tensors of the 'losses' collection");
  static constexpr litmus::ParamSpec kNumSteps = litmus::IntParam(
      "num_steps", "10", "minimum distance in (mode) steps between two evaluations of a loss and its baseline");
  static constexpr litmus::ParamSpec kDiffPercent = litmus::FloatParam(
      "diff_percent", "0.1", "minimum decrease in percent (0-100) the loss must achieve over num_steps");
  static constexpr litmus::ParamSpec kIncreaseThresholdPercent = litmus::FloatParam(
      "increase_threshold_percent", "5", "maximum increase in percent (0-100) tolerated before a rising loss fires");
  static constexpr litmus::ParamSpec kMode = litmus::ModeParam(
      "mode", "None", "mode whose steps are checked: EVAL, TRAIN or GLOBAL; unset: EVAL, else TRAIN, else GLOBAL");

  // Series (ABI 1.3), per loss: its value, and the change against its baseline num_steps back,
  // as a decrease (fires below diff_percent) or an increase (fires above increase_threshold_percent).
  static constexpr std::string_view kSeriesLoss = "loss";
  static constexpr std::string_view kSeriesDecrease = "decrease %";
  static constexpr std::string_view kSeriesIncrease = "increase %";

  explicit LossNotDecreasing(const litmus::RuleArgs& args);

  bool invoke_at_step(int64_t step) override;

 private:
  // The selected scalar loss tensors: losses collection (if use_losses_collection) ∪
  // collection_names ∪ tensor_regex matches, or every scalar tensor of the trial when that is
  // empty.
  std::vector<std::string> SelectedScalars();
  // The mode to work on: `mode` if given, else the first of EVAL, TRAIN, GLOBAL in which a
  // selected tensor has steps (nullopt: none has any yet).
  std::optional<litmus::Mode> ChosenMode(const std::vector<std::string>& names);
  // Evaluates one tensor at mode step m; true when met. nullopt when not evaluated (no baseline,
  // too soon after the last evaluation, base == 0, or no value).
  // `step`: the global step being evaluated (where the series values are published).
  std::optional<bool> EvaluateTensor(const std::string& name, litmus::Mode mode, int64_t mode_step, int64_t step);

  std::vector<std::string> collections_;  // losses (if used) + collection_names
  std::vector<std::string> regexes_;
  int64_t num_steps_;
  double diff_percent_;
  double increase_threshold_percent_;
  std::optional<litmus::Mode> mode_;  // the `mode` parameter
  ScalarTensors scalars_;
  bool fallback_logged_ = false;
  std::optional<litmus::Mode> logged_mode_;
  // last_eval(t), per (mode, tensor): the mode step of the tensor's last evaluation.
  std::map<std::pair<litmus::Mode, std::string>, int64_t> last_eval_;
  // (mode, tensor) pairs known to have steps (ChosenMode).
  std::set<std::pair<litmus::Mode, std::string>> has_steps_;
};

}  // namespace litmus_builtin
