// ReportGenerator: writes the HTML report of a job (report_page.h) from its output folder and its
// trial, atomically (a temp file beside the target, then rename), as often as asked: the job's
// files are read again each time (events.jsonl only from where it was left) and the trial's curves
// only from the steps saved since (trial_curves.h). Used by `litmus report DIR` once and by
// `litmus run --report` (report_observer.h) while the job runs. Thread-compatible.
#pragma once

#include <memory>
#include <string>

#include "job_files.h"
#include "litmus/format/env.h"
#include "litmus/status.h"
#include "trial_curves.h"

namespace litmus::report {

struct ReportOptions {
  std::string output_dir;  // the job's output folder
  std::string file;        // the report; "" = <output_dir>/report.html
  std::string trial;       // the trial to read curves from; "" = the one the job's checkpoint names
  int refresh_seconds = 0;  // > 0: the page of a running job reloads itself that often
};

class ReportGenerator {
 public:
  static constexpr const char* kDefaultName = "report.html";

  // `files` reads the job's folder and writes the report; `trial_env` reads the trial (local
  // folders and s3:// prefixes). Neither is owned; both outlive this object.
  ReportGenerator(ReportOptions options, Env* files, Env* trial_env);
  ~ReportGenerator();

  // Reads the job's files and the trial's new steps, and replaces the report. Errors (one line):
  // NotFound "not a job output folder (no status.json): DIR", a file that cannot be read or
  // parsed, the report that cannot be written (naming the file). A trial that cannot be read is
  // not an error: the page says so.
  //
  // With `live` (`litmus run --report`), the rules' series are taken from the runner's stores
  // (JobFilesReader::Read) instead of their series files: the same page, without writing and
  // parsing the files again.
  //
  // `through` (`litmus run`): the watched tensors' statistics of later steps wait for a later
  // Write (TrialCurves::Update).
  Status Write(const LiveSeries* live = nullptr, std::optional<int64_t> through = std::nullopt);

  // Reads the trial's curves through `trial` (the runner's, not owned; see TrialCurves) instead
  // of opening it again; with `collected`, the watched tensors' statistics are those the trial
  // collects (TrialCurves, Trial::CollectStatistics). Before the first Write; `trial` must
  // outlive the Writes.
  void UseTrial(const Trial* trial, bool collected = false) {
    runner_trial_ = trial;
    collected_ = collected;
  }

  // Between Writes (`litmus run`): takes the statistics the trial collected since (see
  // TrialCurves::TakeCollectedStatistics). Nothing before the first Write, which knows the
  // watched tensors.
  void TakeCollectedStatistics() {
    if (curves_) curves_->TakeCollectedStatistics();
  }

  const std::string& path() const { return path_; }

 private:
  ReportOptions options_;
  std::string path_;
  Env* files_;
  Env* trial_env_;
  JobFilesReader reader_;
  const Trial* runner_trial_ = nullptr;
  bool collected_ = false;
  std::unique_ptr<TrialCurves> curves_;  // once the trial is known
};

// `content` to `path` through `env`: written to path + ".tmp", then put in place of `path`
// (Env::ReplaceUnsyncedFile: a report is rewritten often and never synced).
Status WriteFileAtomically(Env* env, const std::string& path, const std::string& content);

}  // namespace litmus::report
