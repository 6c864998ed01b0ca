// JobObserver: what a job's by-products (engine/report/: the TensorBoard verdict file, the HTML
// report) are told while `litmus run` works, beside the files it writes. Called on the runner's
// thread, between plugin calls; an observer must not block for long (the loop waits for it) and
// never changes the verdict. Not owned by the runner; must outlive JobRunner::Run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugin/series_store.h"

namespace litmus {

class Trial;

class JobObserver {
 public:
  virtual ~JobObserver() = default;
  // The job's trial (the base trial) was opened, before any rule runs. The observer may keep the
  // pointer and read from it in its later calls (Value, TensorSteps, Prefetch and Release of
  // what it read itself) -- the runner refreshes it, the observer never does -- until
  // FilesWritten(true); not after. It may also call CollectStatistics and TakeStatistics: the
  // runner reads each step's required values with Trial::Prefetch (in the background, on the
  // prefetch's threads), so the statistics of the tensors asked for are computed as the runner
  // decodes them, and those of a step the runner read are in the trial by the time
  // StepEvaluated reports the step (values a rule reads outside its declared requirements, or
  // that were cached before they were asked for, are not: the observer reads those itself).
  virtual void TrialOpened(const Trial& /*trial*/) {}
  // `rule` (configuration name) was evaluated at global `step`; `condition_met` its outcome;
  // `points` the series values it published since its last evaluation (ABI 1.3), whose names
  // are in `series.series()[point.series]`. Skipped steps are not reported. `series` is the
  // rule's own store, at the same address for the whole job: the observer may keep a reference
  // and read it in its later calls until FilesWritten(true) returns; not after.
  virtual void StepEvaluated(const std::string& rule, int64_t step, bool condition_met, const SeriesStore& series,
                             const std::vector<SeriesStore::NewPoint>& points) = 0;
  // The rule fired at `step` with `message` (the RuleEvaluationConditionMet event's).
  virtual void RuleFired(const std::string& rule, int64_t step, const std::string& message) = 0;
  // The job's files (status.json, rule-reports/, events.jsonl) were brought up to date:
  // periodically while rules run, and once more at the end (`finished`, after the exit code is
  // in status.json; the series files may still be being written, from the same stores), and
  // again if the job's files then turned out not written (the exit code changed to an error).
  virtual void FilesWritten(bool finished) = 0;
};

}  // namespace litmus
