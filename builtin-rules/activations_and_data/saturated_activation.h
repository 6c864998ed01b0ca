// SaturatedActivation (docs/rules/SaturatedActivation.md): fires when, in some tanh or sigmoid layer, more
// than threshold_layer percent of the units are saturated, a unit being saturated when its input
// lies inside (min, max) of its activation for fewer than threshold_inactivity percent of the
// batch. Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "litmus/rule.hpp"
#include "litmus_builtin/selection.hpp"

namespace litmus_builtin {

class SaturatedActivation : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "SaturatedActivation";
  static constexpr std::string_view kDescription =
      "Fires when more than threshold_layer percent of a tanh/sigmoid layer's units are saturated "
      "(input inside the active range for fewer than threshold_inactivity percent of the batch)";
  static constexpr std::string_view kDefaultRegex = ".*tanh_input|.*sigmoid_input";
  static constexpr litmus::ParamSpec kCollectionNames = litmus::ListParam(
      "collection_names", "",
      "collections whose tensors are checked (union with tensor_regex)");
  static constexpr litmus::ParamSpec kTensorRegex = litmus::ListParam(
      "tensor_regex", kDefaultRegex,
      "regexes (searched anywhere in the name) of the activation inputs; each tensor is one layer, "
      "its kind (tanh or sigmoid) taken from its name");
  static constexpr litmus::ParamSpec kThresholdTanh = litmus::ListParam(
      "threshold_tanh", "",
      "DOC-2020 form of the tanh range, \"min,max\" with optional parentheses; "
      "threshold_tanh_min/max given explicitly win");
  static constexpr litmus::ParamSpec kThresholdSigmoid = litmus::ListParam(
      "threshold_sigmoid", "",
      "DOC-2020 form of the sigmoid range, \"min,max\" with optional parentheses; "
      "threshold_sigmoid_min/max given explicitly win");
  static constexpr litmus::ParamSpec kThresholdTanhMin = litmus::FloatParam(
      "threshold_tanh_min", "-9.4999", "a tanh unit is active for inputs above this");
  static constexpr litmus::ParamSpec kThresholdTanhMax = litmus::FloatParam(
      "threshold_tanh_max", "9.4999", "a tanh unit is active for inputs below this");
  static constexpr litmus::ParamSpec kThresholdSigmoidMin = litmus::FloatParam(
      "threshold_sigmoid_min", "-23", "a sigmoid unit is active for inputs above this");
  static constexpr litmus::ParamSpec kThresholdSigmoidMax = litmus::FloatParam(
      "threshold_sigmoid_max", "16.99999", "a sigmoid unit is active for inputs below this");
  static constexpr litmus::ParamSpec kThresholdInactivity = litmus::FloatParam(
      "threshold_inactivity", "1.0",
      "percent of the batch below which a unit's activity makes it saturated");
  static constexpr litmus::ParamSpec kThresholdLayer = litmus::FloatParam(
      "threshold_layer", "50.0", "percent of saturated units above which a layer fires the rule");

  // The series it publishes (ABI 1.3): the share of saturated units it compares, per layer.
  static constexpr std::string_view kSeries = "% saturated units";

  explicit SaturatedActivation(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  // The open interval in which a unit of one activation kind is active.
  struct ActiveRange {
    double min = 0;
    double max = 0;
  };
  // The range from the split keys `min_spec`/`max_spec` and the tuple key `tuple_spec`.
  ActiveRange ReadRange(const litmus::ParamSpec& tuple_spec, const litmus::ParamSpec& min_spec,
                        const litmus::ParamSpec& max_spec) const;

  TensorSelection selection_;
  ActiveRange tanh_;
  ActiveRange sigmoid_;
  double threshold_inactivity_;
  double threshold_layer_;
  // Names warned about once: selected without tanh/sigmoid in the name; holding no real numbers.
  std::set<std::string> unknown_kind_;
  std::set<std::string> non_numeric_;
};

}  // namespace litmus_builtin
