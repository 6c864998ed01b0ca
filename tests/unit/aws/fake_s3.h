// FakeS3: an in-memory S3 (path-style) behind the HttpTransport interface, for unit tests of
// S3Client, S3Env and TrialEnv without a server: ListObjectsV2 (prefix, start-after,
// continuation-token, max-keys, encoding-type=url), GET with Range, HEAD, PUT, DELETE, bucket creation, the
// NoSuchBucket/NoSuchKey/InvalidAccessKeyId errors, and per-kind request counters. It checks that
// each request is signed with the expected access key and carries the body's real SHA-256 in
// x-amz-content-sha256 (signatures themselves are verified by the real server in tests/s3).
// Thread-safety: Send and the accessors may be called concurrently.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "litmus/aws/http.h"

namespace litmus::testing {

class FakeS3 final : public aws::HttpTransport {
 public:
  explicit FakeS3(std::string access_key_id = "AKIDFAKE") : access_key_id_(std::move(access_key_id)) {}

  StatusOr<aws::HttpResponse> Send(const aws::HttpRequest& request) override;

  void CreateBucket(const std::string& bucket);
  void PutObject(const std::string& bucket, const std::string& key, std::string content);
  // Copies every file of a local folder to bucket/prefix/<relative path> (for fixtures).
  void PutTree(const std::string& bucket, const std::string& prefix, const std::string& folder);

  // false: answer listings as a store without encoding-type support does (raw keys, entity-escaped,
  // and no EncodingType element), whatever the client asks.
  void set_url_encoding_supported(bool supported);

  // Requests by kind: "list", "get", "head", "put", "delete", "other"; and all of them.
  int count(const std::string& kind) const;
  int total() const;
  void ResetCounts();

 private:
  aws::HttpResponse Handle(const aws::HttpRequest& request);

  const std::string access_key_id_;
  mutable std::mutex mu_;
  std::map<std::string, std::map<std::string, std::string>> buckets_;  // bucket -> key -> content
  std::map<std::string, int> counts_;
  bool url_encoding_supported_ = true;
};

}  // namespace litmus::testing
