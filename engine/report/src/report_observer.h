// ReportObserver: `litmus run --report [FILE]` (docs/report.md "The HTML report"). A JobObserver
// that rewrites the report (ReportGenerator) when the job's files were brought up to date, at most
// every kInterval (less often when making it takes long) while rules run and always at the end.
// A report that cannot be written is logged (once as an error, then at debug level) and tried
// again next time; the job's verdict never changes. Thread-compatible: the runner's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "report_generator.h"
#include "run/job_observer.h"

namespace litmus::report {

class ReportObserver final : public JobObserver {
 public:
  static constexpr std::chrono::seconds kInterval{5};
  // Evaluations (a rule at a step) between two takings of the trial's collected statistics:
  // at most 48 watched tensors a step, far below what the trial keeps between two takings.
  static constexpr int64_t kTakeStatisticsEvery = 256;

  // As ReportGenerator's constructor.
  ReportObserver(ReportOptions options, Env* files, Env* trial_env);

  const std::string& path() const { return generator_.path(); }

  // The runner's trial and the rules' series stores are read while the job runs (no second
  // Trial, no parsing of the series files the runner just wrote). The watched tensors'
  // statistics come from the values the runner's prefetch reads (Trial::CollectStatistics; of
  // every tensor until the first rewrite knows which are watched), up to the last evaluated step
  // while the job runs; what the rules did not read is read by the report itself.
  void TrialOpened(const Trial& trial) override;
  void StepEvaluated(const std::string& rule, int64_t step, bool, const SeriesStore& series,
                     const std::vector<SeriesStore::NewPoint>&) override;
  void RuleFired(const std::string&, int64_t, const std::string&) override {}
  void FilesWritten(bool finished) override;

 private:
  ReportGenerator generator_;
  LiveSeries series_;  // by rule: the runner's stores (valid until FilesWritten(true) returns)
  int64_t evaluated_ = INT64_MIN;  // the last step a rule was evaluated at
  int64_t evaluations_ = 0;          // since the collected statistics were last taken
  std::chrono::steady_clock::time_point next_{};  // no earlier rewrite unless finished
  bool written_ = false;
  bool failed_ = false;
};

}  // namespace litmus::report
