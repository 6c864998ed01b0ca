// Confusion: per-step confusion matrix with column-normalised diagonal and off-diagonal tests
// (docs/rules/Confusion.md).
#include "confusion.h"

#include <algorithm>
#include <map>
#include <vector>

#include "litmus_builtin/class_ids.hpp"
#include "litmus_builtin/param_checks.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {
namespace {

// Dense matrices larger than this are left out of the report (the failing cells still say why).
constexpr int64_t kMaxReportedCategories = 100;
// Failing cells listed in the report, at most.
constexpr size_t kMaxReportedCells = 100;
// Predicted classes whose diagonal share is published as a series of its own.
constexpr int64_t kMaxDiagonalSeries = 32;

std::string StringParamOr(const litmus::Rule& rule, const litmus::ParamSpec& spec) {
  // "None" or "" is "not set": the documented default applies.
  return rule.param_optional_string(spec.name).value_or(std::string(spec.default_value));
}

}  // namespace

Confusion::Confusion(const litmus::RuleArgs& args)
    : Rule(args),
      category_no_(param_optional_int(kCategoryNo.name)),
      labels_(StringParamOr(*this, kLabels)),
      predictions_(StringParamOr(*this, kPredictions)),
      labels_collection_(StringParamOr(*this, kLabelsCollection)),
      predictions_collection_(StringParamOr(*this, kPredictionsCollection)),
      min_diag_(FractionParam(*this, kMinDiag)),
      max_off_diag_(FractionParam(*this, kMaxOffDiag)) {
  if (category_no_ && *category_no_ < 2) ThrowInvalidParam(*this, kCategoryNo, "must be at least 2 (or None)");
  report_threshold(kSeriesOffDiagonal, max_off_diag_, litmus::Fires::kAbove);
  report_recommendation(
      "The model confuses some classes: look at the failing cells, check their labels, add training data "
      "or features that tell them apart, or reweight them in the loss.");
}

std::optional<std::string> Confusion::ResolveOne(const std::string& name, const std::string& collection) {
  // A tensor once saved stays in the trial: a name found is not asked about again.
  if (found_.contains(name)) return name;
  if (base_trial().has_tensor(name)) {
    found_.insert(name);
    return name;
  }
  const std::vector<std::string> members = base_trial().tensor_names({.collection = collection});
  if (members.empty()) return std::nullopt;
  return *std::min_element(members.begin(), members.end());
}

std::optional<std::pair<std::string, std::string>> Confusion::Resolve(int64_t step) {
  std::optional<std::string> labels = ResolveOne(labels_, labels_collection_);
  std::optional<std::string> predictions = ResolveOne(predictions_, predictions_collection_);
  if (!labels || !predictions) return std::nullopt;
  // Names saved at the step come sorted (tensor_names' contract); this costs the step's tensors,
  // not the tensor's whole history as tensor_steps would at every step.
  const std::vector<std::string> at_step = base_trial().tensor_names({.step = step});
  if (!std::binary_search(at_step.begin(), at_step.end(), *labels) ||
      !std::binary_search(at_step.begin(), at_step.end(), *predictions)) {
    return std::nullopt;
  }
  return std::pair(std::move(*labels), std::move(*predictions));
}

void Confusion::set_required_tensors(int64_t step) {
  if (const auto names = Resolve(step)) {
    req_tensors().add(names->first, {step});
    req_tensors().add(names->second, {step});
  }
}

