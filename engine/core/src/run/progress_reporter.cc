// ProgressReporter: the terminal line and the periodic log line (see progress_reporter.h).
#include "run/progress_reporter.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <mutex>
#include <string>

namespace litmus {
namespace {

// One line on stderr; the mutex keeps a redraw and a clear from interleaving their bytes.
std::mutex g_line_mu;
bool g_line_shown = false;

void DrawLine(const std::string& text) {
  std::lock_guard lock(g_line_mu);
  const std::string line = "\r" + text + "\033[K";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
  g_line_shown = true;
}

}  // namespace

void ClearProgressLine() {
  std::lock_guard lock(g_line_mu);
  if (!g_line_shown) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  g_line_shown = false;
}

ProgressReporter::ProgressReporter(bool terminal, std::chrono::milliseconds log_interval)
    : terminal_(terminal), log_interval_(log_interval), last_log_(std::chrono::steady_clock::now()) {}

ProgressReporter::~ProgressReporter() { Clear(); }

void ProgressReporter::StepEvaluated(int64_t steps_evaluated, int64_t step) {
  if (!first_step_at_) first_step_at_ = std::chrono::steady_clock::now();
  steps_evaluated_ = steps_evaluated;
  step_ = step;
  Show(/*waiting=*/false, /*force=*/false);
}

void ProgressReporter::Waiting() { Show(/*waiting=*/true, /*force=*/false); }

void ProgressReporter::Clear() {
  if (terminal_) ClearProgressLine();
}

void ProgressReporter::Show(bool waiting, bool force) {
  const auto now = std::chrono::steady_clock::now();
  const bool draw = terminal_ && (force || now - last_draw_ >= std::chrono::milliseconds(200));
  const bool log = !terminal_ && now - last_log_ >= log_interval_;
  if (!draw && !log) return;
  std::string text = std::to_string(steps_evaluated_) + (steps_evaluated_ == 1 ? " step" : " steps") + " evaluated";
  if (step_) text += ", at step " + std::to_string(*step_);
  if (first_step_at_ && steps_evaluated_ > 1) {
    const double seconds = std::chrono::duration<double>(now - *first_step_at_).count();
    if (seconds > 0) {
      char rate[32];
      std::snprintf(rate, sizeof rate, "%.1f", static_cast<double>(steps_evaluated_ - 1) / seconds);
      text += std::string(", ") + rate + " steps/s";
    }
  }
  if (waiting) text += "; waiting for new steps";
  if (draw) {
    last_draw_ = now;
    DrawLine("litmus: " + text);
  }
  if (log) {
    last_log_ = now;
    spdlog::info("progress: {}", text);
  }
}

}  // namespace litmus
