// ReportObserver: see report_observer.h.
#include "report_observer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace litmus::report {

ReportObserver::ReportObserver(ReportOptions options, Env* files, Env* trial_env)
    : generator_(std::move(options), files, trial_env) {}

void ReportObserver::TrialOpened(const Trial& trial) {
  trial.CollectStatistics(std::nullopt);  // (narrowed to the watched tensors by the first rewrite)
  generator_.UseTrial(&trial, /*collected=*/true);
}

void ReportObserver::StepEvaluated(const std::string& rule, int64_t step, bool, const SeriesStore& series,
                                   const std::vector<SeriesStore::NewPoint>&) {
  series_.try_emplace(rule, &series);
  evaluated_ = std::max(evaluated_, step);
  // Between rewrites the trial's collected statistics are taken as they come, so that its
  // bounded buffer never drops any: a rewrite would otherwise read those values again.
  if (++evaluations_ >= kTakeStatisticsEvery) {
    evaluations_ = 0;
    generator_.TakeCollectedStatistics();
  }
}

void ReportObserver::FilesWritten(bool finished) {
  const auto now = std::chrono::steady_clock::now();
  if (!finished && written_ && now < next_) return;
  written_ = true;
  // (While rules run, the statistics of the steps they have evaluated: the runner has read
  // those values and the trial has their statistics; at the end, of every step.)
  const Status status = generator_.Write(&series_, finished ? std::nullopt : std::optional<int64_t>(evaluated_));
  // A large job's page takes long to make (its series and curves): it is not remade more often
  // than keeps that at ~2 % of the runner's time.
  next_ = now + std::max<std::chrono::steady_clock::duration>(kInterval, 50 * (std::chrono::steady_clock::now() - now));
  if (!status.ok()) {
    if (!failed_) spdlog::error("HTML report (--report {}): {} (the job's verdict is not affected)", path(), status.message());
    else spdlog::debug("HTML report: {}", status.message());
    failed_ = true;
    return;
  }
  if (finished) spdlog::info("HTML report: {}", path());
}

}  // namespace litmus::report
