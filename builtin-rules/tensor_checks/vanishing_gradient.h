// VanishingGradient (docs/rules/VanishingGradient.md): fires when the mean absolute value of any gradient
// (collection `gradients`) is strictly below `threshold`. Thread-safety: as every litmus::Rule, one
// thread at a time.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "litmus/rule.hpp"

namespace litmus_builtin {

class VanishingGradient : public litmus::Rule {
 public:
  // The verdict at a step depends only on that step\'s data (ABI 1.2: a resumed job continues it).
  static constexpr bool stateless = true;
  static constexpr std::string_view kName = "VanishingGradient";
  static constexpr std::string_view kDescription =
      "Fires when the mean absolute value of any gradient (collection gradients) is below threshold";
  static constexpr std::string_view kCollection = "gradients";
  // The series it publishes (ABI 1.3): the value it compares, per gradient.
  static constexpr std::string_view kSeries = "mean |gradient|";
  static constexpr litmus::ParamSpec kThreshold = litmus::FloatParam(
      "threshold", "0.0000001",
      "a gradient whose mean absolute value is below this (strictly) has vanished");

  explicit VanishingGradient(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  double threshold_;
  std::set<std::string> undefined_;  // tensors whose mean |x| is undefined, warned about once
};

}  // namespace litmus_builtin
