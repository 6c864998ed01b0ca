// StopWatchdog: the stop flag and the thread that enforces the stop deadline. Thread-safe.
#include "isolation/stop_watchdog.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "run/job_report.h"
#include "run/stop_signal.h"

namespace litmus {
namespace {

std::atomic<bool> g_stop_requested{false};

constexpr int kExitStopped = 143;

}  // namespace

bool StopRequested() { return g_stop_requested.load() || StopSignal::SignalReceived(); }

StopWatchdog::StopWatchdog(StopSignal* stop, JobReporter* reporter, std::chrono::milliseconds grace)
    : stop_(stop), reporter_(reporter), grace_(grace) {
  thread_ = std::thread([this] { Run(); });
}

StopWatchdog::~StopWatchdog() {
  Disarm();
  thread_.join();
}

void StopWatchdog::Disarm() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
  }
  cv_.notify_all();
}

void StopWatchdog::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  // Watch for the stop at the StopSignal's own pace (it reads the stop-signal file at most every
  // 200 ms).
  while (!finished_) {
    lock.unlock();
    const bool stop = stop_->ShouldStop();
    lock.lock();
    if (stop) break;
    cv_.wait_for(lock, std::chrono::milliseconds(100));
  }
  if (finished_) return;
  g_stop_requested.store(true);
  if (cv_.wait_for(lock, grace_, [this] { return finished_; })) return;
  // The job did not wind down (a rule that never returns runs in this process): report and end.
  spdlog::warn("stop requested {} ms ago and a rule has not returned; ending the job now", grace_.count());
  // (mu_ stays held: Disarm waits, and the process ends here.)
  const std::string line = "Stopped: " + stop_->Reason();
  reporter_->StopRulesInProgress(line);
  reporter_->Finish(kExitStopped, line);
  _exit(kExitStopped);
}

}  // namespace litmus
