// ExplodingTensor (docs/rules/ExplodingTensor.md): fires when a selected tensor holds a NaN, or with
// only_nan False also an infinity. A tensor saved only as reductions is judged by its saved
// reduction values. Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <string_view>

#include "litmus/rule.hpp"
#include "litmus_builtin/selection.hpp"

namespace litmus_builtin {

class ExplodingTensor : public litmus::Rule {
 public:
  // The verdict at a step depends only on that step\'s data (ABI 1.2: a resumed job continues it).
  static constexpr bool stateless = true;
  static constexpr std::string_view kName = "ExplodingTensor";
  static constexpr std::string_view kDescription =
      "Fires when a selected tensor (default: every tensor saved at the step) holds a NaN or, "
      "unless only_nan, an infinity";
  static constexpr litmus::ParamSpec kCollectionNames = litmus::ListParam(
      "collection_names", "",
      "collections whose tensors are checked (union with tensor_regex; none given: every tensor)");
  static constexpr litmus::ParamSpec kTensorRegex = litmus::ListParam(
      "tensor_regex", "",
      "regexes (searched anywhere in the name) of tensors to check (union with collection_names)");
  static constexpr litmus::ParamSpec kOnlyNan = litmus::BoolParam(
      "only_nan", "False", "True: only NaN values fire the rule; False: NaN and +-infinity");

  // Series (ABI 1.3): the counts it compares with 0, per tensor.
  static constexpr std::string_view kSeriesNan = "NaN count";
  static constexpr std::string_view kSeriesInf = "inf count";

  explicit ExplodingTensor(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  // Non-finite counts of one tensor at one step.
  struct Counts {
    int64_t nan = 0;
    int64_t inf = 0;
    bool from_reductions = false;  // counted over the saved reduction values
  };
  Counts CountNonFinite(const litmus::Tensor& tensor, int64_t step) const;

  TensorSelection selection_;
  bool only_nan_;
};

}  // namespace litmus_builtin
