// `litmus inspect`: opens the trial once (no waiting), resolves the filters, and prints the
// summary, the values listing (--values) or the JSON document (--json, docs/inspect-json.md).
// Every record the output covers is read and checked unless --no-values; corruption is exit 2.
// The JSON document and the values listing are written as they are produced, and each decoded
// value leaves the trial's cache once written: memory does not grow with the trial's values.
// `--json --no-values` reads a TrialOutline instead of a Trial (no record locations, steps as
// runs): its memory does not grow with the trial's (step, tensor) records either. So does the
// overview of a finished trial, which then reads the records an index folder at a time
// (trial_folders.h), and so do `--values` and `--json` with values: their output goes tensor by
// tensor while the index folders go step by step, so each tensor's part of each folder is
// written to a temporary spill file and the output then copied from it tensor by tensor
// (trial_folders.h says why that design). A live trial, or a layout the folders do not
// represent, reads a Trial.
#include "inspect_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <iostream>

#include "exit_codes.h"
#include "litmus/aws/trial_env.h"
#include "litmus/engine/trial.h"
#include "litmus/engine/trial_document.h"
#include "litmus/engine/trial_folders.h"
#include "litmus/engine/trial_outline.h"
#include "litmus/engine/trial_selection.h"
#include "litmus/engine/trial_summary.h"
#include "litmus/engine/trial_values.h"

namespace litmus::cli {
namespace {

// Decoded values are released once written; the cache only has to hold the tensors of one
// record while it is described (a larger tensor is simply read again when asked for twice).
constexpr size_t kInspectCacheBytes = 64ull << 20;

StatusOr<TrialSelection> SelectionOf(const InspectOptions& options) {
  TrialSelection selection;
  selection.tensor_regex = options.tensor_regex;
  selection.collections = options.collections;
  if (!options.mode.empty()) {
    std::string upper = options.mode;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    selection.mode = ModeFromName(upper);
    if (!selection.mode) {
      return InvalidArgumentError("invalid --mode '" + options.mode + "': expected TRAIN, EVAL, PREDICT or GLOBAL");
    }
  }
  if (!options.step.empty()) {
    LITMUS_ASSIGN_OR_RETURN(StepRange range, ParseStepRange(options.step));
    selection.steps = range;
  }
  return selection;
}

// Exit status of the document of `outline`, written to stdout.
int WriteOutlineDocument(const TrialOutline& outline, TrialSelection selection) {
  StatusOr<SelectedOutline> selected = SelectedOutline::Resolve(outline, std::move(selection));
  if (!selected.ok()) return Fail(kExitBadInput, selected.status().message());
  TrialDocumentOptions doc_options;
  doc_options.include_values = false;
  Status written = WriteTrialDocument(*selected, doc_options, std::cout);
  if (!written.ok()) return Fail(kExitBadInput, written.message());
  return kExitOk;
}

bool NotATrial(const auto& trial) {
  return !trial.collections_ready() && trial.Steps(Mode::kGlobal, true).empty() && !trial.end_marker_seen();
}

// Every damaged record is listed (a trial damaged in one place is often damaged in more), up to
// this many; then the count.
constexpr size_t kListedDamage = 20;

// Exit status after the overview's damage report (on stderr).
int ReportDamage(const DamageReport& damage, const std::string& trial) {
  if (damage.count == 0) return kExitOk;
  std::cout.flush();
  for (const Status& status : damage.listed) Fail(kExitBadInput, status.message());
  const int64_t unlisted = damage.count - static_cast<int64_t>(damage.listed.size());
  return Fail(kExitBadInput, std::to_string(damage.count) + " damaged record" + (damage.count == 1 ? "" : "s") +
                                 " in trial " + trial +
                                 (unlisted > 0 ? " (" + std::to_string(unlisted) + " more not listed)" : "") +
                                 ": the training job's data is incomplete or corrupt");
}

// The overview of a finished trial from its outline, its records read an index folder at a time:
// nullopt when that cannot give the Trial's output (an index file outside its step's folder),
// then the caller reads a Trial.
std::optional<int> WriteOutlineOverview(Env* env, const TrialOutline& outline, TrialSelection selection,
                                        const TrialOptions& trial_options, const InspectOptions& options) {
  StatusOr<SelectedOutline> selected = SelectedOutline::Resolve(outline, std::move(selection));
  if (!selected.ok()) return Fail(kExitBadInput, selected.status().message());
  StatusOr<RecordCheck> check =
      CheckRecordsByFolder(env, *selected, trial_options, kListedDamage, /*check_records=*/!options.no_values);
  if (!check.ok()) {
    if (check.status().code() == StatusCode::kUnimplemented) return std::nullopt;
    return Fail(kExitBadInput, check.status().message());
  }
  std::cout << BuildTrialSummary(*selected, check->looks);
  return ReportDamage(check->damage, options.trial);
}

// The --values listing or the --json document with values of a finished trial from its
// outline, its records read an index folder at a time and spilled per tensor to a temporary
// file (trial_folders.h): nullopt, nothing written, when that cannot give the Trial's output;
// then the caller reads a Trial.
std::optional<int> WriteValuesOutputByFolder(Env* env, const TrialOutline& outline, TrialSelection selection,
                                             const TrialOptions& trial_options, const InspectOptions& options) {
  StatusOr<SelectedOutline> selected = SelectedOutline::Resolve(outline, std::move(selection));
  if (!selected.ok()) return Fail(kExitBadInput, selected.status().message());
  // On damage the output stops where a Trial's stops (a document then is not valid JSON); exit code 2.
  const StatusOr<bool> written =
      options.json ? WriteDocumentByFolder(env, *selected, trial_options, TrialDocumentOptions{}, std::cout)
                   : WriteValuesByFolder(env, *selected, trial_options, TrialValuesOptions{}, std::cout);
  if (!written.ok()) return Fail(kExitBadInput, written.status().message());
  if (!*written) return std::nullopt;
  return kExitOk;
}

}  // namespace

InspectOptions& AddInspectCommand(CLI::App& app) {
  static InspectOptions options;
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "Describe a trial: steps, modes, workers, tensors; with filters, only the selected tensors and steps");
  cmd->add_option("trial", options.trial, "Trial folder or s3://bucket/prefix")->required();
  cmd->add_option("--tensor", options.tensor_regex,
                  "Only tensors whose name matches REGEX anywhere (Python re.search); repeatable: any of them")
      ->type_name("REGEX")
      ->allow_extra_args(false);
  cmd->add_option("--collection", options.collections,
                  "Only tensors of collection NAME; repeatable: any of them (with --tensor: both must hold)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  cmd->add_option("--mode", options.mode,
                  "Only steps saved in MODE (TRAIN, EVAL, PREDICT, any case; GLOBAL: every step); --step then "
                  "counts that mode's steps")
      ->type_name("MODE");
  cmd->add_option("--step", options.step,
                  "Only step N, or steps A:B (A <= step < B), A: or :B; global steps unless --mode is given")
      ->type_name("N|A:B");
  auto* values = cmd->add_flag(
      "--values", options.values,
      "List the values: tensors of at most 16 elements in full, larger ones as dtype, shape, min/max/mean "
      "and NaN/inf counts (one line per tensor, step and worker); --json has the values anyway");
  cmd->add_flag("--json", options.json,
                "Print the JSON document (schema: docs/inspect-json.md), values included unless --no-values; "
                "with values, a finished trial's records are first read into a temporary file in $TMPDIR");
  cmd->add_flag("--no-values", options.no_values,
                  "Describe only the catalog (steps, modes, names, collections); read no tensor values")
      ->excludes(values);
  cmd->footer(
      "Without --no-values every record the output covers is read and checked: a corrupt one is exit code 2.\n"
      "Examples:\n"
      "  litmus inspect TRIAL --tensor 'fc1' --step 0:10 --values\n"
      "  litmus inspect TRIAL --collection losses --mode EVAL --json\n"
      "More: docs/inspect.md, docs/inspect-json.md");
  return options;
}

