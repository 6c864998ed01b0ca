// s3_bench: the C++ half of bench/s3-bench.sh, against the local S3 test server.
//   s3_bench upload DIR s3://BUCKET/PREFIX [--threads N] [--without-end-marker] [--without-events]
//       uploads a local trial folder with N parallel PUTs (creating the bucket);
//   s3_bench read-all s3://BUCKET/PREFIX [--threads N]
//       reads every tensor of every step through TrialEnv with N concurrent readers (a oneTBB
//       arena of N threads) and prints the throughput: the read path without a rule;
//   s3_bench ranges s3://BUCKET/PREFIX
//       prints "KEY FIRST LAST" for the record of every tensor at every step: the exact byte
//       ranges litmus reads, for a curl baseline that sends the same ranged GETs;
//   s3_bench idle-polls s3://BUCKET/PREFIX [--polls N]
//       opens the trial through litmus's TrialEnv and prints the requests each Refresh (one poll
//       of `litmus run`) sends once nothing new appears: the per-poll cost of following a trial.
// Endpoint, region and credentials come from the environment, as for `litmus`.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <tbb/parallel_for_each.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include "litmus/aws/aws_client.h"
#include "litmus/aws/s3_client.h"
#include "litmus/aws/trial_env.h"
#include "litmus/engine/trial.h"
#include "litmus/format/trial_layout.h"

namespace {

using namespace litmus;

int Fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "s3_bench: %s\n", message.c_str());
  return code;
}

// Counts every request that reaches the server, lists separately.
class CountingTransport final : public aws::HttpTransport {
 public:
  CountingTransport() : inner_(aws::NewCurlTransport()) {}
  StatusOr<aws::HttpResponse> Send(const aws::HttpRequest& request) override {
    ++total;
    if (request.url.find("list-type=2") != std::string::npos) ++lists;
    return inner_->Send(request);
  }
  std::atomic<int> total{0}, lists{0};

 private:
  std::unique_ptr<aws::HttpTransport> inner_;
};

int Upload(const std::string& dir, const std::string& uri, int threads, bool end_marker, bool events) {
  auto location = aws::ParseS3Uri(uri);
  if (!location.ok()) return Fail(location.status().message(), 2);
  auto transport = aws::NewCurlTransport();
  auto credentials = aws::DefaultCredentialsChain();
  const std::string region = aws::ResolveRegion();
  aws::AwsClient client(transport.get(), credentials.get(), region, "s3",
                        aws::ResolveEndpoint("S3", "s3.{region}.amazonaws.com", region));
  aws::S3Client s3(&client, aws::S3Addressing::kPath);
  if (Status s = s3.CreateBucket(location->bucket); !s.ok()) return Fail(s.message(), 1);

  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string relative = std::filesystem::relative(entry.path(), dir).generic_string();
    if (!end_marker && relative == layout::kEndOfJobFile) continue;
    if (!events && relative.starts_with(std::string(layout::kEventsDir) + "/")) continue;
    files.push_back(entry.path());
  }
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::string first_error;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < files.size(); i = next++) {
        std::ifstream in(files[i], std::ios::binary);
        std::stringstream content;
        content << in.rdbuf();
        std::string key = std::filesystem::relative(files[i], dir).generic_string();
        if (!location->key.empty()) key = location->key + "/" + key;
        if (Status s = s3.Put(location->bucket, key, content.str()); !s.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.empty()) first_error = s.message();
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  if (!first_error.empty()) return Fail("upload failed: " + first_error);
  std::printf("uploaded %zu files to %s\n", files.size(), uri.c_str());
  return 0;
}

int ReadAll(const std::string& uri, int threads) {
  aws::TrialEnv env;
  env.AddTrial(uri);
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  options.cache_bytes = 64ull << 20;  // reads, not cache hits
  auto trial = Trial::Open(&env, uri, options);
  if (!trial.ok()) return Fail(trial.status().message());
  std::vector<std::pair<std::string, int64_t>> reads;
  for (const std::string& name : (*trial)->TensorNames()) {
    for (int64_t step : (*trial)->Steps()) reads.emplace_back(name, step);
  }
  std::atomic<uint64_t> bytes{0};
  std::atomic<int> failed{0};
  const uint64_t requests_before = env.s3_requests();
  const auto start = std::chrono::steady_clock::now();
  // More readers than cores is the point for network reads: lift oneTBB's default cap.
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::parallel_for_each(reads.begin(), reads.end(), [&](const std::pair<std::string, int64_t>& read) {
      auto value = (*trial)->Value(read.first, read.second);
      if (value.ok()) {
        bytes += (*value)->bytes().size();
      } else {
        ++failed;
      }
    });
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("read %zu tensors (%.0f MiB, %d unreadable) with %d readers in %.3f s: %.0f MiB/s, %llu requests\n",
              reads.size(), bytes.load() / 1048576.0, failed.load(), threads, seconds, bytes.load() / 1048576.0 / seconds,
              static_cast<unsigned long long>(env.s3_requests() - requests_before));
  return 0;
}

