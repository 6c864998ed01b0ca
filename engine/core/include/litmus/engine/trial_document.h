// The machine-readable description of a trial that `litmus inspect --json` prints: the document
// schema of the smdebug fixtures' *.expected.json (docs/inspect-json.md), minus the keys that only
// make sense for smdebug itself (`schema`, `smdebug_version`, `rule_outcomes`). Values are litmus's
// own (docs/compatibility.md lists where they differ from smdebug and why).
// Reads tensors through Trial::Value etc.; call from the thread that owns the Trial.
#pragma once

#include <string>

#include "litmus/engine/trial.h"
#include "litmus/status.h"

namespace litmus {

struct TrialDocumentOptions {
  // Include tensors.<name>.per_step (values, sha256, reductions). Without it only the catalog
  // (steps, modes, workers, names, collections) is described, which needs no tensor reads.
  bool include_values = true;
  // Arrays with at most this many elements also list their values.
  int64_t max_listed_values = 16;
  // Spaces of indentation; -1 for a single line.
  int indent = 1;
};

// Returns the JSON document as text. Expected read outcomes (a tensor unavailable at a step, a
// reduction undefined on an empty tensor) are part of the document as {"error": "<class>"};
// corruption (DataLoss) of any record is returned as the error instead, naming file and offset.
StatusOr<std::string> BuildTrialDocument(const Trial& trial, const TrialDocumentOptions& options = {});

// Reads every indexed record of the trial (raw tensors and stored reductions) once and returns
// the first DataLoss/Unimplemented error, naming the file and offset. Decoded values stay in the
// trial's cache, so a document built afterwards does not decode them again.
Status VerifyAllRecords(const Trial& trial);

// The name litmus gives a read failure in documents and messages: the TrialError name
// ("TensorUnavailableForStep", ...) when the status carries one, else the StatusCode name.
std::string ErrorClassName(const Status& status);

}  // namespace litmus
