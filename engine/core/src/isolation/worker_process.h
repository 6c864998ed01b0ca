// WorkerProcess: one rule worker child (RuleWorkerExecutable): started with posix_spawn (never
// fork: the runner has oneTBB threads), its own process group (a terminal's Ctrl-C reaches the
// runner only; the runner decides what happens to its rules), the socket on fd 3 and the
// read-only tensor memory on fd 4, stdin from /dev/null, stdout and stderr into a pipe that a
// thread of ours copies into a bounded log file. Thread-compatible.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "litmus/status.h"

namespace litmus::isolation {

// The descriptor numbers a worker finds its connection, tensor memory and progress slot at.
inline constexpr int kWorkerSocketFd = 3;
inline constexpr int kWorkerArenaFd = 4;
inline constexpr int kWorkerProgressFd = 5;  // ProgressSlot
// The exit code of a worker started by a runner of another build (RuleWorkerBuild differs).
inline constexpr int kWorkerExitWrongBuild = 78;

// The program a rule's worker runs: the litmus-rule-worker executable installed with this litmus
// (beside it in a build tree, <prefix>/${CMAKE_INSTALL_LIBEXECDIR}/litmus/ when installed), which
// starts in a third of litmus's time because it loads none of the libraries only the runner needs
// (S3, YAML, ...); or, when there is none, this litmus itself in its hidden worker mode (a litmus
// binary copied on its own keeps working). Found once per process.
const std::string& RuleWorkerExecutable();
// What runner and worker pass and compare (the version of the engine they were built from), so
// that a worker of another litmus never serves this one's protocol.
const char* RuleWorkerBuild();

class WorkerProcess {
 public:
  // Starts the worker: `socket_fd`, `arena_fd` and `progress_fd` (not owned; the caller closes its
  // copies after this returns) become fds 3, 4 and 5 of the child. Its output goes to `log_path` (created on the
  // first byte, at most `log_limit` bytes kept; SetLogPath may change the name until then).
  static StatusOr<std::unique_ptr<WorkerProcess>> Spawn(int socket_fd, int arena_fd, int progress_fd, std::string log_path,
                                                        uint64_t log_limit);
  // Kills the worker if it still runs (SIGKILL), reaps it and joins the log thread.
  ~WorkerProcess();

  pid_t pid() const { return pid_; }
  // The log file's name, for a worker started before it knew its rule.
  void SetLogPath(std::string log_path);
  // SIGKILL (no-op once reaped).
  void Kill();
  // Reaps the worker if it has ended, waiting up to `timeout`; its waitpid status, if it ended.
  std::optional<int> WaitFor(std::chrono::milliseconds timeout);

 private:
  WorkerProcess(pid_t pid, int output_fd, std::string log_path, uint64_t log_limit);
  void PumpOutput();

  pid_t pid_;
  std::optional<int> status_;
  int output_fd_;
  std::mutex log_path_mu_;
  std::string log_path_;  // guarded by log_path_mu_
  uint64_t log_limit_;
  std::thread pump_;
};

}  // namespace litmus::isolation
