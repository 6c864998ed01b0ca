// WorkerProcess: which program a worker runs, posix_spawn of it, output pump, kill and reap.
// Thread-compatible.
#include "isolation/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

extern char** environ;

namespace litmus::isolation {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string FindRuleWorkerExecutable() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "/proc/self/exe";
  for (const fs::path& candidate : {exe.parent_path() / "litmus-rule-worker",
                                    exe.parent_path() / ".." / LITMUS_INSTALL_RULE_WORKER_SUBDIR / "litmus-rule-worker"}) {
    if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate, ec)) {
      return fs::weakly_canonical(candidate, ec).string();
    }
  }
  return "/proc/self/exe";
}

}  // namespace

const std::string& RuleWorkerExecutable() {
  static const std::string path = [] {
    std::string found = FindRuleWorkerExecutable();
    spdlog::debug("rule workers run {}", found == "/proc/self/exe" ? "this litmus itself (no litmus-rule-worker "
                                                                      "beside it)"
                                                                    : found);
    return found;
  }();
  return path;
}

const char* RuleWorkerBuild() { return LITMUS_ENGINE_VERSION; }

StatusOr<std::unique_ptr<WorkerProcess>> WorkerProcess::Spawn(int socket_fd, int arena_fd, int progress_fd,
                                                              std::string log_path,
                                                              uint64_t log_limit) {
  int output[2];
  if (pipe2(output, O_CLOEXEC) != 0) return InternalError(Errno("rule worker: pipe"));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, output[1], 1);
  posix_spawn_file_actions_adddup2(&actions, output[1], 2);
  posix_spawn_file_actions_adddup2(&actions, socket_fd, kWorkerSocketFd);
  posix_spawn_file_actions_adddup2(&actions, arena_fd, kWorkerArenaFd);
  posix_spawn_file_actions_adddup2(&actions, progress_fd, kWorkerProgressFd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group; default dispositions and an empty mask for the signals the runner handles.
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&empty);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  const std::string parent = std::to_string(getpid());
  const std::string& program = RuleWorkerExecutable();
  std::vector<char*> argv = {const_cast<char*>("litmus-rule-worker"), const_cast<char*>("__rule-worker"),
                             const_cast<char*>(parent.c_str()), const_cast<char*>(RuleWorkerBuild()), nullptr};
  pid_t pid = -1;
  const int error = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(output[1]);
  if (error != 0) {
    close(output[0]);
    errno = error;
    return InternalError(Errno("rule worker: posix_spawn " + program));
  }
  return std::unique_ptr<WorkerProcess>(new WorkerProcess(pid, output[0], std::move(log_path), log_limit));
}

WorkerProcess::WorkerProcess(pid_t pid, int output_fd, std::string log_path, uint64_t log_limit)
    : pid_(pid), output_fd_(output_fd), log_path_(std::move(log_path)), log_limit_(log_limit) {
  pump_ = std::thread([this] { PumpOutput(); });
}

WorkerProcess::~WorkerProcess() {
  if (!status_) {
    Kill();
    WaitFor(std::chrono::hours(1));
  }
  // The pipe reaches EOF once the worker (and anything it started) has exited.
  if (pump_.joinable()) pump_.join();
  close(output_fd_);
}

void WorkerProcess::SetLogPath(std::string log_path) {
  std::lock_guard<std::mutex> lock(log_path_mu_);
  log_path_ = std::move(log_path);
}

void WorkerProcess::Kill() {
  // The whole process group the worker leads: processes a plugin started die with it (and
  // cannot keep its output pipe open).
  if (!status_) kill(-pid_, SIGKILL);
}

std::optional<int> WorkerProcess::WaitFor(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  useconds_t pause = 50;  // an exiting worker is usually reaped within a few of these
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      status_ = status;
      return status_;
    }
    if (r < 0 && errno != EINTR) {
      status_ = 0;  // not our child any more (cannot happen): treat as gone
      return status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    usleep(pause);
    pause = std::min<useconds_t>(pause * 2, 5000);
  }
}

void WorkerProcess::PumpOutput() {
  // Copies the worker's output into the log file up to the limit, then only drains the pipe, so
  // a plugin that writes without end never blocks on a full pipe nor fills the disk.
  int log_fd = -1;
  uint64_t written = 0;
  bool truncated = false;
  char buffer[64 * 1024];
  while (true) {
    const ssize_t n = read(output_fd_, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (written >= log_limit_) {
      if (!truncated && log_fd >= 0) {
        static constexpr char kNote[] = "\n[litmus: the rest of this worker's output was dropped (limit reached)]\n";
        [[maybe_unused]] ssize_t w = write(log_fd, kNote, sizeof(kNote) - 1);
      }
      truncated = true;
      continue;
    }
    if (log_fd < 0) {
      std::string path;
      {
        std::lock_guard<std::mutex> lock(log_path_mu_);
        path = log_path_;
      }
      // The folder too: most rules print nothing, and get no file.
      std::error_code ec;
      std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
      log_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (log_fd < 0) {
        written = log_limit_;  // cannot log: drain only
        truncated = true;
        continue;
      }
    }
    const size_t keep = static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(n), log_limit_ - written));
    size_t done = 0;
    while (done < keep) {
      const ssize_t w = write(log_fd, buffer + done, keep - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    written += keep;
  }
  if (log_fd >= 0) close(log_fd);
}

}  // namespace litmus::isolation
