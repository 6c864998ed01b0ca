// A rule's step range ([start_step, end_step)) against the steps a finished trial saved: when it
// selects none of them, the words that say so instead of a silent NoIssuesFound with 0
// datapoints ("no saved step in [100, inf): the trial's steps are 0..39"). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace litmus {

// `saved_steps`: the trial's global steps, sorted. nullopt if a saved step lies in the range.
std::optional<std::string> EmptyStepRangeNote(const std::vector<int64_t>& saved_steps, int64_t start_step,
                                              std::optional<int64_t> end_step);

}  // namespace litmus
