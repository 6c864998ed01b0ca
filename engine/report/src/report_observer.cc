// ReportObserver: see report_observer.h.
#include "report_observer.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace litmus::report {

ReportObserver::ReportObserver(ReportOptions options, Env* files, Env* trial_env)
    : generator_(std::move(options), files, trial_env) {}

void ReportObserver::FilesWritten(bool finished) {
  const auto now = std::chrono::steady_clock::now();
  if (!finished && written_ && now - last_ < kInterval) return;
  last_ = now;
  written_ = true;
  if (Status status = generator_.Write(); !status.ok()) {
    if (!failed_) spdlog::error("HTML report (--report {}): {} (the job's verdict is not affected)", path(), status.message());
    else spdlog::debug("HTML report: {}", status.message());
    failed_ = true;
    return;
  }
  if (finished) spdlog::info("HTML report: {}", path());
}

}  // namespace litmus::report
