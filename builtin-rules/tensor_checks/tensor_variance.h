// TensorVariance (docs/rules/TensorVariance.md): fires when the population variance of a selected tensor
// is above max_threshold or below min_threshold (each optional; with neither the rule cannot fire
// and says so at start). Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "litmus/rule.hpp"
#include "litmus_builtin/selection.hpp"

namespace litmus_builtin {

class TensorVariance : public litmus::Rule {
 public:
  // The verdict at a step depends only on that step\'s data (ABI 1.2: a resumed job continues it).
  static constexpr bool stateless = true;
  static constexpr std::string_view kName = "TensorVariance";
  static constexpr std::string_view kDescription =
      "Fires when the variance of a selected tensor (default: every tensor saved at the step) is "
      "above max_threshold or below min_threshold";
  static constexpr litmus::ParamSpec kCollectionNames = litmus::ListParam(
      "collection_names", "",
      "collections whose tensors are checked (union with tensor_regex; none given: every tensor)");
  static constexpr litmus::ParamSpec kTensorRegex = litmus::ListParam(
      "tensor_regex", "",
      "regexes (searched anywhere in the name) of tensors to check (union with collection_names)");
  static constexpr litmus::ParamSpec kMaxThreshold = litmus::FloatParam(
      "max_threshold", "None", "fires when a variance is above this (None: no upper bound)");
  static constexpr litmus::ParamSpec kMinThreshold = litmus::FloatParam(
      "min_threshold", "None", "fires when a variance is below this (None: no lower bound)");

  // The series it publishes (ABI 1.3): the variance it compares with both bounds, per tensor.
  static constexpr std::string_view kSeries = "variance";

  explicit TensorVariance(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  TensorSelection selection_;
  std::optional<double> max_threshold_;
  std::optional<double> min_threshold_;
  std::set<std::string> undefined_;  // tensors whose variance is undefined, warned about once
};

}  // namespace litmus_builtin
