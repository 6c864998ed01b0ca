// S3Env and TrialEnv over an in-memory S3 (FakeS3): the smdebug fixtures read through S3 agree
// with smdebug's expected.json; an idle poll costs one list request; a growing trial (late
// workers included) is followed completely; reads are ranged GETs of exactly the bytes asked
// for; errors name bucket and key.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <fstream>
#include <sstream>
#include <thread>

#include "interop/fixture_comparer.h"
#include "litmus/aws/s3_env.h"
#include "litmus/aws/trial_env.h"
#include "litmus/engine/trial.h"
#include "litmus/format/trial_layout.h"
#include "support/temp_dir.h"
#include "unit/aws/fake_s3.h"

namespace litmus::aws {
namespace {

using testing::FakeS3;

std::string ReadLocal(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

// Records the Range header of every GET, then forwards to the fake.
class RecordingTransport final : public HttpTransport {
 public:
  explicit RecordingTransport(HttpTransport* inner) : inner_(inner) {}
  StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, value] : request.headers) {
      if (name == "Range") ranges.push_back(value);
    }
    return inner_->Send(request);
  }
  std::vector<std::string> ranges;

 private:
  std::mutex mu_;
  HttpTransport* inner_;
};

// Fails the first one or two attempts of some requests (by what they ask for, so retries are
// recognised): 503 SlowDown, 500, a dropped connection, or a throttling code in a 400.
class FlakyTransport final : public HttpTransport {
 public:
  explicit FlakyTransport(HttpTransport* inner) : inner_(inner) {}
  StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    std::string key = request.method + " " + request.url;
    for (const auto& [name, value] : request.headers) {
      if (name == "Range") key += " " + value;
    }
    int attempt;
    {
      std::lock_guard<std::mutex> lock(mu_);
      attempt = ++attempts_[key];
    }
    auto error = [&](long status, const std::string& code) -> StatusOr<HttpResponse> {
      ++faults;
      return HttpResponse{.status = status, .headers = {}, .body = "<Error><Code>" + code + "</Code></Error>"};
    };
    switch (std::hash<std::string>{}(key) % 4) {
      case 1:
        if (attempt == 1) return error(503, "SlowDown");
        break;
      case 2:
        if (attempt == 1) return error(500, "InternalError");
        if (attempt == 2) {
          ++faults;
          return UnavailableError("connection reset by peer");
        }
        break;
      case 3:
        if (attempt == 1) return error(400, "RequestTimeout");
        break;
      default:
        break;
    }
    return inner_->Send(request);
  }
  std::atomic<int> faults{0};

 private:
  HttpTransport* inner_;
  std::mutex mu_;
  std::map<std::string, int> attempts_;
};

class S3EnvTest : public ::testing::Test {
 protected:
  S3EnvTest() : credentials_(StaticCredentials({.access_key_id = "AKIDFAKE", .secret_access_key = "S3CRET-VALUE",
                                                .session_token = "", .expiration = std::nullopt})) {
    fake_.CreateBucket("bucket");
  }

  std::unique_ptr<TrialEnv> MakeEnv(HttpTransport* transport = nullptr) {
    return std::make_unique<TrialEnv>(TrialEnvOptions{
        .transport = transport != nullptr ? transport : &fake_,
        .credentials = credentials_.get(),
        .region = "us-east-1",
        .endpoint = "http://fake.invalid",
        .retry = {.max_attempts = 3, .base_delay = std::chrono::milliseconds(1), .max_delay = std::chrono::milliseconds(2)},
        .s3 = {}});
  }

  static TrialOptions FastOptions() {
    TrialOptions options;
    options.training_end_delay_refresh_s = 0;
    return options;
  }

  FakeS3 fake_;
  std::unique_ptr<CredentialsProvider> credentials_;
};

TEST_F(S3EnvTest, FixturesThroughS3AgreeWithSmdebug) {
  for (const char* fixture : {"pt_exploding", "synthetic_dtypes", "pt_ddp_two_workers", "pt_run_partial",
                              "pt_run_complete"}) {
    SCOPED_TRACE(fixture);
    fake_.PutTree("bucket", std::string("trials/") + fixture, testing::FixturePath(fixture).string());
    auto env = MakeEnv();
    const std::string root = std::string("s3://bucket/trials/") + fixture;
    env->AddTrial(root);
    LITMUS_ASSERT_OK_AND_ASSIGN(auto trial, Trial::Open(env.get(), root, FastOptions()));
    const testing::FixtureComparison result = testing::CompareFixtureWithExpected(fixture, *trial, env.get());
    EXPECT_GT(result.compared_values, 0);
  }
}

