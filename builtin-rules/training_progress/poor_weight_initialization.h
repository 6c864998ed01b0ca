// PoorWeightInitialization (docs/rules/PoorWeightInitialization.md): during the first `steps`
// global steps, fires when the variances of the activation inputs of the layers spread by more than
// `threshold` (max / min), when some gradient's values are packed into less than
// `distribution_range` (p95 - p5), or when the training loss has not decreased over the last
// `patience` saved steps. Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/rule.hpp"

namespace litmus_builtin {

// The q-th percentile (0-100) of `values` with linear interpolation between closest ranks (numpy's
// default). REQUIRES: values non-empty and free of NaN. Reorders values.
double Percentile(std::vector<double>& values, double q);

class PoorWeightInitialization : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "PoorWeightInitialization";
  static constexpr std::string_view kDescription =
      "Fires in the first steps when layer input variances spread too far, gradients are too narrow, or the "
      "loss does not decrease";
  static constexpr litmus::ParamSpec kActivationInputsRegex = litmus::ListParam(
      "activation_inputs_regex", ".*relu_input", "regexes of the activation input tensors; each tensor is one layer");
  static constexpr litmus::ParamSpec kThreshold = litmus::FloatParam(
      "threshold", "10.0", "largest tolerated ratio of the largest to the smallest layer input variance");
  static constexpr litmus::ParamSpec kDistributionRange =
      litmus::FloatParam("distribution_range", "0.001", "smallest tolerated spread (p95 - p5) of a gradient's values");
  static constexpr litmus::ParamSpec kPatience =
      litmus::IntParam("patience", "5", "saved steps over which the training loss must decrease");
  static constexpr litmus::ParamSpec kSteps =
      litmus::IntParam("steps", "10", "number of first global steps the rule analyzes");

  // Series (ABI 1.3), of the rule: the three values it compares (the loss trend fires when no
  // value of the last `patience` steps is below the reference, not against a threshold).
  static constexpr std::string_view kSeriesVarianceRatio = "activation input variance ratio";
  static constexpr std::string_view kSeriesGradientSpread = "min gradient spread (p95 - p5)";
  static constexpr std::string_view kSeriesLossTrend = "loss change over patience";

  explicit PoorWeightInitialization(const litmus::RuleArgs& args);

  bool invoke_at_step(int64_t step) override;

 private:
  // Check 1: max / min variance over the layers with variance > 0 (nullopt: no such layer).
  std::optional<double> VarianceRatio(int64_t step);
  // Check 2: the smallest p95 - p5 over the gradients with at least two values (nullopt: none).
  std::optional<double> MinGradientSpread(int64_t step);
  // Check 3: records the training loss of the step; returns the last loss minus the loss
  // `patience` saved steps earlier once that many exist, and whether none of the last `patience`
  // losses went below that earlier one.
  std::optional<std::pair<double, bool>> LossTrend(int64_t step);

  std::vector<std::string> activation_regexes_;
  double threshold_;
  double distribution_range_;
  int64_t patience_;
  int64_t steps_;
  std::vector<double> losses_;  // training loss per saved step inside the window
  bool window_end_logged_ = false;
};

}  // namespace litmus_builtin
