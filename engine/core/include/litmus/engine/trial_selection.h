// TrialSelection: which tensors and steps `litmus inspect` describes (--tensor, --collection,
// --mode, --step), and SelectedTrial, that selection resolved against one trial's catalog (a
// Trial, or a TrialOutline: SelectedOutline). Thread-compatible; resolve and query from the
// thread that owns the Trial (trial.h).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/status.h"

namespace litmus {

// A half-open range of steps [begin, end).
struct StepRange {
  int64_t begin = std::numeric_limits<int64_t>::min();
  int64_t end = std::numeric_limits<int64_t>::max();
  bool Contains(int64_t step) const { return step >= begin && step < end; }
};

// Parses "N" ([N, N+1)), "A:B" ([A, B)), "A:" ([A, ...)) and ":B" ([..., B)), Python's slice
// notation. Steps are non-negative decimal integers. InvalidArgument, naming the text, for
// anything else and for a range that holds no step (A >= B).
StatusOr<StepRange> ParseStepRange(std::string_view text);
// "5", "10:20", "10:", ":20" (the form ParseStepRange reads).
std::string StepRangeText(const StepRange& range);

struct TrialSelection {
  // A tensor is selected if its name matches any of these Python regexes anywhere (re.search,
  // as smdebug's collections and rules match names) ...
  std::vector<std::string> tensor_regex;
  // ... and (when both are given) it is a member of any of these collections.
  std::vector<std::string> collections;
  // Only steps saved in this mode. kGlobal selects every step, as smdebug's steps(mode=GLOBAL).
  std::optional<Mode> mode;
  // Only steps in this range: mode steps of `mode` when a mode other than kGlobal is given (as
  // smdebug's tensor.value(step, mode=M) counts them), global steps otherwise.
  std::optional<StepRange> steps;

  bool SelectsEverything() const {
    return tensor_regex.empty() && collections.empty() && !mode && !steps;
  }
  bool FiltersSteps() const { return (mode && *mode != Mode::kGlobal) || steps; }
  // The selection as command-line options, e.g. "--tensor 'fc1' --mode TRAIN --step 0:10";
  // "" when it selects everything.
  std::string Describe() const;
};

class TrialOutline;

// T is Trial or TrialOutline (explicitly instantiated for both).
template <typename T>
class BasicSelectedTrial {
 public:
  // Resolves `selection` against `trial` (not owned; must outlive the result). InvalidArgument
  // for a regex that does not compile; NotFound for a collection the trial does not have (the
  // message lists the trial's collections).
  static StatusOr<BasicSelectedTrial> Resolve(const T& trial, TrialSelection selection);
  // Everything: every tensor at every step.
  static BasicSelectedTrial All(const T& trial);

  const T& trial() const { return *trial_; }
  const TrialSelection& selection() const { return selection_; }
  // Selected tensors, sorted. With a step filter, only tensors saved at some selected step.
  const std::vector<std::string>& tensor_names() const { return names_; }
  bool IncludesTensor(std::string_view name) const;
  // Whether records of global step `global_step` are selected (mode and step filters).
  bool IncludesStep(int64_t global_step) const;
  // The selected ones among sorted global steps.
  std::vector<int64_t> FilterSteps(const std::vector<int64_t>& global_steps) const;
  // Every selected global step of the trial (complete or not), sorted.
  const std::vector<int64_t>& steps() const { return steps_; }

 private:
  BasicSelectedTrial(const T& trial, TrialSelection selection) : trial_(&trial), selection_(std::move(selection)) {}

  const T* trial_;
  TrialSelection selection_;
  std::vector<std::string> names_;
  std::vector<int64_t> steps_;
};

using SelectedTrial = BasicSelectedTrial<Trial>;
using SelectedOutline = BasicSelectedTrial<TrialOutline>;
extern template class BasicSelectedTrial<Trial>;
extern template class BasicSelectedTrial<TrialOutline>;

}  // namespace litmus
