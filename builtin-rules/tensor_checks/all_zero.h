// AllZero (docs/rules/AllZero.md): fires when at least `threshold` percent of a selected tensor's
// elements are zero (default 100: entirely zero). Thread-safety: as every litmus::Rule, one thread
// at a time.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "litmus/rule.hpp"
#include "litmus_builtin/selection.hpp"

namespace litmus_builtin {

class AllZero : public litmus::Rule {
 public:
  // The verdict at a step depends only on that step\'s data (ABI 1.2: a resumed job continues it).
  static constexpr bool stateless = true;
  static constexpr std::string_view kName = "AllZero";
  static constexpr std::string_view kDescription =
      "Fires when at least threshold percent of a selected tensor's elements (default: every "
      "tensor saved at the step) are zero";
  static constexpr litmus::ParamSpec kCollectionNames = litmus::ListParam(
      "collection_names", "",
      "collections whose tensors are checked (union with tensor_regex; none given: every tensor)");
  static constexpr litmus::ParamSpec kTensorRegex = litmus::ListParam(
      "tensor_regex", "",
      "regexes (searched anywhere in the name) of tensors to check (union with collection_names)");
  static constexpr litmus::ParamSpec kThreshold = litmus::FloatParam(
      "threshold", "100",
      "percent of zero elements (0-100) at or above which a tensor fires the rule");

  // Series (ABI 1.3): the share of zeros it compares, per tensor; at a threshold of 100 % a
  // float tensor is first judged by its max |x| (all zero iff 0), published as such.
  static constexpr std::string_view kSeriesPercent = "% zero";
  static constexpr std::string_view kSeriesAbsMax = "max |x|";

  explicit AllZero(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  TensorSelection selection_;
  double threshold_;
  std::set<std::string> non_numeric_;  // tensors holding no real numbers, warned about once
};

}  // namespace litmus_builtin
