// Reading a finished trial's records one index folder (index/<P9>: 1000 steps) at a time, for
// the `litmus inspect` outputs of finished trials (the overview, --values, --json): a Trial is
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
#include <ostream>
#include <span>
#include <string>

#include "litmus/engine/trial.h"
#include "litmus/engine/trial_document.h"
#include "litmus/engine/trial_outline.h"
#include "litmus/engine/trial_selection.h"
#include "litmus/engine/trial_summary.h"
#include "litmus/engine/trial_values.h"
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

// The with-values outputs of `litmus inspect` (the --json document and the --values listing) of
// a finished trial, read a folder at a time. Both go tensor by tensor (every selected step of a
// tensor, then the next tensor), the index folders step by step. One pass over the folders
// writes each tensor's part of each folder -- rendered exactly as the output has it, by
// WriteStepRecords / WriteTensorValueLines of that folder's Trial -- to a spill file (a
// temporary file in $TMPDIR, or /tmp, removed when done; as large as the output's records), and
// keeps only its (offset, length): 16 bytes per (tensor, folder). Then the output is written
// tensor by tensor, the catalog from the outline, each tensor's pieces copied in folder order.
// Memory holds one folder's catalog, one tensor's values and the piece table, whatever the
// number of steps; the records are read in the files' order, a folder at a time. (Why this
// design: spilling (tensor, step, worker, location) records and reading the values in tensor
// order afterwards would need a second reader of records with exactly a Trial's outcomes and
// messages; compact per-tensor location runs hold only for regular trials and grow again with
// irregular ones. The spill costs disk, as much as the output's records, not memory; time
// measured +6 % CPU on 20k steps x 50 tensors, docs/benchmarks.md.)
// Returns false, having written nothing, when the folders cannot give what a Trial of the whole
// trial gives: the outline's steps do not map one to one to their (mode, mode step) (a mode step
// repeated, a GLOBAL-mode step whose mode step is not its global step), a record whose worker's
// (mode, mode step) is not its step's own, or an index file outside its step's folder (in all of
// which a record's value may resolve to another folder's step): the caller then reads a Trial.
// Damage stops the output where a Trial's output stops (the first damaged record in output
// order; the records before it written) and is returned, as is a failure to write.
// REQUIRES: selected.trial().end_marker_seen().
StatusOr<bool> WriteDocumentByFolder(Env* env, const SelectedOutline& selected, const TrialOptions& options,
                                     const TrialDocumentOptions& document_options, std::ostream& out);
StatusOr<bool> WriteValuesByFolder(Env* env, const SelectedOutline& selected, const TrialOptions& options,
                                   const TrialValuesOptions& values_options, std::ostream& out);

}  // namespace litmus