TEST_F(S3EnvTest, AnIdlePollIsOneListRequest) {
  fake_.PutTree("bucket", "run", testing::FixturePath("pt_run_partial").string());  // no end marker
  auto env = MakeEnv();
  env->AddTrial("s3://bucket/run");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto trial, Trial::Open(env.get(), "s3://bucket/run", FastOptions()));
  ASSERT_FALSE(trial->Steps(Mode::kGlobal, true).empty());
  for (int poll = 0; poll < 5; ++poll) {
    fake_.ResetCounts();
    LITMUS_ASSERT_OK(trial->Refresh());
    EXPECT_EQ(fake_.total(), 1) << "poll " << poll;
    EXPECT_EQ(fake_.count("list"), 1) << "poll " << poll;
  }
}

// Uploads a fixture step by step (events file, then index file, as smdebug publishes them),
// polling in between, then the end marker: every step is seen, each exactly once.
TEST_F(S3EnvTest, FollowsAGrowingTrialWithLateWorkers) {
  const std::filesystem::path source = testing::FixturePath("pt_ddp_two_workers");
  // Collections first (written by each worker before its first step).
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source / "collections")) {
    if (entry.is_regular_file()) {
      fake_.PutObject("bucket", "grow/" + std::filesystem::relative(entry.path(), source).generic_string(),
                      ReadLocal(entry.path()));
    }
  }
  std::vector<int64_t> steps;
  for (const auto& entry : std::filesystem::directory_iterator(source / "events")) {
    steps.push_back(std::stoll(entry.path().filename().string()));
  }
  std::sort(steps.begin(), steps.end());
  auto env = MakeEnv();
  env->AddTrial("s3://bucket/grow");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto trial, Trial::Open(env.get(), "s3://bucket/grow", FastOptions()));
  auto upload = [&](int64_t step, const std::string& worker) {
    for (const std::string& relative : {layout::EventFilePath(step, worker), layout::IndexFilePath(step, worker)}) {
      if (std::filesystem::exists(source / relative)) {
        fake_.PutObject("bucket", "grow/" + relative, ReadLocal(source / relative));
      }
    }
  };
  // worker_1 lags two steps behind worker_0: its files sort *before* the newest index file.
  for (size_t i = 0; i < steps.size(); ++i) {
    upload(steps[i], "worker_0");
    if (i >= 2) upload(steps[i - 2], "worker_1");
    LITMUS_ASSERT_OK(trial->Refresh());
    if (i >= 2) {
      EXPECT_EQ(trial->WorkersForStep(steps[i - 2]).size(), 2u) << "step " << steps[i - 2];
    }
  }
  for (size_t i = steps.size() - 2; i < steps.size(); ++i) upload(steps[i], "worker_1");
  fake_.PutObject("bucket", "grow/training_job_end.ts", ReadLocal(source / "training_job_end.ts"));
  for (int poll = 0; poll < 3 && !trial->loaded_all_steps(); ++poll) LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_TRUE(trial->loaded_all_steps());
  EXPECT_EQ(trial->Steps(), steps);
  for (int64_t step : steps) EXPECT_EQ(trial->WorkersForStep(step).size(), 2u) << "step " << step;

  // The same trial read at once from a finished upload gives the same catalog.
  auto fresh_env = MakeEnv();
  LITMUS_ASSERT_OK_AND_ASSIGN(auto whole, Trial::Open(fresh_env.get(), "s3://bucket/grow", FastOptions()));
  EXPECT_EQ(whole->Steps(), trial->Steps());
  EXPECT_EQ(whole->TensorNames(), trial->TensorNames());
}

