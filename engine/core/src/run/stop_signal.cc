// StopSignal: async-signal-safe flag for SIGTERM/SIGINT, plus the stop-signal file.
#include "run/stop_signal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <ctime>

namespace litmus {
namespace {

std::atomic<bool> g_signal_received{false};
std::atomic<int> g_signal_number{0};  // the first stop signal
int g_wake_pipe[2] = {-1, -1};  // the handler writes one byte so sleepers wake at once

extern "C" void HandleStopSignal(int signal) {
  int none = 0;
  g_signal_number.compare_exchange_strong(none, signal);
  g_signal_received.store(true);
  if (g_wake_pipe[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] ssize_t n = write(g_wake_pipe[1], &byte, 1);
  }
}

}  // namespace

void StopSignal::InstallHandlers() {
  if (g_wake_pipe[0] < 0 && pipe2(g_wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_wake_pipe[0] = g_wake_pipe[1] = -1;
  }
  struct sigaction action {};
  action.sa_handler = HandleStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

bool StopSignal::SignalReceived() { return g_signal_received.load(); }

StopSignal::StopSignal(Env* env, std::string trial_root, std::optional<std::string> stop_file, double grace_s)
    : env_(env), trial_root_(std::move(trial_root)), stop_file_(std::move(stop_file)), grace_s_(grace_s) {}

bool StopSignal::StopFileSaysStop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!stop_file_ || file_stop_) return file_stop_;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_file_check_ < std::chrono::milliseconds(200)) return false;
  last_file_check_ = now;
  const std::string path = Env::JoinPath(trial_root_, *stop_file_);
  auto exists = env_->FileExists(path);
  if (!exists.ok() || !*exists) return false;
  auto content = env_->ReadFileToString(path);
  if (!content.ok()) return file_stop_ = true;  // any read error counts as "stop"
  char* end = nullptr;
  const double requested = std::strtod(content->c_str(), &end);
  if (end == content->c_str()) return file_stop_ = true;
  const double now_s = static_cast<double>(std::time(nullptr));
  file_stop_ = now_s > requested + grace_s_;
  return file_stop_;
}

bool StopSignal::ShouldStop() { return SignalReceived() || StopFileSaysStop(); }

bool StopSignal::SleepFor(std::chrono::milliseconds duration, int wake_fd) {
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (!ShouldStop()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    // Wake at least every 200 ms to look at the stop-signal file.
    const int wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 200));
    pollfd fds[2];
    nfds_t count = 0;
    if (g_wake_pipe[0] >= 0) fds[count++] = {g_wake_pipe[0], POLLIN, 0};
    if (wake_fd >= 0) fds[count++] = {wake_fd, POLLIN, 0};
    if (count == 0) {
      usleep(static_cast<useconds_t>(wait_ms) * 1000);
      continue;
    }
    poll(fds, count, wait_ms);
    if (wake_fd >= 0 && (fds[count - 1].revents & POLLIN) != 0) return ShouldStop();
  }
  return true;
}

std::string StopSignal::Reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (SignalReceived()) return g_signal_number.load() == SIGINT ? "SIGINT received" : "SIGTERM received";
  if (file_stop_) return "stop requested by the stop-signal file " + stop_file_.value_or("");
  return "stop requested";
}

}  // namespace litmus
