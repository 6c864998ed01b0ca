// FeatureImportanceOverweight (docs/rules/FeatureImportanceOverweight.md): an XGBoost rule that
// fires when the `nfeatures` most important features hold more than `threshold` of the feature
// importance saved at a step (the hook's feature_importance/<type>/<feature> scalars; `weight` by
// default). Thread-safety: one instance is used by one thread at a time (the host's contract).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "litmus/rule.hpp"

namespace litmus_builtin {

class FeatureImportanceOverweight : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "FeatureImportanceOverweight";
  static constexpr std::string_view kDescription =
      "Fires when the nfeatures most important features hold more than threshold of the XGBoost "
      "feature importance (feature_importance/weight by default)";
  static constexpr std::string_view kDefaultTensorRegex = ".*feature_importance/weight";
  static constexpr litmus::ParamSpec kThreshold = litmus::FloatParam(
      "threshold", "0.8",
      "fraction (0 to 1) of the total importance the top nfeatures may hold; more fires");
  static constexpr litmus::ParamSpec kNFeatures = litmus::IntParam(
      "nfeatures", "3", "number of most important features whose shares are summed (>= 1)");
  static constexpr litmus::ParamSpec kTensorRegex = litmus::StringParam(
      "tensor_regex", kDefaultTensorRegex,
      "one regex (re.search) selecting the importance scalars of one importance type");

  // The series it publishes (ABI 1.3), of the rule: the share of the importance held by the top
  // nfeatures features (Details' share_sum), which it compares with threshold.
  static constexpr std::string_view kSeries = "top features share";

  // Throws litmus::InvalidConfig naming the key for a value that does not parse, a threshold
  // outside [0, 1], nfeatures < 1 or a regex the host refuses.
  explicit FeatureImportanceOverweight(const litmus::RuleArgs& args);

  // Requires every tensor the regex selects among those saved at `step`.
  void set_required_tensors(int64_t step) override;
  // Renormalises the selected scalars by their sum and sorts them; met if the top nfeatures
  // shares sum to more than threshold. No selected tensor, or a sum that is not positive: not met.
  bool invoke_at_step(int64_t step) override;

 private:
  double threshold_;
  int64_t nfeatures_;
  std::string tensor_regex_;
  // Details describe the last evaluated step until the first firing, then the last firing.
  bool fired_ = false;
  bool logged_all_features_ = false;
  bool logged_unusable_value_ = false;
};

}  // namespace litmus_builtin
