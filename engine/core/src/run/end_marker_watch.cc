// EndMarkerWatch: inotify (IN_CREATE | IN_MOVED_TO) on local trial roots, read non-blocking.
#include "run/end_marker_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <string_view>
#include <system_error>
#include <utility>

#include "litmus/format/trial_layout.h"

namespace litmus {

EndMarkerWatch::~EndMarkerWatch() {
  if (fd_ >= 0) close(fd_);
  if (closing_.joinable()) closing_.join();
}

void EndMarkerWatch::Release() {
  if (fd_ < 0) return;
  if (closing_.joinable()) closing_.join();
  const int fd = std::exchange(fd_, -1);
  try {
    closing_ = std::thread([fd] { close(fd); });
  } catch (const std::system_error&) {
    close(fd);  // (no thread to be had: closed here, waiting as before)
  }
}

void EndMarkerWatch::Watch(const std::string& root) {
  if (root.rfind("s3://", 0) == 0) return;
  // A trial that has ended already has nothing to wait for (a marker is never taken back): no
  // inotify instance, whose close would wait for an RCU grace period (up to 0.1 s measured).
  const std::string marker = root + "/" + std::string(layout::kEndOfJobFile);
  if (access(marker.c_str(), F_OK) == 0) return;
  if (fd_ < 0) fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) return;
  // The writer renames training_job_end.ts.tmp into place (IN_MOVED_TO); a plain create counts too.
  (void)inotify_add_watch(fd_, root.c_str(), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
}

bool EndMarkerWatch::Drain() {
  bool marker = false;
  alignas(inotify_event) char buffer[4096];
  while (true) {
    const ssize_t n = read(fd_, buffer, sizeof(buffer));
    if (n <= 0) break;  // EAGAIN: nothing more (or an error: polling still works)
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      if (event->len > 0 && std::string_view(event->name) == layout::kEndOfJobFile) marker = true;
      if (event->mask & IN_Q_OVERFLOW) marker = true;  // events were lost: look
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  return marker;
}

bool EndMarkerWatch::SleepFor(StopSignal& stop, std::chrono::milliseconds duration) {
  if (fd_ < 0) return stop.SleepFor(duration);
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    if (stop.SleepFor(left, fd_)) return true;
    if (Drain()) return false;
  }
}

}  // namespace litmus
