// Waiting for a trial that training has not written yet, and saying so (docs/run.md,
// "Waiting for the trial"). PendingFolderEnv lets a local trial folder that does not exist yet be
// opened as an empty one (training creates it when it starts: waited for, not an error);
// TrialWaitState says what a trial still lacks, in words, and finds the trials inside a folder
// that is not one (a parent of several trials: an error naming them). The runner logs the state
// at once and then at every interval (WaitNotice). Thread-compatible.
#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/format/env.h"
#include "litmus/format/forwarding_env.h"

namespace litmus {

// An Env over `base` (not owned) that reports the folders given to AddPendingFolder as existing
// folders while they do not exist (IsDirectory true). Listing a missing folder already is NotFound,
// which the trial reader takes as empty; once training creates the folder everything is `base`'s.
class PendingFolderEnv final : public ForwardingEnv {
 public:
  explicit PendingFolderEnv(Env* base) : ForwardingEnv(base) {}
  // `path`: a local trial root (s3:// prefixes need nothing: a prefix without objects is empty).
  void AddPendingFolder(const std::string& path);

  StatusOr<bool> IsDirectory(const std::string& path) override;

 private:
  std::set<std::string> pending_;
};

// Whether `path` is a local path (not s3://) that does not exist.
bool IsMissingLocalFolder(const std::string& path);

// Up to `max` subfolders of the local folder `root` that are trials (hold index/, collections/,
// events/ or training_job_end.ts), sorted, plus how many there are in all; none if `root` is a
// trial itself, is not a local folder, or holds none.
struct NestedTrials {
  std::vector<std::string> names;
  size_t total = 0;
};
NestedTrials FindNestedTrials(const std::string& root, size_t max = 3);
// "trial /runs is not a trial but holds trials: run-a, run-b, run-c (and 2 more); use e.g. --trial
// /runs/run-a".
std::string NestedTrialsMessage(const std::string& root, const NestedTrials& nested);

// What an opened trial still lacks before its first step can be evaluated, in words ("trial
// folder /t does not exist yet: waiting for training to create it"); nullopt when it lacks
// nothing (its collections files of every worker are there).
std::optional<std::string> TrialWaitState(const Trial& trial);

// At once, then every `interval`: whether it is time to log the wait again.
class WaitNotice {
 public:
  explicit WaitNotice(std::chrono::milliseconds interval) : interval_(interval) {}
  // True the first time and whenever `interval` has passed since the last true.
  bool Due();
  // Seconds since the first Due().
  int64_t WaitedSeconds() const;

 private:
  std::chrono::milliseconds interval_;
  std::optional<std::chrono::steady_clock::time_point> first_, last_;
};

}  // namespace litmus
