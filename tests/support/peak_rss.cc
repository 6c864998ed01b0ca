// PeakRssKib (peak_rss.h): a forked child runs the program and reports its children's peak RSS.
#include "support/peak_rss.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "support/run_process.h"

namespace litmus::testing {

long PeakRssKib(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const char* options = std::getenv("ASAN_OPTIONS");
    std::string value = options != nullptr && *options != '\0' ? std::string(options) + ":" : std::string();
    value += "quarantine_size_mb=0:thread_local_quarantine_size_kb=0";
    setenv("ASAN_OPTIONS", value.c_str(), 1);
    const ProcessResult result = RunProcess(argv);
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    const long kib = result.exit_code == 0 ? usage.ru_maxrss : -1;
    (void)!write(fds[1], &kib, sizeof kib);
    _exit(0);
  }
  close(fds[1]);
  long kib = -1;
  if (read(fds[0], &kib, sizeof kib) != sizeof kib) kib = -1;
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return kib;
}

}  // namespace litmus::testing
