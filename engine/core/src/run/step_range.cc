// EmptyStepRangeNote: see step_range.h.
#include "run/step_range.h"

#include <algorithm>

namespace litmus {

std::optional<std::string> EmptyStepRangeNote(const std::vector<int64_t>& saved_steps, int64_t start_step,
                                              std::optional<int64_t> end_step) {
  const auto first_in_range = std::lower_bound(saved_steps.begin(), saved_steps.end(), start_step);
  if (first_in_range != saved_steps.end() && (!end_step || *first_in_range < *end_step)) return std::nullopt;
  // (Appended piece by piece: GCC 12's -Wrestrict misfires on "[" + std::to_string(...).)
  std::string range = "[";
  range += std::to_string(start_step);
  range += ", ";
  range += end_step ? std::to_string(*end_step) : std::string("inf");
  range += ")";
  if (saved_steps.empty()) return "no saved step in " + range + ": the trial saved no step";
  const size_t n = saved_steps.size();
  const std::string steps = n == 1 ? "step is " + std::to_string(saved_steps.front())
                                   : "steps are " + std::to_string(saved_steps.front()) + ".." +
                                         std::to_string(saved_steps.back()) + " (" + std::to_string(n) + " saved)";
  return "no saved step in " + range + ": the trial's " + steps;
}

}  // namespace litmus
