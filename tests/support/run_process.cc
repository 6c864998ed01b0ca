// ChildProcess: fork/exec with pipes for stdout and stderr, /dev/null as stdin, and a deadline.
#include "support/run_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace litmus::testing {

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::vector<std::pair<std::string, std::string>>& extra_env) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return;
  }
  pid_ = fork();
  if (pid_ == 0) {
    const int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (const auto& [key, value] : extra_env) {
      if (value.empty()) {
        unsetenv(key.c_str());
      } else {
        setenv(key.c_str(), value.c_str(), 1);
      }
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !waited_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

void ChildProcess::Signal(int signal) {
  if (pid_ > 0 && !waited_) kill(pid_, signal);
}

template <typename Done>
bool ChildProcess::Collect(std::chrono::steady_clock::time_point deadline, Done&& done) {
  char buffer[65536];
  while ((out_open_ || err_open_) && !done()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fds[2] = {{out_open_ ? out_fd_ : -1, POLLIN, 0}, {err_open_ ? err_fd_ : -1, POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(left.count())) < 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        (i == 0 ? out_open_ : err_open_) = false;
      } else {
        (i == 0 ? out_ : err_).append(buffer, static_cast<size_t>(n));
      }
    }
  }
  return true;
}

bool ChildProcess::WaitForErr(std::string_view text, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return false;
  const auto found = [&] { return err_.find(text) != std::string::npos; };
  return Collect(std::chrono::steady_clock::now() + timeout, found) && found();
}

ProcessResult ChildProcess::Wait(std::chrono::milliseconds timeout) {
  ProcessResult result;
  if (pid_ <= 0) return result;
  if (!Collect(std::chrono::steady_clock::now() + timeout, [] { return false; })) {
    kill(pid_, SIGKILL);
    result.timed_out = true;
  }
  result.out = std::move(out_);
  result.err = std::move(err_);
  int status = 0;
  waitpid(pid_, &status, 0);
  waited_ = true;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::vector<std::pair<std::string, std::string>>& extra_env,
                         std::chrono::milliseconds timeout) {
  ChildProcess child(argv, extra_env);
  return child.Wait(timeout);
}

std::string LitmusBinary() { return LITMUS_BINARY_PATH; }

}  // namespace litmus::testing
