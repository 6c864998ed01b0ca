// Windows over the saved steps of a tensor, shared by the rules that compare a step with earlier
// ones (UnchangedTensor, WeightUpdateRatio; docs/rules/UnchangedTensor.md, WeightUpdateRatio.md).
// Steps are whatever the caller passes: global steps or the mode steps of one mode, sorted
// ascending, as Trial::tensor_steps returns them (complete steps only). The functions are stateless
// and thread-safe; a SavedStepsCache belongs to one rule (one thread at a time).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus/rule.hpp"

namespace litmus_builtin {

// Trial::tensor_steps(name, mode) remembered per tensor, asked again only when the step the rule
// is at is not among the remembered ones (the trial has grown): a finished trial costs one query
// per tensor instead of one per tensor and step.
class SavedStepsCache {
 public:
  // The saved steps of `name` in `mode` of `trial`, complete enough to contain `step` if the
  // tensor was saved there.
  const std::vector<int64_t>& Get(const litmus::Trial& trial, std::string_view name, litmus::Mode mode,
                                  int64_t step) {
    auto known = steps_.find(name);  // (no copy of the name once it is known)
    if (known == steps_.end()) known = steps_.emplace(std::string(name), ByMode{}).first;
    std::vector<int64_t>& steps = known->second[mode];
    if (!std::binary_search(steps.begin(), steps.end(), step)) steps = trial.tensor_steps(name, mode);
    return steps;
  }

 private:
  using ByMode = std::map<litmus::Mode, std::vector<int64_t>>;
  std::map<std::string, ByMode, std::less<>> steps_;
};

// The last `count` of `steps` that are <= `step`, oldest first (fewer when fewer exist). They need
// not be consecutive integers: a step that was not saved is simply not in the window.
inline std::vector<int64_t> LastStepsUpTo(const std::vector<int64_t>& steps, int64_t step,
                                          size_t count) {
  const auto end = std::upper_bound(steps.begin(), steps.end(), step);
  const auto available = static_cast<size_t>(end - steps.begin());
  return std::vector<int64_t>(end - static_cast<std::ptrdiff_t>(std::min(count, available)), end);
}

// The saved step `step` is compared with. Without a window: the latest saved step before `step`.
// With window n: the earliest saved step p with step - n <= p < step. nullopt when there is none.
inline std::optional<int64_t> PreviousStep(const std::vector<int64_t>& steps, int64_t step,
                                           std::optional<int64_t> window) {
  const auto before = std::lower_bound(steps.begin(), steps.end(), step);  // first >= step
  if (before == steps.begin()) return std::nullopt;
  if (!window) return *(before - 1);
  const auto first = std::lower_bound(steps.begin(), before, step - *window);
  if (first == before) return std::nullopt;
  return *first;
}

}  // namespace litmus_builtin
