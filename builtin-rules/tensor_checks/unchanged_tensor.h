// UnchangedTensor (docs/rules/UnchangedTensor.md): fires when a selected tensor's values at its last
// num_steps saved steps (up to and including the current one) are all-close pairwise, i.e. the
// tensor stopped changing. Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "litmus/rule.hpp"
#include "litmus_builtin/allclose.hpp"
#include "litmus_builtin/saved_steps.hpp"
#include "litmus_builtin/selection.hpp"

namespace litmus_builtin {

class UnchangedTensor : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "UnchangedTensor";
  static constexpr std::string_view kDescription =
      "Fires when a selected tensor (default: every tensor saved at the step) is all-close over "
      "its last num_steps saved steps";
  static constexpr litmus::ParamSpec kCollectionNames = litmus::ListParam(
      "collection_names", "",
      "collections whose tensors are checked (union with tensor_regex; none given: every tensor)");
  static constexpr litmus::ParamSpec kTensorRegex = litmus::ListParam(
      "tensor_regex", "",
      "regexes (searched anywhere in the name) of tensors to check (union with collection_names)");
  static constexpr litmus::ParamSpec kNumSteps = litmus::IntParam(
      "num_steps", "3",
      "number of saved steps (>= 2, the current one included) whose values must all be close");
  static constexpr litmus::ParamSpec kRtol = litmus::FloatParam(
      "rtol", "1e-05", "relative tolerance of the comparison (numpy.allclose)");
  static constexpr litmus::ParamSpec kAtol = litmus::FloatParam(
      "atol", "1e-08", "absolute tolerance of the comparison (numpy.allclose)");
  static constexpr litmus::ParamSpec kEqualNan = litmus::BoolParam(
      "equal_nan", "False", "True: NaN counts as equal to NaN");

  // The series it publishes (ABI 1.3), per tensor: 1 when every consecutive pair of its window
  // was all-close (what fires), else 0. The rule compares with rtol/atol, not with a threshold.
  static constexpr std::string_view kSeries = "unchanged over window";

  explicit UnchangedTensor(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  TensorSelection selection_;
  int64_t num_steps_;
  Tolerance tolerance_;
  SavedStepsCache saved_steps_;
  std::set<std::string> incomparable_;  // complex tensors, warned about once
};

}  // namespace litmus_builtin
