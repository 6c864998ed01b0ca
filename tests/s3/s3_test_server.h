// Helpers for the tests that talk to the real S3 test server (scripts/s3-test-server.sh, Ceph
// RADOS Gateway on 127.0.0.1, started by the CTest fixture `s3_server`): an S3Client for the
// test itself (uploads), the environment a `litmus` child needs to reach the server, and
// `litmus run` helpers shared by the integration and fault tests. Thread-compatible.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "litmus/aws/aws_client.h"
#include "litmus/aws/credentials.h"
#include "litmus/aws/http.h"
#include "litmus/aws/s3_client.h"

namespace litmus::testing {

inline constexpr char kS3AccessKey[] = "TESTKEY";
inline constexpr char kS3SecretKey[] = "TESTSECRET";

// http://127.0.0.1:<LITMUS_S3_TEST_PORT>
std::string S3Endpoint();

// A signed client of the test server, for uploading trials.
class S3TestClient {
 public:
  S3TestClient();
  aws::S3Client& s3() { return *s3_; }
  // Creates `bucket` (if needed) and uploads every file of `folder` to bucket/prefix/<relative>.
  void UploadTree(const std::string& bucket, const std::string& prefix, const std::filesystem::path& folder);
  void Upload(const std::string& bucket, const std::string& key, const std::filesystem::path& file);
  // Uploads the collections files of the trial in `folder`.
  void UploadCollections(const std::string& bucket, const std::string& prefix, const std::filesystem::path& folder);
  // Then its steps one by one as smdebug publishes them (a step's event file before its index
  // file; worker_1, if any, two steps behind worker_0), pausing between steps, then the end marker.
  void UploadStepByStep(const std::string& bucket, const std::string& prefix, const std::filesystem::path& folder,
                        std::chrono::milliseconds pause);

 private:
  std::unique_ptr<aws::HttpTransport> transport_;
  std::unique_ptr<aws::CredentialsProvider> credentials_;
  std::unique_ptr<aws::AwsClient> client_;
  std::unique_ptr<aws::S3Client> s3_;
};

// Environment for a `litmus` child process reaching `endpoint` with the test credentials (and
// nothing else of the chain: no profile, no instance metadata).
std::vector<std::pair<std::string, std::string>> LitmusS3Env(const std::string& endpoint = S3Endpoint(),
                                                             const std::string& secret = kS3SecretKey);

// `litmus run` writing its outputs under `out`.
std::vector<std::string> LitmusRunArgs(const std::filesystem::path& out, std::vector<std::string> extra);
// Steps of RuleEvaluationConditionMet events in out/events.jsonl.
std::vector<int64_t> FiredSteps(const std::filesystem::path& out);

}  // namespace litmus::testing
