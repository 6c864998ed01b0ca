// Confusion (docs/rules/Confusion.md): builds the confusion matrix of one step's labels and
// predictions and fires when, in some predicted column, the correct share is below min_diag or a
// wrong label's share is above max_off_diag ([CONFLICT] resolved: both tests are normalised by
// the column sum). Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "litmus/rule.hpp"

namespace litmus_builtin {

class Confusion : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "Confusion";
  static constexpr std::string_view kDescription =
      "Fires when a step's confusion matrix, normalised by predicted class, has a diagonal share "
      "below min_diag or an off-diagonal share above max_off_diag";
  static constexpr litmus::ParamSpec kCategoryNo = litmus::IntParam(
      "category_no", "None",
      "number of classes (>= 2); None: the largest id in labels and predictions + 1");
  static constexpr litmus::ParamSpec kLabels = litmus::StringParam(
      "labels", "labels", "name of the labels tensor; if the trial has none, labels_collection is used");
  static constexpr litmus::ParamSpec kPredictions = litmus::StringParam(
      "predictions", "predictions",
      "name of the predictions tensor; if the trial has none, predictions_collection is used");
  static constexpr litmus::ParamSpec kLabelsCollection = litmus::StringParam(
      "labels_collection", "labels", "collection whose first tensor (by name) holds the labels");
  static constexpr litmus::ParamSpec kPredictionsCollection = litmus::StringParam(
      "predictions_collection", "predictions",
      "collection whose first tensor (by name) holds the predictions");
  static constexpr litmus::ParamSpec kMinDiag = litmus::FloatParam(
      "min_diag", "0.9", "smallest allowed share of correct labels among a predicted class (0-1)");
  static constexpr litmus::ParamSpec kMaxOffDiag = litmus::FloatParam(
      "max_off_diag", "0.1", "largest allowed share of one wrong label among a predicted class (0-1)");

  // Series (ABI 1.3), of the rule: per predicted class "diagonal share of class <id>" (compared
  // with min_diag), and the largest off-diagonal share of any column (compared with max_off_diag).
  static constexpr std::string_view kSeriesDiagonalPrefix = "diagonal share of class ";
  static constexpr std::string_view kSeriesOffDiagonal = "largest off-diagonal share";

  explicit Confusion(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  // The (labels, predictions) tensor names, if both resolve and both were saved at `step`.
  std::optional<std::pair<std::string, std::string>> Resolve(int64_t step);
  // `name` if the trial has it, else the first tensor (by name) of `collection`.
  std::optional<std::string> ResolveOne(const std::string& name, const std::string& collection);

  std::optional<int64_t> category_no_;
  std::string labels_;
  std::string predictions_;
  std::string labels_collection_;
  std::string predictions_collection_;
  std::set<std::string> found_;  // names has_tensor found (ResolveOne)
  double min_diag_;
  double max_off_diag_;
};

}  // namespace litmus_builtin
