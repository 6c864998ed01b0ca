// DeadRelu (docs/rules/DeadRelu.md): fires when, in some ReLU layer, more than threshold_layer
// percent of the units are dead, a unit being dead when its output is > 0 for fewer than
// threshold_inactivity percent of the batch. Thread-safety: as every litmus::Rule, one thread at a
// time.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "litmus/rule.hpp"
#include "litmus_builtin/selection.hpp"

namespace litmus_builtin {

class DeadRelu : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "DeadRelu";
  static constexpr std::string_view kDescription =
      "Fires when more than threshold_layer percent of a ReLU layer's units are dead (output > 0 "
      "for fewer than threshold_inactivity percent of the batch)";
  static constexpr std::string_view kDefaultRegex = ".*relu_output";
  static constexpr litmus::ParamSpec kTensorRegex = litmus::ListParam(
      "tensor_regex", kDefaultRegex,
      "regexes (searched anywhere in the name) of the ReLU output tensors; each is one layer");
  static constexpr litmus::ParamSpec kThresholdInactivity = litmus::FloatParam(
      "threshold_inactivity", "1.0",
      "percent of the batch below which a unit's activity makes it dead");
  static constexpr litmus::ParamSpec kThresholdLayer = litmus::FloatParam(
      "threshold_layer", "50.0", "percent of dead units above which a layer fires the rule");

  // The series it publishes (ABI 1.3): the share of dead units it compares, per layer.
  static constexpr std::string_view kSeries = "% dead units";

  explicit DeadRelu(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  TensorSelection selection_;
  double threshold_inactivity_;
  double threshold_layer_;
  std::set<std::string> non_numeric_;  // tensors holding no real numbers, warned about once
};

}  // namespace litmus_builtin