int Ranges(const std::string& uri) {
  aws::TrialEnv env;
  env.AddTrial(uri);
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  auto trial = Trial::Open(&env, uri, options);
  if (!trial.ok()) return Fail(trial.status().message());
  const aws::S3Location root = *aws::ParseS3Uri(uri);
  for (int64_t step : (*trial)->Steps()) {
    for (const std::string& name : (*trial)->TensorNames()) {
      for (const TensorEntry& entry : (*trial)->Entries(name, step)) {
        if (!entry.location || entry.location->length == 0) continue;
        std::printf("%s %llu %llu\n", Env::JoinPath(root.key, *entry.event_file).c_str(),
                    static_cast<unsigned long long>(entry.location->start_idx),
                    static_cast<unsigned long long>(entry.location->start_idx + entry.location->length - 1));
      }
    }
  }
  return 0;
}

int IdlePolls(const std::string& uri, int polls) {
  CountingTransport counting;
  aws::TrialEnv env({.transport = &counting, .credentials = nullptr, .region = "", .endpoint = "", .retry = {},
                     .s3 = {}});
  env.AddTrial(uri);
  auto trial = Trial::Open(&env, uri);
  if (!trial.ok()) return Fail(trial.status().message(), 1);
  const int open_requests = counting.total.load();
  // The first poll may still read index files found late; count from the second on.
  if (Status s = (*trial)->Refresh(); !s.ok()) return Fail(s.message(), 1);
  counting.total = 0;
  counting.lists = 0;
  for (int i = 0; i < polls; ++i) {
    if (Status s = (*trial)->Refresh(); !s.ok()) return Fail(s.message(), 1);
  }
  std::printf("idle trial %s (%zu steps): opening took %d requests; %d polls took %d requests (%d lists): "
              "%.2f requests per poll\n",
              uri.c_str(), (*trial)->Steps(Mode::kGlobal, true).size(), open_requests, polls, counting.total.load(),
              counting.lists.load(), static_cast<double>(counting.total.load()) / polls);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("s3_bench: upload trials to the S3 test server and count requests per idle poll");
  app.require_subcommand(1);
  std::string dir, uri;
  int threads = 8, polls = 20;
  bool without_end = false, without_events = false;
  CLI::App* upload = app.add_subcommand("upload", "Upload a local trial folder");
  upload->add_option("dir", dir, "Trial folder")->required();
  upload->add_option("uri", uri, "s3://bucket/prefix")->required();
  upload->add_option("--threads", threads, "Parallel PUTs (default 8)");
  upload->add_flag("--without-end-marker", without_end, "Leave training_job_end.ts out (an unfinished trial)");
  upload->add_flag("--without-events", without_events, "Leave events/ out (enough for counting listings)");
  CLI::App* idle = app.add_subcommand("idle-polls", "Requests per poll on an idle trial");
  idle->add_option("uri", uri, "s3://bucket/prefix")->required();
  idle->add_option("--polls", polls, "Polls to count (default 20)");
  CLI::App* read_all = app.add_subcommand("read-all", "Read every tensor with N concurrent readers");
  read_all->add_option("uri", uri, "s3://bucket/prefix (or a local folder)")->required();
  read_all->add_option("--threads", threads, "Concurrent readers (default 8)");
  CLI::App* ranges = app.add_subcommand("ranges", "Print the byte range of every tensor record");
  ranges->add_option("uri", uri, "s3://bucket/prefix")->required();
  CLI11_PARSE(app, argc, argv);
  if (ranges->parsed()) return Ranges(uri);
  if (upload->parsed()) return Upload(dir, uri, threads, !without_end, !without_events);
  if (read_all->parsed()) return ReadAll(uri, threads);
  return IdlePolls(uri, polls);
}
