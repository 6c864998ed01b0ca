// The human-readable summary that `litmus inspect` prints by default: steps per mode, workers,
// completeness, and each tensor with its collections, dtype and shape. Reads one value per tensor
// (at its last step) to report dtype and shape. Call from the thread that owns the Trial.
#pragma once

#include <string>

#include "litmus/engine/trial.h"

namespace litmus {

std::string BuildTrialSummary(const Trial& trial);

}  // namespace litmus
