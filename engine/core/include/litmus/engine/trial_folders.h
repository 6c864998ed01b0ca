// Reading a finished trial's records one index folder (index/<P9>: 1000 steps) at a time, for
// outputs that go through the records in step order (the `litmus inspect` overview): a Trial is
// opened over each folder in turn (through an Env that lists only that folder, and the step
// range of the folder), so that only one folder's catalog is in memory at a time, while a
// TrialOutline (trial_outline.h) describes the whole trial. Each folder's Trial reads every
// record exactly as a Trial of the whole trial does (same entries, errors and messages), since
// a record's entries come from the index files of its own step; catalog-wide queries (modes,
// completeness) must come from the outline. Only for finished trials (end marker present): a
// live trial could change between the outline and the folders. Call from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>

#include "litmus/engine/trial.h"
#include "litmus/engine/trial_document.h"
#include "litmus/engine/trial_outline.h"
#include "litmus/engine/trial_selection.h"
#include "litmus/engine/trial_summary.h"
#include "litmus/format/env.h"
#include "litmus/status.h"

namespace litmus {

// For each index folder that holds one of `steps` (sorted global steps), in order, opens a Trial
// through `env` of `root` that sees only that folder's index files and steps, and calls
// f(trial, the steps among `steps` in that folder). Stops at the first error (of opening or of
// f) and returns it.
Status ForEachIndexFolder(Env* env, const std::string& root, const TrialOptions& options,
                          std::span<const int64_t> steps,
                          const std::function<Status(const Trial&, std::span<const int64_t>)>& f);

// What the overview needs from the records of an outline's selection, read a folder at a time.
struct RecordCheck {
  // As FindDamagedRecords of the same selection of a Trial: every damaged record counted, the
  // first `max_listed` in its order (tensor, step, worker, raw value then stored reductions).
  DamageReport damage;
  // LookAtTensor of each selected tensor at its last selected step.
  std::map<std::string, TensorLook> looks;
};
// Reads every selected record (with check_records; else only each tensor's value at its last
// selected step, for the looks). Unimplemented if a folder's Trial does not have the entries the
// outline lists (index files outside their step's folder): the caller then reads a Trial.
// REQUIRES: selected.trial().end_marker_seen().
StatusOr<RecordCheck> CheckRecordsByFolder(Env* env, const SelectedOutline& selected, const TrialOptions& options,
                                           size_t max_listed, bool check_records = true);

}  // namespace litmus
