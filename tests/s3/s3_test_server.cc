// Helpers for tests against the S3 test server (s3_test_server.h).
#include "s3/s3_test_server.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "litmus/format/trial_layout.h"
#include "support/run_process.h"

namespace litmus::testing {

std::string S3Endpoint() { return "http://127.0.0.1:" + std::to_string(LITMUS_S3_TEST_PORT); }

S3TestClient::S3TestClient()
    : transport_(aws::NewCurlTransport()),
      credentials_(aws::StaticCredentials(
          {.access_key_id = kS3AccessKey, .secret_access_key = kS3SecretKey, .session_token = "", .expiration = {}})),
      client_(std::make_unique<aws::AwsClient>(transport_.get(), credentials_.get(), "us-east-1", "s3", S3Endpoint())),
      s3_(std::make_unique<aws::S3Client>(client_.get(), aws::S3Addressing::kPath)) {}

void S3TestClient::Upload(const std::string& bucket, const std::string& key, const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  const Status put = s3_->Put(bucket, key, content.str());
  ASSERT_TRUE(put.ok()) << put.ToString();
}

void S3TestClient::UploadTree(const std::string& bucket, const std::string& prefix, const std::filesystem::path& folder) {
  const Status created = s3_->CreateBucket(bucket);
  ASSERT_TRUE(created.ok()) << created.ToString();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (!entry.is_regular_file()) continue;
    Upload(bucket, prefix + "/" + std::filesystem::relative(entry.path(), folder).generic_string(), entry.path());
  }
}

void S3TestClient::UploadCollections(const std::string& bucket, const std::string& prefix,
                                     const std::filesystem::path& folder) {
  const Status created = s3_->CreateBucket(bucket);
  ASSERT_TRUE(created.ok()) << created.ToString();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder / "collections")) {
    if (entry.is_regular_file()) {
      Upload(bucket, prefix + "/" + std::filesystem::relative(entry.path(), folder).generic_string(), entry.path());
    }
  }
}

void S3TestClient::UploadStepByStep(const std::string& bucket, const std::string& prefix,
                                    const std::filesystem::path& folder, std::chrono::milliseconds pause) {
  std::vector<int64_t> steps;
  for (const auto& entry : std::filesystem::directory_iterator(folder / "events")) {
    steps.push_back(std::stoll(entry.path().filename().string()));
  }
  std::sort(steps.begin(), steps.end());
  auto upload = [&](int64_t step, const std::string& worker) {
    for (const std::string& relative : {layout::EventFilePath(step, worker), layout::IndexFilePath(step, worker)}) {
      if (std::filesystem::exists(folder / relative)) Upload(bucket, prefix + "/" + relative, folder / relative);
    }
  };
  for (size_t i = 0; i < steps.size() + 2; ++i) {
    if (i < steps.size()) upload(steps[i], "worker_0");
    if (i >= 2) upload(steps[i - 2], "worker_1");
    std::this_thread::sleep_for(pause);
  }
  Upload(bucket, prefix + "/" + std::string(layout::kEndOfJobFile), folder / layout::kEndOfJobFile);
}

std::vector<std::pair<std::string, std::string>> LitmusS3Env(const std::string& endpoint, const std::string& secret) {
  return {{"AWS_ACCESS_KEY_ID", kS3AccessKey},
          {"AWS_SECRET_ACCESS_KEY", secret},
          {"AWS_SESSION_TOKEN", ""},
          {"AWS_PROFILE", ""},
          {"AWS_REGION", "us-east-1"},
          {"AWS_ENDPOINT_URL_S3", endpoint},
          {"AWS_ENDPOINT_URL", ""},
          {"AWS_EC2_METADATA_DISABLED", "true"},
          {"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}};
}

std::vector<std::string> LitmusRunArgs(const std::filesystem::path& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {LitmusBinary(), "run", "--output-dir", out.string(), "--message-file",
                                   (out / "message").string(), "--failure-file", (out / "failure").string(),
                                   "--poll-interval-ms", "50"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<int64_t> FiredSteps(const std::filesystem::path& out) {
  std::vector<int64_t> steps;
  std::ifstream in(out / "events.jsonl");
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json event = nlohmann::json::parse(line);
    if (event["event"] == "RuleEvaluationConditionMet") steps.push_back(event["step"].get<int64_t>());
  }
  return steps;
}

}  // namespace litmus::testing