bool Confusion::invoke_at_step(int64_t step) {
  const auto names = Resolve(step);
  if (!names) return false;
  const ClassIdPairs ids =
      PairClassIds(base_trial().tensor(names->first).value(step), ClassIdConversion::kTruncate,
                   base_trial().tensor(names->second).value(step), ClassIdConversion::kTruncate);
  if (!ids.ok()) {
    log_warning("step ", step, " skipped: ", ids.error);
    return false;
  }
  if (ids.labels.empty()) return false;

  // Cells keyed (predicted, label), so that each predicted column is contiguous.
  int64_t categories = category_no_.value_or(0);
  if (!category_no_) {
    for (size_t i = 0; i < ids.labels.size(); ++i) {
      categories = std::max({categories, ids.labels[i] + 1, ids.predictions[i] + 1});
    }
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> cells;
  std::map<int64_t, int64_t> column_sums;
  for (size_t i = 0; i < ids.labels.size(); ++i) {
    const int64_t label = ids.labels[i];
    const int64_t predicted = ids.predictions[i];
    if (label < 0 || label >= categories || predicted < 0 || predicted >= categories) {
      log_warning("step ", step, " skipped: sample ", i, " has label ", label, " and prediction ", predicted,
                  ", outside the class ids 0..", categories - 1,
                  category_no_ ? " (category_no)" : " (ids must not be negative)");
      return false;
    }
    ++cells[{predicted, label}];
    ++column_sums[predicted];
  }

  // [CONFLICT] decision: both tests use the column sum S_i (samples predicted as i); columns
  // without samples are skipped, and zero cells off the diagonal can never exceed max_off_diag.
  std::vector<std::string> failing;
  int64_t violations = 0;
  auto fail = [&](int64_t label, int64_t predicted, double share, std::string_view limit) {
    ++violations;
    if (failing.size() < kMaxReportedCells) {
      failing.push_back(JsonObject()
                            .Add("label", label)
                            .Add("prediction", predicted)
                            .Add("share", share)
                            .Add("limit", litmus::JsonString(limit))
                            .str());
    }
  };
  double largest_off_diagonal = 0;
  for (const auto& [predicted, sum] : column_sums) {
    const auto diagonal = cells.find({predicted, predicted});
    const double diagonal_share =
        static_cast<double>(diagonal == cells.end() ? 0 : diagonal->second) / static_cast<double>(sum);
    // (Only the first classes get a series of their own: a 1000-class matrix would flood the store.)
    if (predicted < kMaxDiagonalSeries) {
      const std::string series = std::string(kSeriesDiagonalPrefix) + std::to_string(predicted);
      report_series(series, step, diagonal_share);
      report_threshold(series, min_diag_, litmus::Fires::kBelow);
    }
    if (diagonal_share < min_diag_) fail(predicted, predicted, diagonal_share, "min_diag");
    for (auto cell = cells.lower_bound({predicted, 0}); cell != cells.end() && cell->first.first == predicted;
         ++cell) {
      const int64_t label = cell->first.second;
      const double share = static_cast<double>(cell->second) / static_cast<double>(sum);
      if (label != predicted) largest_off_diagonal = std::max(largest_off_diagonal, share);
      if (label != predicted && share > max_off_diag_) fail(label, predicted, share, "max_off_diag");
    }
  }
  report_series(kSeriesOffDiagonal, step, largest_off_diagonal);
  if (violations == 0) return false;

  report_violations(violations);
  report_detail("labels_tensor", litmus::JsonString(names->first));
  report_detail("predictions_tensor", litmus::JsonString(names->second));
  report_detail("category_count", categories);
  if (categories <= kMaxReportedCategories) {
    std::vector<std::string> rows;
    for (int64_t label = 0; label < categories; ++label) {
      std::vector<std::string> row;
      for (int64_t predicted = 0; predicted < categories; ++predicted) {
        const auto cell = cells.find({predicted, label});
        row.push_back(JsonNumber(cell == cells.end() ? int64_t{0} : cell->second));
      }
      rows.push_back(JsonArray(row));
    }
    report_detail("matrix", JsonArray(rows));
  }
  report_detail("failing_cells", JsonArray(failing));
  log_info("step ", step, ": ", violations, " cells of the confusion matrix of ", names->first, " and ",
           names->second, " are out of bounds (min_diag ", min_diag_, ", max_off_diag ", max_off_diag_, ")");
  return true;
}

}  // namespace litmus_builtin
