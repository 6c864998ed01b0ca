// `litmus inspect`: opens the trial once (no waiting), verifies every record unless --no-values,
// and prints the summary or the JSON document (docs/inspect-json.md).
#include "inspect_command.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "exit_codes.h"
#include "litmus/aws/trial_env.h"
#include "litmus/engine/trial.h"
#include "litmus/engine/trial_document.h"
#include "litmus/engine/trial_summary.h"

namespace litmus::cli {

InspectOptions& AddInspectCommand(CLI::App& app) {
  static InspectOptions options;
  CLI::App* cmd = app.add_subcommand("inspect", "Describe a trial: steps, modes, workers, tensors");
  cmd->add_option("trial", options.trial, "Trial folder or s3://bucket/prefix")->required();
  cmd->add_flag("--json", options.json,
                "Print the JSON document (schema: docs/inspect-json.md) instead of the summary");
  cmd->add_flag("--no-values", options.no_values,
                "Describe only the catalog (steps, modes, names, collections); read no tensor values");
  return options;
}

int RunInspect(const InspectOptions& options) {
  TrialOptions trial_options = TrialOptions::FromEnvironment();
  // inspect reports the trial as it is now: no delay after the end marker is seen.
  trial_options.training_end_delay_refresh_s = 0;
  aws::TrialEnv env;  // local folders and s3:// prefixes alike (docs/s3.md)
  env.AddTrial(options.trial);

  auto opened = Trial::Open(&env, options.trial, trial_options);
  if (!opened.ok()) return Fail(kExitBadInput, opened.status().message());
  const Trial& trial = **opened;
  if (!trial.collections_ready() && trial.Steps(Mode::kGlobal, true).empty() && !trial.end_marker_seen()) {
    return Fail(kExitBadInput, "not a trial: " + options.trial +
                                   " has no collections file and no index file (is this the trial folder?)");
  }

  if (options.json) {
    TrialDocumentOptions doc_options;
    doc_options.include_values = !options.no_values;
    auto doc = BuildTrialDocument(trial, doc_options);
    if (!doc.ok()) return Fail(kExitBadInput, doc.status().message());
    std::cout << *doc << "\n";
    return kExitOk;
  }
  if (!options.no_values) {
    Status verified = VerifyAllRecords(trial);
    if (!verified.ok()) return Fail(kExitBadInput, verified.message());
  }
  std::cout << BuildTrialSummary(trial);
  return kExitOk;
}

}  // namespace litmus::cli
