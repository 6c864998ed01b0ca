// The human-readable summary that `litmus inspect` prints by default: steps per mode, workers,
// completeness, and each selected tensor with its collections, dtype, shape and step count. Step
// lists are compact (CompactSteps), so the summary's size does not grow with the number of
// steps. Reads one value per tensor (at its last selected step) to report dtype and shape.
// Call from the thread that owns the Trial.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/engine/trial_selection.h"

namespace litmus {

std::string BuildTrialSummary(const SelectedTrial& selected);

// A tensor's DTYPE and SHAPE columns: its value at one step (the last selected one), or the
// read's error class ("<DataLoss>") and the shape from the index if any; "?" for what is unknown.
struct TensorLook {
  std::string dtype = "?";
  std::string shape = "?";
};
// Reads `name` at global `step` of `trial` (default worker) and releases it from the cache.
TensorLook LookAtTensor(const Trial& trial, const std::string& name, int64_t step);
// The same summary of an outline's selection, the columns of each tensor from `looks` (taken
// with LookAtTensor at its last selected step, e.g. by CheckRecordsByFolder; "?" if absent).
std::string BuildTrialSummary(const SelectedOutline& selected, const std::map<std::string, TensorLook>& looks);
inline std::string BuildTrialSummary(const Trial& trial) { return BuildTrialSummary(SelectedTrial::All(trial)); }

// A sorted step list as arithmetic runs: "0-13" (consecutive), "0-11998 every 2", "5" (single),
// joined by ", "; "none" when empty. With more than `max_runs` runs, the first max_runs - 2 and
// the last one are shown around "...", followed by "(N ranges)".
std::string CompactSteps(const std::vector<int64_t>& steps, size_t max_runs = 8);

// A shape as Python prints a tuple: "()", "(3,)", "(2, 4)".
std::string ShapeText(const std::vector<int64_t>& shape);

}  // namespace litmus
