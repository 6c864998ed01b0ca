// Overfit (docs/rules/Overfit.md): fires when the validation loss runs away from the training
// loss: (mean validation loss of the current EVAL phase - mean training loss of the last TRAIN
// phase) / mean training loss > ratio_threshold at `patience` consecutive evaluations.
// Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/rule.hpp"
#include "litmus_builtin/loss_series.hpp"

namespace litmus_builtin {

class Overfit : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "Overfit";
  static constexpr std::string_view kDescription =
      "Fires when the validation loss exceeds the training loss by more than ratio_threshold (relative) "
      "for patience consecutive evaluations";
  static constexpr litmus::ParamSpec kTensorRegex =
      litmus::ListParam("tensor_regex", "None",
                        "regexes of the scalar loss tensors (default: the losses collection; in a trial without modes, "
                        "train*/validation* names are paired)");
  static constexpr litmus::ParamSpec kStartStep =
      litmus::IntParam("start_step", "0", "first global step considered (the same key also makes the job start there)");
  static constexpr litmus::ParamSpec kPatience =
      litmus::IntParam("patience", "1", "consecutive evaluations over ratio_threshold needed to fire");
  static constexpr litmus::ParamSpec kRatioThreshold =
      litmus::FloatParam("ratio_threshold", "0.1", "largest tolerated (validation - training) / training loss ratio");

  // Series (ABI 1.3), of the rule: the ratio it compares with ratio_threshold, and the count of
  // consecutive evaluations above it (fires at patience); the two means the ratio is made of.
  static constexpr std::string_view kSeriesRatio = "ratio";
  static constexpr std::string_view kSeriesConsecutive = "consecutive";
  static constexpr std::string_view kSeriesTrain = "mean training loss";
  static constexpr std::string_view kSeriesValidation = "mean validation loss";

  explicit Overfit(const litmus::RuleArgs& args);

  bool invoke_at_step(int64_t step) override;

 private:
  // One evaluation at an EVAL (or paired GLOBAL) step; true when met.
  bool Evaluate(int64_t step);

  std::vector<std::string> regexes_;
  int64_t start_step_;
  int64_t patience_;
  double ratio_threshold_;
  // Phases (runs of consecutive saved steps of one mode). A new phase replaces the values of the
  // previous phase of its mode at its first loss value.
  litmus::Mode previous_mode_ = litmus::Mode::kGlobal;
  bool previous_known_ = false;
  bool new_train_phase_ = true;
  bool new_eval_phase_ = true;
  std::vector<double> train_phase_;  // training losses of the most recent TRAIN phase
  std::vector<double> eval_phase_;   // validation losses of the current EVAL phase so far
  int64_t consecutive_ = 0;
};

}  // namespace litmus_builtin
