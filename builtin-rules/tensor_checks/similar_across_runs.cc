// SimilarAcrossRuns: every selected tensor of the base trial saved at the step is compared with
// the same tensor at the same global step of each other trial that saved it there
// (docs/rules/SimilarAcrossRuns.md). Tolerances are numpy.allclose's defaults [INFERRED].
#include "similar_across_runs.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus_builtin/regex_check.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {
namespace {

constexpr Tolerance kTolerance{.rtol = 1e-5, .atol = 1e-8, .equal_nan = false};

std::string ShapeText(std::span<const int64_t> shape) {
  std::vector<std::string> dims;
  for (const int64_t d : shape) dims.push_back(JsonNumber(d));
  return JsonArray(dims);
}

}  // namespace

SimilarAcrossRuns::SimilarAcrossRuns(const litmus::RuleArgs& args)
    : Rule(args),
      selection_(TensorSelection::FromParams(*this, kCollectionNames.name, kTensorRegex.name)) {
  if (trial_count() < 2) {
    // other_trials is a runner key (docs/job-contract.md §3): the trials reach the rule opened.
    throw litmus::InvalidConfig(
        "other_trials: SimilarAcrossRuns compares the base trial with another trial, and none was given "
        "(litmus run --other-trial PATH, or other_trials / other_trial_0 in the rule parameters)");
  }
  CheckRegexes(*this, kTensorRegex.name, selection_.regexes);
  if (selection_.empty()) {
    log_info("no collection_names or tensor_regex given: comparing every tensor saved at each step");
  }
  report_recommendation(
      "Two runs that should match differ: look for nondeterminism (seeds, data order, cuDNN), or for "
      "a change in code, data or hyperparameters between the runs.");
}

void SimilarAcrossRuns::set_required_tensors(int64_t step) {
  // (Names as views, valid until this call returns: it runs at every step, for every tensor.)
  const std::vector<std::string_view> names = selection_.NameViews(base_trial(), step);  // sorted
  std::vector<std::string_view> compared;
  for (const litmus::Trial& other : other_trials()) {
    // Only tensors the other trial saved at the same global step: missing there is skipped.
    const std::vector<std::string_view> there = other.tensor_name_views({.step = step});  // sorted
    for (const std::string_view name : names) {
      if (!std::binary_search(there.begin(), there.end(), name)) continue;
      req_tensors().add(name, {step}, other);
      compared.push_back(name);
    }
  }
  // The base trial's, sorted and once each (with several other trials, the union).
  std::sort(compared.begin(), compared.end());
  compared.erase(std::unique(compared.begin(), compared.end()), compared.end());
  for (const std::string_view name : compared) req_tensors().add(name, {step});
}

bool SimilarAcrossRuns::invoke_at_step(int64_t step) {
  // Per other trial, the tensors it is compared on at this step: their handles, and their names
  // sorted (views of the handles' names) with the handle of each.
  struct Other {
    std::vector<litmus::Tensor> tensors;
    std::vector<std::pair<std::string_view, size_t>> names;
    const litmus::Tensor* find(std::string_view name) const {
      const auto it = std::lower_bound(names.begin(), names.end(), std::pair<std::string_view, size_t>(name, 0));
      return it != names.end() && it->first == name ? &tensors[it->second] : nullptr;
    }
  };
  std::vector<Other> others;
  for (const litmus::Trial& trial : other_trials()) {
    Other& other = others.emplace_back(Other{req_tensors().get(trial), {}});
    for (size_t i = 0; i < other.tensors.size(); ++i) other.names.emplace_back(other.tensors[i].name(), i);
    std::sort(other.names.begin(), other.names.end());
  }
  int64_t violations = 0;
  std::string first;  // the first violating tensor, for the log line
  for (const litmus::Tensor& tensor : req_tensors().get()) {
    // JSON text of the difference reported: the largest max |a - b| over the other trials (NaN
    // first: it is the most telling), else the first shape or string difference.
    std::optional<std::string> difference;
    double largest = -1;
    bool nan_found = false;
    bool compared = false;
    for (const Other& other : others) {
      const litmus::Tensor* there = other.find(tensor.name());
      if (there == nullptr) continue;
      compared = true;
      const litmus::TensorView base = tensor.value(step);
      const litmus::TensorView reference = there->value(step);
      const Comparison comparison = CompareValues(base, reference, kTolerance);
      if (comparison == Comparison::kIncomparable) {
        if (incomparable_.insert(tensor.name()).second) {
          log_warning("tensor ", tensor.name(), " holds complex values, which cannot be compared; skipped");
        }
        continue;
      }
      if (comparison == Comparison::kClose) continue;
      const std::optional<double> max_abs_diff = MaxAbsDifference(base, reference);
      if (!max_abs_diff) {  // shapes differ, or strings
        if (!difference) {
          difference = base.is_string() || reference.is_string()
                           ? litmus::JsonString("values differ")
                           : litmus::JsonString("shape " + ShapeText(base.shape()) + " vs " +
                                                ShapeText(reference.shape()));
        }
      } else if (!nan_found && (std::isnan(*max_abs_diff) || *max_abs_diff > largest)) {
        nan_found = std::isnan(*max_abs_diff);
        largest = *max_abs_diff;
        difference = JsonNumber(*max_abs_diff);
      }
    }
    if (compared) {
      double published = 0;  // all close
      if (difference) published = nan_found ? std::nan("") : largest >= 0 ? largest : HUGE_VAL;
      report_series(kSeries, tensor.name(), step, published);
    }
    if (!difference) continue;
    report_detail(tensor.name(), *difference);
    if (violations++ == 0) first = tensor.name() + " (" + *difference + ")";
  }
  if (violations == 0) return false;
  report_violations(violations);
  log_info("step ", step, ": ", violations, " tensor(s) differ from the other trial, first ", first);
  return true;
}

}  // namespace litmus_builtin
