// NLPSequenceRatio: share of each token value per input sequence tensor at a step
// (docs/rules/NLPSequenceRatio.md), with the [INFERRED] pairing of token_values and
// token_thresholds_percent by position.
#include "nlp_sequence_ratio.h"

#include <algorithm>

#include "litmus_builtin/numeric_visit.hpp"
#include "litmus_builtin/regex_check.hpp"
#include "litmus_builtin/param_checks.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {

NLPSequenceRatio::NLPSequenceRatio(const litmus::RuleArgs& args)
    : Rule(args), selection_(TensorSelection::FromParams(*this, "", kTensorRegex.name)) {
  // "None" or "" is "not set": the documented default applies, never "every tensor".
  if (selection_.empty()) selection_.regexes = {std::string(kDefaultRegex)};
  CheckRegexes(*this, kTensorRegex.name, selection_.regexes);

  const std::vector<std::string> texts = param_list(kTokenValues.name);
  const std::vector<double> values = param_float_list(kTokenValues.name);
  const std::vector<double> thresholds = param_float_list(kTokenThresholdsPercent.name);
  if (values.empty()) ThrowInvalidParam(*this, kTokenValues, "needs at least one token value");
  if (thresholds.empty()) ThrowInvalidParam(*this, kTokenThresholdsPercent, "needs at least one percentage");
  for (size_t i = 0; i < thresholds.size(); ++i) {
    if (!(thresholds[i] >= 0.0 && thresholds[i] <= 100.0)) {
      ThrowInvalidParam(*this, kTokenThresholdsPercent,
                      "item " + std::to_string(i + 1) + " must be a percentage between 0 and 100");
    }
  }
  if (thresholds.size() != values.size()) {
    log_warning(kTokenValues.name, " has ", values.size(), " values but ", kTokenThresholdsPercent.name,
                " has ", thresholds.size(), ": ",
                thresholds.size() < values.size() ? "the last threshold is reused for the extra tokens"
                                                  : "the extra thresholds are ignored");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    tokens_.push_back({texts[i], values[i], thresholds[std::min(i, thresholds.size() - 1)]});
    report_threshold(std::string(kSeriesPrefix) + texts[i], tokens_.back().threshold_percent, litmus::Fires::kAbove);
  }
  report_recommendation(
      "Sequences made mostly of one token (often padding or unknown) carry little signal: check the "
      "tokenizer, the vocabulary and the sequence length.");
}

void NLPSequenceRatio::set_required_tensors(int64_t step) {
  for (const std::string_view name : selection_.NameViews(base_trial(), step)) req_tensors().add(name, {step});
}

bool NLPSequenceRatio::invoke_at_step(int64_t step) {
  int64_t violations = 0;
  for (const litmus::Tensor& tensor : req_tensors().get()) {
    const litmus::TensorView value = tensor.value(step);
    if (value.empty()) continue;
    std::vector<int64_t> counts(tokens_.size(), 0);
    const bool numeric = VisitNumeric(value, [&](auto elements) {
      for (const auto element : elements) {
        const double x = static_cast<double>(element);
        for (size_t t = 0; t < tokens_.size(); ++t) counts[t] += x == tokens_[t].value ? 1 : 0;
      }
    });
    if (!numeric) {
      if (non_numeric_.insert(tensor.name()).second) {
        log_warning("tensor ", tensor.name(), " holds no real numbers; skipped");
      }
      continue;
    }
    JsonObject percents;
    bool violated = false;
    for (size_t t = 0; t < tokens_.size(); ++t) {
      const double percent = 100.0 * static_cast<double>(counts[t]) / static_cast<double>(value.size());
      percents.Add(tokens_[t].text, percent);
      report_series(std::string(kSeriesPrefix) + tokens_[t].text, tensor.name(), step, percent);
      if (percent > tokens_[t].threshold_percent) {
        violated = true;
        log_info("step ", step, ": token ", tokens_[t].text, " is ", percent, "% of ", tensor.name(),
                 " (> ", tokens_[t].threshold_percent, "%)");
      }
    }
    if (violated) {
      ++violations;
      report_detail(tensor.name(), percents.str());
    }
  }
  if (violations > 0) report_violations(violations);
  return violations > 0;
}

}  // namespace litmus_builtin
