// StopSignal: the two ways a rule job is asked to stop (docs/job-contract.md §4, §6.4):
// SIGTERM (and SIGINT) caught by a handler that only sets a flag, and SageMaker's stop-signal
// file — a file in the trial whose content is a Unix time; the job stops once now > that time +
// grace, and any read error of an existing file counts as "stop". Sleeping through StopSignal
// wakes up as soon as a signal arrives, so a stop is honoured within a fraction of a second.
// Thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "litmus/format/env.h"

namespace litmus {

class StopSignal {
 public:
  // Installs the SIGTERM/SIGINT handlers (process-wide; call once).
  static void InstallHandlers();
  // True once SIGTERM or SIGINT arrived.
  static bool SignalReceived();

  // stop_file: path of the stop-signal file (relative to the trial root), if configured.
  StopSignal(Env* env, std::string trial_root, std::optional<std::string> stop_file, double grace_s);

  // True if a signal arrived or the stop-signal file says so (checked at most every 200 ms).
  bool ShouldStop();
  // Sleeps up to `duration`, returning early (true) when a stop is requested, or (false) when
  // `wake_fd` (if >= 0) becomes readable; the caller consumes what made it readable.
  bool SleepFor(std::chrono::milliseconds duration, int wake_fd = -1);
  // Why the job stopped, for the message file and StatusDetails ("SIGTERM received", "stop
  // requested by the stop-signal file F").
  std::string Reason() const;

 private:
  bool StopFileSaysStop();

  Env* env_;
  std::string trial_root_;
  std::optional<std::string> stop_file_;
  double grace_s_;
  std::chrono::steady_clock::time_point last_file_check_{};
  bool file_stop_ = false;
  mutable std::mutex mu_;  // the file check state above (a watchdog thread checks too)
};

}  // namespace litmus
