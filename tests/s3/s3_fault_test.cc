// Faults between `litmus run` and a real S3 server: a proxy on 127.0.0.1 in front of the test
// server answers some requests with 503 SlowDown or 500, drops some connections without an
// answer and delays others. Each distinct request fails at most twice (fewer than the client's
// attempts), so the job must retry, lose no step and reach the verdict it reaches on the local
// folder: for a finished trial and for one that grows while the runner follows it.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>

#include "litmus/aws/http.h"
#include "s3/s3_test_server.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "unit/aws/local_http_server.h"

namespace litmus {
namespace {

using testing::FiredSteps;
using testing::LitmusRunArgs;
using testing::LitmusS3Env;
using testing::ProcessResult;
using testing::RunProcess;
using testing::ServedRequest;
using testing::ServedResponse;

constexpr char kBucket[] = "litmus-faults";

class FaultyProxy {
 public:
  FaultyProxy()
      : upstream_(aws::NewCurlTransport()),
        server_([this](const ServedRequest& request) { return Handle(request); }) {}

  std::string url() const { return server_.url(); }
  int slowdowns() const { return slowdowns_.load(); }
  int errors() const { return errors_.load(); }
  int drops() const { return drops_.load(); }
  int delays() const { return delays_.load(); }

 private:
  ServedResponse Handle(const ServedRequest& request) {
    // The plan of a request depends only on what it asks for, so its retries are recognised.
    const std::string key = request.method + " " + request.target + " " + request.Header("range");
    int attempt;
    {
      std::lock_guard<std::mutex> lock(mu_);
      attempt = ++attempts_[key];
    }
    switch (std::hash<std::string>{}(key) % 5) {
      case 1:
        if (attempt == 1) return Fail(503, "SlowDown", &slowdowns_);
        break;
      case 2:
        if (attempt == 1) return Fail(500, "InternalError", &errors_);
        if (attempt == 2) return Drop();
        break;
      case 3:
        if (attempt == 1) return Drop();
        break;
      case 4:
        if (attempt == 1) {
          ServedResponse delayed = Forward(request);
          delayed.delay = std::chrono::milliseconds(300);
          ++delays_;
          return delayed;
        }
        break;
      default:
        break;
    }
    return Forward(request);
  }

  static ServedResponse Fail(int status, const std::string& code, std::atomic<int>* counter) {
    ++*counter;
    return {.status = status, .headers = {{"Content-Type", "application/xml"}},
            .body = "<?xml version=\"1.0\"?><Error><Code>" + code + "</Code><Message>injected</Message></Error>",
            .delay = {}, .drop_connection = false};
  }
  ServedResponse Drop() {
    ++drops_;
    return {.status = 0, .headers = {}, .body = "", .delay = {}, .drop_connection = true};
  }

  ServedResponse Forward(const ServedRequest& request) {
    aws::HttpRequest out{.method = request.method, .url = testing::S3Endpoint() + request.target, .headers = {},
                         .body = request.body};
    for (const auto& [name, value] : request.headers) {
      if (name != "content-length" && name != "connection" && name != "expect" && name != "accept") {
        out.headers.emplace_back(name, value);  // Host included: the signature covers it
      }
    }
    StatusOr<aws::HttpResponse> answer = upstream_->Send(out);
    if (!answer.ok()) return {.status = 502, .headers = {}, .body = "", .delay = {}, .drop_connection = false};
    ServedResponse response{.status = static_cast<int>(answer->status), .headers = {}, .body = answer->body,
                            .delay = {}, .drop_connection = false};
    for (const auto& [name, value] : answer->headers) {
      const bool length = name == "content-length";
      if ((length && request.method == "HEAD") || (!length && name != "transfer-encoding" && name != "connection")) {
        response.headers.emplace_back(name, value);
      }
    }
    return response;
  }

  std::unique_ptr<aws::HttpTransport> upstream_;
  std::mutex mu_;
  std::map<std::string, int> attempts_;
  std::atomic<int> slowdowns_{0}, errors_{0}, drops_{0}, delays_{0};
  testing::LocalHttpServer server_;  // last: stopped first, while the members it uses still live
};

std::vector<std::string> Rule(const std::string& threshold) {
  return {"--plugin", LITMUS_CUSTOM_RULE_PLUGIN, "--rule", "CustomGradientRule", "--param",
          "threshold=" + threshold, "--keep-going"};
}

TEST(S3Faults, FinishedTrialsGiveTheLocalVerdicts) {
  testing::S3TestClient client;
  for (const char* fixture : {"pt_exploding", "pt_ddp_two_workers"}) {
    client.UploadTree(kBucket, fixture, testing::FixturePath(fixture));
  }
  FaultyProxy proxy;
  for (const char* fixture : {"pt_exploding", "pt_ddp_two_workers"}) {
    SCOPED_TRACE(fixture);
    testing::TempDir local_out, s3_out;
    std::vector<std::string> local_args = Rule("0.1"), s3_args = Rule("0.1");
    local_args.insert(local_args.end(), {"--trial", testing::FixturePath(fixture).string()});
    s3_args.insert(s3_args.end(), {"--trial", std::string("s3://") + kBucket + "/" + fixture});
    const ProcessResult local = RunProcess(LitmusRunArgs(local_out.path(), local_args), LitmusS3Env());
    const ProcessResult remote = RunProcess(LitmusRunArgs(s3_out.path(), s3_args), LitmusS3Env(proxy.url()));
    ASSERT_FALSE(remote.timed_out);
    EXPECT_EQ(remote.exit_code, local.exit_code) << remote.err;
    EXPECT_EQ(FiredSteps(s3_out.path()), FiredSteps(local_out.path()));
  }
  // The faults really happened.
  EXPECT_GT(proxy.slowdowns(), 0);
  EXPECT_GT(proxy.errors(), 0);
  EXPECT_GT(proxy.drops(), 0);
  EXPECT_GT(proxy.delays(), 0);
}

TEST(S3Faults, AGrowingTrialLosesNoStep) {
  const std::filesystem::path source = testing::FixturePath("pt_ddp_two_workers");
  const std::string prefix = "growing-" + std::to_string(::getpid());
  testing::TempDir local_out, s3_out;
  std::vector<std::string> local_args = Rule("0.1");
  local_args.insert(local_args.end(), {"--trial", source.string()});
  const ProcessResult local = RunProcess(LitmusRunArgs(local_out.path(), local_args), LitmusS3Env());

  FaultyProxy proxy;
  testing::S3TestClient client;
  client.UploadCollections(kBucket, prefix, source);
  std::vector<std::string> s3_args = Rule("0.1");
  s3_args.insert(s3_args.end(), {"--trial", std::string("s3://") + kBucket + "/" + prefix});
  testing::ChildProcess runner(LitmusRunArgs(s3_out.path(), s3_args), LitmusS3Env(proxy.url()));
  client.UploadStepByStep(kBucket, prefix, source, std::chrono::milliseconds(80));
  const ProcessResult result = runner.Wait(std::chrono::seconds(180));
  ASSERT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, local.exit_code) << result.err;
  EXPECT_EQ(FiredSteps(s3_out.path()), FiredSteps(local_out.path()));
  EXPECT_GT(proxy.slowdowns() + proxy.errors() + proxy.drops(), 0);
}

}  // namespace
}  // namespace litmus
