// EndMarkerWatch: lets `litmus run`'s idle waits end as soon as the end-of-training marker
// appears in a local trial (inotify on each local trial root), so a complete local trial ends
// right after training_job_end.ts is renamed into place instead of at the next poll (issue 16:
// end marker -> exit). S3 trials, local folders that do not exist when the job starts and trials
// that have ended already are not watched: their waits end at the poll interval as before. Not
// thread-safe (the runner's thread only).
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "run/stop_signal.h"

namespace litmus {

class EndMarkerWatch {
 public:
  EndMarkerWatch() = default;
  ~EndMarkerWatch();
  EndMarkerWatch(const EndMarkerWatch&) = delete;
  EndMarkerWatch& operator=(const EndMarkerWatch&) = delete;

  // Watches the local folder `root` (s3:// paths and failures are ignored: polling still works),
  // unless its end marker exists already.
  void Watch(const std::string& root);

  // Sleeps up to `duration` like stop.SleepFor, but returns (false) early once the end marker
  // appeared in a watched root since the last call; true when a stop is requested.
  bool SleepFor(StopSignal& stop, std::chrono::milliseconds duration);

  // Nothing watched is awaited any more (every trial has loaded all its steps): the watch ends,
  // its inotify instance closed on a thread of its own, because closing one waits for an RCU
  // grace period (0.1-20 ms measured, on the job's way out when the destructor did it). Later
  // waits sleep as without a watch; a later Watch starts a new one.
  void Release();

  // Whether something is watched (an inotify instance is open).
  bool watching() const { return fd_ >= 0; }

 private:
  // Reads the pending events; true if one of them is the marker's arrival.
  bool Drain();

  int fd_ = -1;
  std::thread closing_;  // (joined before another Release and by the destructor)
};

}  // namespace litmus
