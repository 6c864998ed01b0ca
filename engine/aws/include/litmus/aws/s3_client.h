// S3 REST operations over an AwsClient (signing and retries come from it): ListObjectsV2 pages,
// ranged GET, HEAD, PUT, DELETE, bucket creation; s3:// URI parsing and bucket-name checks.
// Error messages name the bucket and key (never secrets). Thread-safety: every method may be
// called concurrently (the AwsClient is thread-safe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/aws/aws_client.h"
#include "litmus/status.h"

namespace litmus::aws {

struct S3Location {
  std::string bucket;
  std::string key;  // may be empty (the bucket's root); no leading '/'
};

bool IsS3Uri(std::string_view path);  // starts with "s3://"
// "s3://bucket/some/key" -> {bucket, "some/key"}. InvalidArgument for a missing or invalid
// bucket name (S3's rules: 3-63 characters of a-z 0-9 . -, starting and ending with a letter or
// digit, no "..", not an IP address).
StatusOr<S3Location> ParseS3Uri(std::string_view uri);
Status ValidateBucketName(std::string_view bucket);
std::string S3Uri(std::string_view bucket, std::string_view key);  // "s3://bucket/key"

struct S3Object {
  std::string key;
  uint64_t size = 0;
};

struct S3ListPage {
  std::vector<S3Object> objects;
  bool truncated = false;
  std::string next_continuation_token;  // set when truncated
};

// Parses a ListObjectsV2 answer (ListBucketResult). Unavailable if it is not one (e.g. a proxy's
// page), so the caller may retry.
StatusOr<S3ListPage> ParseListObjectsV2(std::string_view xml);

enum class S3Addressing {
  kPath,           // http://endpoint/bucket/key (S3-compatible stores, endpoint overrides)
  kVirtualHosted,  // https://bucket.s3.region.amazonaws.com/key; path-style for names with dots,
                   // which would not match the endpoint's TLS certificate
};

class S3Client {
 public:
  // `client` is borrowed (service "s3"); its endpoint is the base URL without the bucket.
  S3Client(AwsClient* client, S3Addressing addressing);

  // One ListObjectsV2 request: keys under `prefix`, after `start_after` (or continuing from
  // `continuation_token`), at most `max_keys` (1..1000).
  StatusOr<S3ListPage> ListPage(const std::string& bucket, const std::string& prefix, const std::string& start_after,
                                const std::string& continuation_token, int max_keys = 1000);
  // Every key under `prefix` that sorts after `start_after`, in key order, following continuation
  // tokens; appended to `out`.
  Status ListAll(const std::string& bucket, const std::string& prefix, const std::string& start_after,
                 std::vector<S3Object>* out);
  // Size of the object, nullopt if it does not exist.
  StatusOr<std::optional<uint64_t>> Head(const std::string& bucket, const std::string& key);
  // Reads exactly the bytes [offset, offset + out.size()) (fewer at the end of the object) with one
  // ranged GET; returns how many were read. NotFound if the object does not exist.
  StatusOr<size_t> GetRange(const std::string& bucket, const std::string& key, uint64_t offset,
                            std::span<std::byte> out);
  StatusOr<std::string> GetObject(const std::string& bucket, const std::string& key);
  Status Put(const std::string& bucket, const std::string& key, std::string_view body);
  Status Delete(const std::string& bucket, const std::string& key);
  Status CreateBucket(const std::string& bucket);

  AwsClient* aws() const { return client_; }

 private:
  std::string Url(const std::string& bucket, const std::string& key) const;
  Status ErrorStatus(const HttpResponse& response, std::string_view operation, const std::string& bucket,
                     const std::string& key) const;

  AwsClient* client_;
  S3Addressing addressing_;
};

}  // namespace litmus::aws
