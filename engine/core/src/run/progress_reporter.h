// Progress of a long `litmus run` (docs/run.md, "Progress"): on a terminal (stderr a TTY) one
// line on stderr rewritten in place ("1234 steps evaluated, at step 5678, 45.6 steps/s");
// elsewhere an info log line at every interval. Log lines clear the terminal line first
// (ClearProgressLine, called by the binary's stderr logger), so the two never mix.
// ProgressReporter is used from one thread; ClearProgressLine is thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace litmus {

class ProgressReporter {
 public:
  ProgressReporter(bool terminal, std::chrono::milliseconds log_interval);
  ~ProgressReporter();  // clears the line
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // After each evaluated step: the job's distinct steps evaluated so far and that step. Cheap:
  // the line is redrawn at most 5 times a second.
  void StepEvaluated(int64_t steps_evaluated, int64_t step);
  // While the job waits for new data.
  void Waiting();
  // Removes the terminal line (before the verdict is printed).
  void Clear();

 private:
  void Show(bool waiting, bool force);

  const bool terminal_;
  const std::chrono::milliseconds log_interval_;
  std::optional<std::chrono::steady_clock::time_point> first_step_at_;
  std::chrono::steady_clock::time_point last_draw_{}, last_log_;
  int64_t steps_evaluated_ = 0;
  std::optional<int64_t> step_;
};

// Erases the progress line from the terminal if one is shown (the stderr logger calls it before
// each log line; the next update draws it again).
void ClearProgressLine();

}  // namespace litmus
