// The machine-readable description of a trial that `litmus inspect --json` prints: the document
// schema of the smdebug fixtures' *.expected.json (docs/inspect-json.md), minus the keys that only
// make sense for smdebug itself (`schema`, `smdebug_version`, `rule_outcomes`). Values are litmus's
// own (docs/compatibility.md lists where they differ from smdebug and why). The document is
// written as it is produced, one (tensor, step) record at a time, so memory does not grow with
// the trial's values. Reads tensors through Trial::Value etc.; call from the thread that owns the Trial.
#pragma once

#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/engine/trial_outline.h"
#include "litmus/engine/trial_selection.h"
#include "litmus/status.h"

namespace litmus {

struct TrialDocumentOptions {
  // Include tensors.<name>.per_step (values, sha256, reductions). Without it only the catalog
  // (steps, modes, workers, names, collections) is described, which needs no tensor reads.
  bool include_values = true;
  // Arrays with at most this many elements also list their values.
  int64_t max_listed_values = 16;
};

// Writes the document of the selected tensors and steps to `out`, one line per top-level key,
// per tensor and per (tensor, step) record (docs/inspect-json.md), releasing each record's
// decoded values from the trial's cache once written. Expected read outcomes (a tensor
// unavailable at a step, a reduction undefined on an empty tensor) are part of the document as
// {"error": "<class>"}. Corruption (DataLoss, Unimplemented) of a record it reads stops the
// writing and is returned, naming file and offset: `out` then holds an unfinished document
// (deliberately not valid JSON). Unavailable if writing to `out` fails.
Status WriteTrialDocument(const SelectedTrial& selected, const TrialDocumentOptions& options, std::ostream& out);
// The same document of a TrialOutline's selection: only without values (InvalidArgument if
// options.include_values), the catalog keys written in memory that does not grow with the
// trial's records (trial_outline.h).
Status WriteTrialDocument(const SelectedOutline& selected, const TrialDocumentOptions& options, std::ostream& out);

// The document of an outline's selection with values: the catalog keys from the outline, and
// after each selected tensor's catalog (tensors.<name>, in tensor_names order) its per_step
// members as written by per_step(index of the name in selected.tensor_names(), out) -- the
// members exactly as WriteTrialDocument of a Trial writes them, without the braces around them
// (WriteStepRecords). An error of per_step stops the document there and is returned (as a
// Trial's document stops at damage). For trial_folders.h, which reads the records an index
// folder at a time.
using PerStepWriter = std::function<Status(size_t tensor, std::ostream& out)>;
Status WriteTrialDocument(const SelectedOutline& selected, const TrialDocumentOptions& options,
                          const PerStepWriter& per_step, std::ostream& out);

// tensors.<name>.per_step's members for `steps` (ascending; a step where no worker saved the
// tensor is skipped), as WriteTrialDocument of a Trial writes them: each member is preceded by
// ",\n" (the document's first member of a per_step object has "\n" instead: the caller drops
// the comma). Each record's decoded values are released once written. Corruption stops at the
// damaged record (nothing of it is written) and is returned.
Status WriteStepRecords(const Trial& trial, const std::string& name, std::span<const int64_t> steps,
                        const TrialDocumentOptions& options, std::ostream& out);

// The whole trial's document as one string (WriteTrialDocument into memory): for tests and
// small trials.
StatusOr<std::string> BuildTrialDocument(const Trial& trial, const TrialDocumentOptions& options = {});

// Reads every selected record (raw tensors and stored reductions) once and returns the first
// DataLoss/Unimplemented error, naming the file and offset. Each record's decoded value is
// released from the trial's cache after the check, so memory stays bounded.
Status VerifyRecords(const SelectedTrial& selected);
// Reads every selected record like VerifyRecords, but goes on past damage: how many records are
// damaged (DataLoss: truncated or missing event file, index past its end, a bad CRC, a malformed
// record; Unimplemented: an undecodable dtype), and the first `max_listed` errors, each naming
// file, offset, tensor, step and worker.
struct DamageReport {
  int64_t count = 0;
  std::vector<Status> listed;
};
DamageReport FindDamagedRecords(const SelectedTrial& selected, size_t max_listed);
inline Status VerifyAllRecords(const Trial& trial) { return VerifyRecords(SelectedTrial::All(trial)); }

// The name litmus gives a read failure in documents and messages: the TrialError name
// ("TensorUnavailableForStep", ...) when the status carries one, else the StatusCode name.
std::string ErrorClassName(const Status& status);

}  // namespace litmus
