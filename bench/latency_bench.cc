// latency_bench: how long after a step's index file appears `litmus run` reports the step.
// Starts `litmus run` (CustomGradientRule, threshold 0, --keep-going: it fires at every step) on
// an empty trial, writes one step at a time with litmus::writer, and for each step measures the
// time from the index file's rename to the RuleEvaluationConditionMet line in events.jsonl; then
// the time from the end-of-training marker (written by Close() once every step was reported) to
// the process's exit, in the default environment (no SMDEBUG_TRAINING_END_DELAY_REFRESH).
// Usage: latency_bench LITMUS_BINARY CUSTOM_RULE_PLUGIN [--poll-interval-ms N] [--steps N]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "litmus/writer/writer.h"

namespace {

using Clock = std::chrono::steady_clock;

// Number of RuleEvaluationConditionMet lines in events.jsonl so far.
int FiredCount(const std::filesystem::path& events) {
  std::ifstream in(events);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find("RuleEvaluationConditionMet") != std::string::npos;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: latency_bench LITMUS_BINARY CUSTOM_RULE_PLUGIN [--poll-interval-ms N] [--steps N]\n");
    return 2;
  }
  std::string poll = "1000";
  int steps = 10;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--poll-interval-ms") poll = argv[i + 1];
    if (std::string(argv[i]) == "--steps") steps = std::max(1, std::atoi(argv[i + 1]));
  }
  const auto root = std::filesystem::temp_directory_path() / ("litmus-latency-" + std::to_string(getpid()));
  const auto trial = root / "trial", out = root / "out";
  std::filesystem::create_directories(trial);
  std::filesystem::create_directories(out);

  const pid_t pid = fork();
  if (pid == 0) {
    const std::string m = (out / "message").string(), f = (out / "failure").string();
    execl(argv[1], argv[1], "run", "--trial", trial.c_str(), "--plugin", argv[2], "--rule", "CustomGradientRule",
          "--param", "threshold=0", "--keep-going", "--poll-interval-ms", poll.c_str(), "--output-dir", out.c_str(),
          "--message-file", m.c_str(), "--failure-file", f.c_str(), "--logging-level", "error",
          static_cast<char*>(nullptr));
    _exit(127);
  }

  litmus::writer::WriterOptions options;
  options.save_config = litmus::writer::SaveConfig::Every(1);
  options.overwrite_existing = true;
  auto w = litmus::writer::Writer::Open(trial.string(), options);
  if (!w.ok()) {
    std::fprintf(stderr, "latency_bench: %s\n", w.status().ToString().c_str());
    kill(pid, SIGKILL);
    return 2;
  }
  std::vector<double> latencies_ms;
  const std::vector<float> values(256, 0.5f);
  const auto events = out / "events.jsonl";
  for (int step = 0; step < steps; ++step) {
    (void)(*w)->BeginStep();
    (void)(*w)->SaveTensor("gradient/w", values, {256});
    (void)(*w)->EndStep();  // the index file is renamed into place at the end of this call
    const auto published = Clock::now();
    while (FiredCount(events) <= step) {
      if (Clock::now() - published > std::chrono::seconds(30)) {
        std::fprintf(stderr, "latency_bench: step %d was not reported within 30 s\n", step);
        kill(pid, SIGKILL);
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - published).count());
    // Spread the steps over the poll cycle so the numbers are not phase-locked to it.
    std::this_thread::sleep_for(std::chrono::milliseconds(37 + 13 * step % 50));
  }
  (void)(*w)->Close();  // writes training_job_end.ts last
  const auto marker = Clock::now();
  int status = 0;
  waitpid(pid, &status, 0);
  const double exit_ms = std::chrono::duration<double, std::milli>(Clock::now() - marker).count();
  std::filesystem::remove_all(root);

  std::sort(latencies_ms.begin(), latencies_ms.end());
  double sum = 0;
  for (double l : latencies_ms) sum += l;
  std::printf("latency_bench poll %s ms, %d steps: index file -> event line: median %.1f ms, mean %.1f ms, max %.1f ms\n",
              poll.c_str(), steps, latencies_ms[latencies_ms.size() / 2], sum / latencies_ms.size(), latencies_ms.back());
  std::printf("latency_bench poll %s ms: end marker -> process exit %.1f ms (exit status %d)\n", poll.c_str(), exit_ms,
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
