// The listing `litmus inspect --values` prints: for each selected tensor, each selected step and
// each worker that saved it, one line with the value in full when it has at most
// `max_listed_values` elements, else its dtype, shape and statistics (min, max, mean computed by
// reductions.h; NaN and infinity counts). Decoded values are released from the trial's cache as
// soon as their line is written, so memory does not grow with the trial. Call from the thread
// that owns the Trial.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>

#include "litmus/engine/tensor.h"
#include "litmus/engine/trial_selection.h"
#include "litmus/status.h"

namespace litmus {

struct TrialValuesOptions {
  int64_t max_listed_values = 16;
};

// Writes the listing to `out`. A value that cannot be read for an expected reason (not saved at
// that step, ...) is shown as "<ErrorClass>"; corruption (DataLoss, Unimplemented) stops the
// listing and is returned, naming file and offset. Unavailable if writing to `out` fails.
Status WriteTrialValues(const SelectedTrial& selected, const TrialValuesOptions& options, std::ostream& out);

// The listing's lines of tensor `name` at `steps` (ascending; steps where no worker saved it have
// none), without the line of its name: several_workers is whether the trial has more than one
// worker (Trial::workers()). Errors as WriteTrialValues. For trial_folders.h, which reads the
// records an index folder at a time.
Status WriteTensorValueLines(const Trial& trial, const std::string& name, std::span<const int64_t> steps,
                             bool several_workers, const TrialValuesOptions& options, std::ostream& out);

// One tensor as the listing shows it (without step and worker), e.g.
//   float32 (3,) [0.5, -1, nan]
//   float32 (100, 10) 1000 elements: min -2.5 max 3 mean 0.0125, nan 0, +inf 1, -inf 0
std::string DescribeTensorValue(const Tensor& tensor, int64_t max_listed_values = 16);

}  // namespace litmus
