// Running a program (the real `litmus` binary in end-to-end tests) with arguments and extra
// environment, no standard input, capturing stdout/stderr. ChildProcess lets a test act while it
// runs (send SIGTERM, grow the trial); RunProcess is the blocking shorthand. Thread-compatible.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace litmus::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal if killed by a signal
  std::string out;
  std::string err;
  bool timed_out = false;
};

class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv,
               const std::vector<std::pair<std::string, std::string>>& extra_env = {});
  ~ChildProcess();  // kills the process if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int signal);
  // Collects output until the process exits; kills it (SIGKILL) after `timeout`.
  ProcessResult Wait(std::chrono::milliseconds timeout = std::chrono::seconds(120));

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool waited_ = false;
};

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::vector<std::pair<std::string, std::string>>& extra_env = {},
                         std::chrono::milliseconds timeout = std::chrono::seconds(120));

// Path of the litmus binary under test (set by CMake).
std::string LitmusBinary();

}  // namespace litmus::testing
