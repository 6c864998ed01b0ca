// StopWatchdog: makes a stop (SIGTERM/SIGINT or the stop-signal file) end `litmus run` within
// about 2 s whatever a rule does. A thread watches the StopSignal; once a stop is requested it
// raises StopRequested(), on which isolated rules kill their workers at once (IsolatedRule), and
// if the job has still not finished 1.5 s later (an in-process rule that never returns), it
// reports every rule still in progress as Stopped through the JobReporter and ends the process
// with _exit(143). Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace litmus {

class JobReporter;
class StopSignal;

// True once a stop was requested (a signal arrived, or a watchdog saw the stop-signal file).
bool StopRequested();

class StopWatchdog {
 public:
  // `stop` and `reporter` must outlive the watchdog.
  StopWatchdog(StopSignal* stop, JobReporter* reporter, std::chrono::milliseconds grace = std::chrono::milliseconds(1500));
  // The job has finished: the watchdog ends without acting.
  ~StopWatchdog();
  // Every rule has its verdict (the loop ended): from now on a stop changes nothing and the
  // watchdog never acts. Waits for a report the watchdog is writing (it then ends the process).
  void Disarm();

 private:
  void Run();

  StopSignal* stop_;
  JobReporter* reporter_;
  std::chrono::milliseconds grace_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace litmus
