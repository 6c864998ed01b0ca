// ClassImbalance (docs/rules/ClassImbalance.md): accumulates, over every evaluated step, per-class counts
// of the labels and of the correct predictions; once `samples` labels were seen, fires when the
// largest class outnumbers the smallest by more than threshold_imbalance, or when some class is
// mispredicted more often than threshold_misprediction.
// Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus/rule.hpp"

namespace litmus_builtin {

class ClassImbalance : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "ClassImbalance";
  static constexpr std::string_view kDescription =
      "Fires when, after `samples` labels, the largest class outnumbers the smallest by more than "
      "threshold_imbalance or some class is mispredicted more often than threshold_misprediction";
  static constexpr std::string_view kDefaultLabelsRegex = ".*labels";
  static constexpr std::string_view kDefaultPredictionsRegex = ".*predictions";
  static constexpr litmus::ParamSpec kThresholdImbalance = litmus::FloatParam(
      "threshold_imbalance", "10", "largest allowed ratio between the most and least frequent label");
  static constexpr litmus::ParamSpec kThresholdMisprediction = litmus::FloatParam(
      "threshold_misprediction", "0.7", "largest allowed fraction of a class's samples mispredicted");
  static constexpr litmus::ParamSpec kSamples = litmus::IntParam(
      "samples", "500", "labels to accumulate (over all steps) before deciding");
  static constexpr litmus::ParamSpec kArgmax = litmus::BoolParam(
      "argmax", "False",
      "predictions are scores: take the argmax over their last axis (else round them to ids)");
  static constexpr litmus::ParamSpec kLabelsRegex = litmus::StringParam(
      "labels_regex", kDefaultLabelsRegex, "regex (searched anywhere in the name) of the labels tensors");
  static constexpr litmus::ParamSpec kPredictionsRegex = litmus::StringParam(
      "predictions_regex", kDefaultPredictionsRegex,
      "regex (searched anywhere in the name) of the predictions tensors");

  // Series (ABI 1.3), of the rule, once `samples` samples were seen: the largest to smallest class
  // ratio, and per class "misprediction rate of class <id>" (each compared with its threshold);
  // and the samples seen so far.
  static constexpr std::string_view kSeriesRatio = "imbalance ratio";
  static constexpr std::string_view kSeriesMispredictionPrefix = "misprediction rate of class ";
  static constexpr std::string_view kSeriesSamples = "samples seen";

  explicit ClassImbalance(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  // The labels and predictions tensors saved at a step: both lists sorted by name and paired by
  // position ([INFERRED]); extras of the longer list are left out.
  struct StepPairs {
    std::vector<std::pair<std::string, std::string>> pairs;  // (labels, predictions)
    size_t labels = 0;       // labels tensors found
    size_t predictions = 0;  // predictions tensors found
  };
  StepPairs Pairs(int64_t step);

  double threshold_imbalance_;
  double threshold_misprediction_;
  int64_t samples_;
  bool argmax_;
  std::string labels_regex_;
  std::string predictions_regex_;
  // Accumulated over all evaluated steps, per true class id.
  std::map<int64_t, int64_t> count_;
  std::map<int64_t, int64_t> correct_;
  int64_t total_ = 0;
  bool warned_unpaired_ = false;
};

}  // namespace litmus_builtin
