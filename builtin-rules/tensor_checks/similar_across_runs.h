// SimilarAcrossRuns (docs/rules/SimilarAcrossRuns.md): fires when a selected tensor of the base trial differs
// (shape, or values not all-close) from the same tensor at the same global step of another trial.
// Needs at least one other trial (--other-trial, other_trials / other_trial_<n>); refuses to start
// without. Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "litmus/rule.hpp"
#include "litmus_builtin/allclose.hpp"
#include "litmus_builtin/selection.hpp"

namespace litmus_builtin {

class SimilarAcrossRuns : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "SimilarAcrossRuns";
  static constexpr std::string_view kDescription =
      "Fires when a selected tensor (default: every tensor) differs from the same tensor at the "
      "same step of another trial (give it with --other-trial or other_trials)";
  static constexpr litmus::ParamSpec kCollectionNames = litmus::ListParam(
      "collection_names", "",
      "collections whose tensors are compared (union with tensor_regex; none given: every tensor)");
  static constexpr litmus::ParamSpec kTensorRegex = litmus::ListParam(
      "tensor_regex", "",
      "regexes (searched anywhere in the name) of tensors to compare (union with collection_names)");

  // The series it publishes (ABI 1.3), per tensor: the largest max |a - b| over the other trials
  // where they differ beyond the tolerances, 0 where all are close (NaN: a NaN difference; inf:
  // shapes or strings differ).
  static constexpr std::string_view kSeries = "max |difference|";

  explicit SimilarAcrossRuns(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  TensorSelection selection_;
  std::set<std::string> incomparable_;  // complex tensors, warned about once
};

}  // namespace litmus_builtin
