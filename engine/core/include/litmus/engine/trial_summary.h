// The human-readable summary that `litmus inspect` prints by default: steps per mode, workers,
// completeness, and each selected tensor with its collections, dtype, shape and step count. Step
// lists are compact (CompactSteps), so the summary's size does not grow with the number of
// steps. Reads one value per tensor (at its last selected step) to report dtype and shape.
// Call from the thread that owns the Trial.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/engine/trial_selection.h"

namespace litmus {

std::string BuildTrialSummary(const SelectedTrial& selected);
inline std::string BuildTrialSummary(const Trial& trial) { return BuildTrialSummary(SelectedTrial::All(trial)); }

// A sorted step list as arithmetic runs: "0-13" (consecutive), "0-11998 every 2", "5" (single),
// joined by ", "; "none" when empty. With more than `max_runs` runs, the first max_runs - 2 and
// the last one are shown around "...", followed by "(N ranges)".
std::string CompactSteps(const std::vector<int64_t>& steps, size_t max_runs = 8);

// A shape as Python prints a tuple: "()", "(3,)", "(2, 4)".
std::string ShapeText(const std::vector<int64_t>& shape);

}  // namespace litmus
