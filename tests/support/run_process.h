// Running a program (the real `litmus` binary in end-to-end tests) with arguments and extra
// environment, no standard input, capturing stdout/stderr. ChildProcess lets a test act while it
// runs (send SIGTERM, grow the trial); RunProcess is the blocking shorthand. Thread-compatible.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
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
  // Collects output until the process exits; kills it (SIGKILL) after `timeout`. The result
  // holds everything the process wrote, WaitForErr's part included.
  ProcessResult Wait(std::chrono::milliseconds timeout = std::chrono::seconds(120));
  // Collects output until stderr holds `text`: true then; false if the process closed its output
  // or `timeout` passed first. For a test that must act once the process got somewhere (a fixed
  // sleep instead fails on a slow or loaded machine).
  bool WaitForErr(std::string_view text, std::chrono::milliseconds timeout = std::chrono::seconds(60));

 private:
  // Reads what stdout and stderr hold into out_/err_, waiting up to `deadline`; stops early
  // when `done` says so. Returns false at the deadline.
  template <typename Done>
  bool Collect(std::chrono::steady_clock::time_point deadline, Done&& done);

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool out_open_ = true;
  bool err_open_ = true;
  std::string out_;
  std::string err_;
  bool waited_ = false;
};

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::vector<std::pair<std::string, std::string>>& extra_env = {},
                         std::chrono::milliseconds timeout = std::chrono::seconds(120));

// Path of the litmus binary under test (set by CMake).
std::string LitmusBinary();

}  // namespace litmus::testing
