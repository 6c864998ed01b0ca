// poll_bench: the cost of one idle poll of a live trial (issue 16 item 3). Opens TRIAL (a folder
// or s3://bucket/prefix, through the CLI's TrialEnv), refreshes once so that everything present
// is read, then times POLLS refreshes that find nothing new and prints, per poll: CPU time
// (user + sys of the whole process), wall time, Env calls (ListFiles, FileExists, entries the
// listings returned) and, for s3://, the HTTP requests that reached the server.
// Usage: poll_bench TRIAL [--polls N]. S3 endpoint, region and credentials come from the
// environment, as for `litmus`.
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "litmus/aws/http.h"
#include "litmus/aws/trial_env.h"
#include "litmus/engine/trial.h"
#include "litmus/format/forwarding_env.h"

namespace {

using namespace litmus;

// Counts what reaches the S3 server.
class CountingTransport final : public aws::HttpTransport {
 public:
  CountingTransport() : inner_(aws::NewCurlTransport()) {}
  StatusOr<aws::HttpResponse> Send(const aws::HttpRequest& request) override {
    ++requests;
    return inner_->Send(request);
  }
  std::atomic<int64_t> requests{0};

 private:
  std::unique_ptr<aws::HttpTransport> inner_;
};

// Counts the Env calls a refresh makes (the trial's storage questions), delegating to `base`.
class CountingEnv final : public ForwardingEnv {
 public:
  explicit CountingEnv(Env* base) : ForwardingEnv(base) {}
  StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override {
    ++opens;
    return base()->NewRandomAccessFile(path);
  }
  Status ListFiles(const std::string& dir, std::string_view start_after, std::vector<FileEntry>* out) override {
    ++lists;
    Status s = base()->ListFiles(dir, start_after, out);
    listed += static_cast<int64_t>(out->size());
    return s;
  }
  StatusOr<bool> FileExists(const std::string& path) override {
    ++exists;
    return base()->FileExists(path);
  }

  void Reset() { opens = lists = listed = exists = 0; }
  int64_t opens = 0, lists = 0, listed = 0, exists = 0;

 private:
};

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("poll_bench: CPU time, Env calls and S3 requests of one idle poll of a live trial");
  std::string uri;
  int polls = 200;
  app.add_option("trial", uri, "Trial folder or s3://bucket/prefix (without the end marker)")->required();
  app.add_option("--polls", polls, "Idle polls to measure (default 200)")->check(CLI::Range(1, 1000000));
  CLI11_PARSE(app, argc, argv);

  CountingTransport transport;
  aws::TrialEnv trial_env({.transport = &transport, .credentials = nullptr, .region = "", .endpoint = "",
                           .retry = {}, .s3 = {}});
  trial_env.AddTrial(uri);
  CountingEnv env(&trial_env);
  const auto open_start = std::chrono::steady_clock::now();
  auto trial = Trial::Open(&env, uri, TrialOptions::FromEnvironment());
  if (!trial.ok()) {
    std::fprintf(stderr, "poll_bench: %s\n", trial.status().ToString().c_str());
    return 1;
  }
  const double open_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - open_start).count();
  if ((*trial)->end_marker_seen()) {
    std::fprintf(stderr, "poll_bench: %s has ended (training_job_end.ts): polls would not list\n", uri.c_str());
    return 2;
  }
  // The first poll after opening may still pick up files found late; measure from the second on.
  if (Status s = (*trial)->Refresh(); !s.ok()) {
    std::fprintf(stderr, "poll_bench: %s\n", s.ToString().c_str());
    return 1;
  }
  env.Reset();
  transport.requests = 0;
  const double cpu0 = CpuSeconds();
  const auto wall0 = std::chrono::steady_clock::now();
  for (int i = 0; i < polls; ++i) {
    if (Status s = (*trial)->Refresh(); !s.ok()) {
      std::fprintf(stderr, "poll_bench: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double cpu = CpuSeconds() - cpu0;
  const double n = polls;
  std::printf("idle poll of %s (%zu steps, %lld workers, opened in %.2f s): %.1f us CPU, %.1f us wall, "
              "%.1f ListFiles (%.1f entries), %.1f FileExists, %.2f S3 requests per poll (%d polls)\n",
              uri.c_str(), (*trial)->Steps(Mode::kGlobal, true).size(), static_cast<long long>((*trial)->num_workers()),
              open_seconds, cpu / n * 1e6, wall / n * 1e6, static_cast<double>(env.lists) / n,
              static_cast<double>(env.listed) / n, static_cast<double>(env.exists) / n,
              static_cast<double>(transport.requests.load()) / n, polls);
  return 0;
}