TEST_F(S3EnvTest, ReadsAreRangedGetsOfExactlyTheBytesAsked) {
  std::string content(1000, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7);
  fake_.PutObject("bucket", "t/events/file", content);
  RecordingTransport recording(&fake_);
  auto env = MakeEnv(&recording);
  env->AddTrial("s3://bucket/t");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto file, env->NewRandomAccessFile("s3://bucket/t/events/file"));
  LITMUS_ASSERT_OK_AND_ASSIGN(uint64_t size, file->Size());
  EXPECT_EQ(size, 1000u);
  std::string buffer(100, '\0');
  LITMUS_ASSERT_OK_AND_ASSIGN(size_t n, file->Read(123, std::as_writable_bytes(std::span(buffer))));
  EXPECT_EQ(n, 100u);
  EXPECT_EQ(buffer, content.substr(123, 100));
  LITMUS_ASSERT_OK_AND_ASSIGN(n, file->Read(950, std::as_writable_bytes(std::span(buffer))));  // past the end
  EXPECT_EQ(n, 50u);
  EXPECT_EQ(buffer.substr(0, 50), content.substr(950));
  LITMUS_ASSERT_OK_AND_ASSIGN(n, file->Read(1000, std::as_writable_bytes(std::span(buffer))));
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(recording.ranges, (std::vector<std::string>{"bytes=123-222", "bytes=950-999"}));

  // Many threads at once (the runner's prefetch): every read gets its own bytes.
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const uint64_t offset = static_cast<uint64_t>((t * 97 + i * 13) % 900);
        std::string out(64, '\0');
        auto got = file->Read(offset, std::as_writable_bytes(std::span(out)));
        if (!got.ok() || *got != 64 || out != content.substr(offset, 64)) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(S3EnvTest, RetriesHideTransientFaults) {
  fake_.PutTree("bucket", "faulty/pt_ddp_two_workers", testing::FixturePath("pt_ddp_two_workers").string());
  FlakyTransport flaky(&fake_);
  auto env = MakeEnv(&flaky);
  env->AddTrial("s3://bucket/faulty/pt_ddp_two_workers");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto trial, Trial::Open(env.get(), "s3://bucket/faulty/pt_ddp_two_workers", FastOptions()));
  const testing::FixtureComparison result = testing::CompareFixtureWithExpected("pt_ddp_two_workers", *trial, env.get());
  EXPECT_GT(result.compared_values, 0);
  EXPECT_GT(flaky.faults.load(), 10);
}

TEST_F(S3EnvTest, ErrorsNameBucketAndKey) {
  auto env = MakeEnv();
  auto missing_bucket = Trial::Open(env.get(), "s3://nosuchbucket/trial", FastOptions());
  ASSERT_FALSE(missing_bucket.ok());
  EXPECT_EQ(missing_bucket.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing_bucket.status().message().find("bucket 'nosuchbucket' does not exist"), std::string::npos)
      << missing_bucket.status().message();

  auto bad_name = Trial::Open(env.get(), "s3://Not_A_Bucket/trial", FastOptions());
  EXPECT_EQ(bad_name.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_name.status().message().find("'Not_A_Bucket'"), std::string::npos);

  FakeS3 other_key("AKIDOTHER");
  other_key.CreateBucket("bucket");
  auto denied_env = MakeEnv(&other_key);
  auto denied = Trial::Open(denied_env.get(), "s3://bucket/trial", FastOptions());
  ASSERT_FALSE(denied.ok());
  EXPECT_NE(denied.status().message().find("s3://bucket/trial"), std::string::npos) << denied.status().message();
  EXPECT_NE(denied.status().message().find("access denied"), std::string::npos) << denied.status().message();
  EXPECT_EQ(denied.status().message().find("S3CRET-VALUE"), std::string::npos);

  auto missing_object = env->NewRandomAccessFile("s3://bucket/trial/events/x");
  EXPECT_EQ(missing_object.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing_object.status().message().find("s3://bucket/trial/events/x"), std::string::npos);
}

TEST_F(S3EnvTest, AnEmptyPrefixIsATrialNotStartedYet) {
  auto env = MakeEnv();
  env->AddTrial("s3://bucket/not-yet");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto trial, Trial::Open(env.get(), "s3://bucket/not-yet", FastOptions()));
  EXPECT_FALSE(trial->collections_ready());
  fake_.ResetCounts();
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(fake_.total(), 1) << "waiting for training costs one list per poll too";
  fake_.PutTree("bucket", "not-yet", testing::FixturePath("pt_run_complete").string());
  for (int poll = 0; poll < 3 && !trial->loaded_all_steps(); ++poll) LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_TRUE(trial->collections_ready());
  EXPECT_EQ(trial->Steps().size(), 16u);
}

TEST_F(S3EnvTest, LocalPathsStillGoToTheLocalFilesystem) {
  auto env = MakeEnv();
  const std::string local = testing::FixturePath("pt_run_complete").string();
  env->AddTrial(local);
  LITMUS_ASSERT_OK_AND_ASSIGN(auto trial, Trial::Open(env.get(), local, FastOptions()));
  EXPECT_EQ(trial->Steps().size(), 16u);
  EXPECT_EQ(fake_.total(), 0);
  EXPECT_EQ(env->s3_requests(), 0u);
}

TEST_F(S3EnvTest, WritesAreRefused) {
  auto env = MakeEnv();
  EXPECT_EQ(env->NewWritableFile("s3://bucket/x").status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(env->CreateDirs("s3://bucket/x").code(), StatusCode::kUnimplemented);
  EXPECT_EQ(env->RenameFile("s3://bucket/x", "s3://bucket/y").code(), StatusCode::kUnimplemented);
  EXPECT_EQ(env->RemoveFile("s3://bucket/x").code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace litmus::aws