int RunInspect(const InspectOptions& options) {
  StatusOr<TrialSelection> selection = SelectionOf(options);
  if (!selection.ok()) return Fail(kExitBadInput, selection.status().message());

  TrialOptions trial_options = TrialOptions::FromEnvironment();
  // inspect reports the trial as it is now: no delay after the end marker is seen.
  trial_options.training_end_delay_refresh_s = 0;
  trial_options.cache_bytes = std::min(trial_options.cache_bytes, kInspectCacheBytes);
  aws::TrialEnv env;  // local folders and s3:// prefixes alike (docs/s3.md)
  env.AddTrial(options.trial);

  const auto not_a_trial = [&] {
    return Fail(kExitBadInput, "not a trial: " + options.trial +
                                   " has no collections file and no index file (is this the trial folder?)");
  };
  const bool overview = !options.json && !options.values;
  {
    // The outline describes the same catalog as the Trial, in memory independent of the number
    // of records; a layout it does not represent (Unimplemented) falls back to the Trial. The
    // overview reads the records of a finished trial an index folder at a time; a live one
    // reads a Trial (it could change between the outline and the folders).
    auto outline = TrialOutline::Open(&env, options.trial, trial_options);
    if (outline.ok()) {
      if (NotATrial(**outline)) return not_a_trial();
      if (options.json && options.no_values) return WriteOutlineDocument(**outline, std::move(*selection));
      if ((*outline)->end_marker_seen()) {
        std::optional<int> status =
            overview ? WriteOutlineOverview(&env, **outline, *selection, trial_options, options)
                     : WriteValuesOutputByFolder(&env, **outline, *selection, trial_options, options);
        if (status) return *status;
      }
    } else if (outline.status().code() != StatusCode::kUnimplemented) {
      return Fail(kExitBadInput, outline.status().message());
    }
  }
  auto opened = Trial::Open(&env, options.trial, trial_options);
  if (!opened.ok()) return Fail(kExitBadInput, opened.status().message());
  const Trial& trial = **opened;
  if (NotATrial(trial)) return not_a_trial();
  StatusOr<SelectedTrial> selected = SelectedTrial::Resolve(trial, std::move(*selection));
  if (!selected.ok()) return Fail(kExitBadInput, selected.status().message());

  if (options.json) {
    TrialDocumentOptions doc_options;
    doc_options.include_values = !options.no_values;
    // On damage the document stops where it was found (and is not valid JSON); exit code 2.
    Status written = WriteTrialDocument(*selected, doc_options, std::cout);
    if (!written.ok()) return Fail(kExitBadInput, written.message());
    return kExitOk;
  }
  if (options.values) {
    Status written = WriteTrialValues(*selected, {}, std::cout);
    if (!written.ok()) return Fail(kExitBadInput, written.message());
    return kExitOk;
  }
  std::cout << BuildTrialSummary(*selected);
  if (options.no_values) return kExitOk;
  return ReportDamage(FindDamagedRecords(*selected, kListedDamage), options.trial);
}

}  // namespace litmus::cli
