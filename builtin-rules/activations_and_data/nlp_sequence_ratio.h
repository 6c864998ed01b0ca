// NLPSequenceRatio (docs/rules/NLPSequenceRatio.md): fires when, in some input sequence tensor, the share
// of a token value (padding, unknown, ...) exceeds its threshold percentage.
// Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/rule.hpp"
#include "litmus_builtin/selection.hpp"

namespace litmus_builtin {

class NLPSequenceRatio : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "NLPSequenceRatio";
  static constexpr std::string_view kDescription =
      "Fires when the share of a token value (e.g. padding 0) in an input sequence tensor exceeds "
      "its threshold percentage";
  static constexpr std::string_view kDefaultRegex = ".*embedding0_input_0";
  static constexpr litmus::ParamSpec kTensorRegex = litmus::ListParam(
      "tensor_regex", kDefaultRegex,
      "regexes (searched anywhere in the name) of the input sequence tensors");
  static constexpr litmus::ParamSpec kTokenValues = litmus::ListParam(
      "token_values", "0", "token values to count (numbers, compared after casting to double)");
  static constexpr litmus::ParamSpec kTokenThresholdsPercent = litmus::ListParam(
      "token_thresholds_percent", "50",
      "per token, the percentage of elements above which the rule fires; paired by position, "
      "the last one reused for extra tokens");

  // Series (ABI 1.3), per tensor: "% token <value>" for each token value, the share it compares
  // with that token's threshold.
  static constexpr std::string_view kSeriesPrefix = "% token ";

  explicit NLPSequenceRatio(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  struct Token {
    std::string text;  // as given, the key in the report
    double value;
    double threshold_percent;
  };

  TensorSelection selection_;
  std::vector<Token> tokens_;
  std::set<std::string> non_numeric_;  // tensors holding no real numbers, warned about once
};

}  // namespace litmus_builtin
