// Overtraining (docs/rules/Overtraining.md): fires when neither the training nor the validation loss
// improves any more: no new best (by more than delta) for patience_train training observations or
// patience_validation validation observations (an early-stopping signal).
// Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "litmus/rule.hpp"
#include "litmus_builtin/loss_series.hpp"

namespace litmus_builtin {

class Overtraining : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "Overtraining";
  static constexpr std::string_view kDescription =
      "Fires when the training loss has not improved for patience_train saved steps or the validation loss "
      "for patience_validation saved steps";
  static constexpr litmus::ParamSpec kPatienceTrain =
      litmus::IntParam("patience_train", "5", "saved training-loss observations without a new best before firing");
  static constexpr litmus::ParamSpec kPatienceValidation = litmus::IntParam(
      "patience_validation", "10", "saved validation-loss observations without a new best before firing");
  static constexpr litmus::ParamSpec kDelta =
      litmus::FloatParam("delta", "0.01", "minimum absolute improvement of a loss for it to count as a new best");

  // Series (ABI 1.3), of the rule: each loss, and the saved steps since its best (fires at its
  // patience).
  static constexpr std::string_view kSeriesTrain = "training loss";
  static constexpr std::string_view kSeriesValidation = "validation loss";
  static constexpr std::string_view kSeriesSinceTrain = "steps since best training loss";
  static constexpr std::string_view kSeriesSinceValidation = "steps since best validation loss";

  explicit Overtraining(const litmus::RuleArgs& args);

  bool invoke_at_step(int64_t step) override;

 private:
  // One loss series: its best value so far and the observations since it was set.
  struct Series {
    double best = std::numeric_limits<double>::infinity();
    int64_t since_best = 0;
    bool observed = false;
    void Observe(double value, double delta);
    std::optional<double> best_or_none() const { return observed ? std::optional<double>(best) : std::nullopt; }
  };

  int64_t patience_train_;
  int64_t patience_validation_;
  double delta_;
  Series train_;
  Series validation_;
};

}  // namespace litmus_builtin
