// RunProcess: runs a program (the real `litmus` binary in end-to-end tests) with arguments and
// extra environment, no standard input, capturing stdout/stderr. Blocking; thread-compatible.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace litmus::testing {

struct ProcessResult {
  int exit_code = -1;   // 128 + signal if killed by a signal
  std::string out;
  std::string err;
  bool timed_out = false;
};

// Kills the process (SIGKILL) if it runs longer than `timeout`; then timed_out is set.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::vector<std::pair<std::string, std::string>>& extra_env = {},
                         std::chrono::milliseconds timeout = std::chrono::seconds(120));

// Path of the litmus binary under test (set by CMake).
std::string LitmusBinary();

}  // namespace litmus::testing
